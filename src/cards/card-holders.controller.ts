import { Body, Controller, Get, Param, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Audited } from '../audit/audited.decorator';
import { RequireScopes } from '../auth/auth.decorators';
import { ApiConflict, ApiNotFound, ApiProviderErrors, ApiValidationErrors } from '../common/api-responses';
import { ParseIdPipe } from '../common/validation';
import { CardHolderDto, CreateCardHolderDto } from './card-holder.dto';
import { CardHoldersService } from './card-holders.service';

@ApiTags('cards')
@Controller('v1/card-holders')
export class CardHoldersController {
  constructor(private readonly holders: CardHoldersService) {}

  @Post()
  @Audited('card_holder.create', 'card_holder')
  @RequireScopes('cards:write')
  @ApiOperation({
    summary: 'Register a customer as a card holder (provider registercarduser; KYC decided later by callback)',
  })
  @ApiCreatedResponse({ type: CardHolderDto })
  @ApiValidationErrors()
  @ApiNotFound('customer')
  @ApiConflict(
    'conflict: the customer already has a card holder that is not failed or unknown (created: a registration in flight).',
  )
  @ApiProviderErrors()
  register(@Body() body: CreateCardHolderDto): Promise<CardHolderDto> {
    return this.holders.register(body);
  }

  @Get(':id')
  @RequireScopes('cards:read')
  @ApiOperation({ summary: 'Get a card holder (KYC status)' })
  @ApiOkResponse({ type: CardHolderDto })
  @ApiValidationErrors()
  @ApiNotFound('card holder')
  get(@Param('id', ParseIdPipe()) id: string): Promise<CardHolderDto> {
    return this.holders.get(id);
  }
}
