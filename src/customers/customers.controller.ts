import { Body, Controller, Get, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Audited } from '../audit/audited.decorator';
import { RequireScopes } from '../auth/auth.decorators';
import { ApiConflict, ApiNotFound, ApiProviderErrors, ApiValidationErrors } from '../common/api-responses';
import { ParseIdPipe } from '../common/validation';
import {
  CreateCustomerDto,
  CustomerDto,
  CustomerPageDto,
  GetCustomerQueryDto,
  ListCustomersQueryDto,
  UpdateCustomerDto,
} from './customer.dto';
import { CustomersService } from './customers.service';

@ApiTags('customers')
@Controller('v1/customers')
export class CustomersController {
  constructor(private readonly customers: CustomersService) {}

  @Post()
  @Audited('customer.create', 'customer')
  @RequireScopes('customers:write')
  @ApiOperation({ summary: 'Create a customer at the provider and store it' })
  @ApiCreatedResponse({ type: CustomerDto })
  @ApiValidationErrors()
  @ApiConflict('conflict: a customer with this email exists (the provider is not called).')
  @ApiProviderErrors()
  create(@Body() body: CreateCustomerDto): Promise<CustomerDto> {
    return this.customers.create(body);
  }

  @Patch(':id')
  @Audited('customer.update', 'customer')
  @RequireScopes('customers:write')
  @ApiOperation({ summary: 'Update a customer at the provider and locally' })
  @ApiOkResponse({ type: CustomerDto })
  @ApiValidationErrors()
  @ApiNotFound('customer')
  @ApiConflict('conflict: another customer has this email.')
  @ApiProviderErrors()
  update(@Param('id', ParseIdPipe()) id: string, @Body() body: UpdateCustomerDto): Promise<CustomerDto> {
    return this.customers.update(id, body);
  }

  @Get(':id')
  @RequireScopes('customers:read')
  @ApiOperation({
    summary: 'Get a customer',
    description: "A local read; with `refresh=true` the provider's record is fetched first and changes are stored.",
  })
  @ApiOkResponse({ type: CustomerDto })
  @ApiValidationErrors()
  @ApiNotFound('customer')
  @ApiProviderErrors()
  get(@Param('id', ParseIdPipe()) id: string, @Query() query: GetCustomerQueryDto): Promise<CustomerDto> {
    return this.customers.get(id, query.refresh === true);
  }

  @Get()
  @RequireScopes('customers:read')
  @ApiOperation({ summary: 'List customers, newest first (keyset pagination)' })
  @ApiOkResponse({ type: CustomerPageDto })
  @ApiValidationErrors()
  list(@Query() query: ListCustomersQueryDto): Promise<CustomerPageDto> {
    return this.customers.list(query);
  }
}
