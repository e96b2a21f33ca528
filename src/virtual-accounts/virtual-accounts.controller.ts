import { Body, Controller, Get, Param, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Audited } from '../audit/audited.decorator';
import { RequireScopes } from '../auth/auth.decorators';
import { ApiNotFound, ApiProviderErrors, ApiValidationErrors } from '../common/api-responses';
import { ParseIdPipe } from '../common/validation';
import {
  CreateVirtualAccountDto,
  ListVirtualAccountsQueryDto,
  VirtualAccountDto,
  VirtualAccountPageDto,
} from './virtual-account.dto';
import { VirtualAccountsService } from './virtual-accounts.service';

@ApiTags('virtual-accounts')
@Controller('v1/virtual-accounts')
export class VirtualAccountsController {
  constructor(private readonly virtualAccounts: VirtualAccountsService) {}

  @Post()
  @Audited('virtual_account.create', 'virtual_account')
  @RequireScopes('virtual-accounts:write')
  @ApiOperation({ summary: 'Issue a virtual bank account to a customer (safehaven or providus; status active)' })
  @ApiCreatedResponse({ type: VirtualAccountDto })
  @ApiValidationErrors()
  @ApiNotFound('customer')
  @ApiProviderErrors()
  create(@Body() body: CreateVirtualAccountDto): Promise<VirtualAccountDto> {
    return this.virtualAccounts.create(body);
  }

  @Get(':id')
  @RequireScopes('virtual-accounts:read')
  @ApiOperation({ summary: 'Get a virtual account' })
  @ApiOkResponse({ type: VirtualAccountDto })
  @ApiValidationErrors()
  @ApiNotFound('virtual account')
  get(@Param('id', ParseIdPipe()) id: string): Promise<VirtualAccountDto> {
    return this.virtualAccounts.get(id);
  }

  @Get()
  @RequireScopes('virtual-accounts:read')
  @ApiOperation({ summary: 'List virtual accounts, newest first; filter by customer' })
  @ApiOkResponse({ type: VirtualAccountPageDto })
  @ApiValidationErrors()
  list(@Query() query: ListVirtualAccountsQueryDto): Promise<VirtualAccountPageDto> {
    return this.virtualAccounts.list(query);
  }
}
