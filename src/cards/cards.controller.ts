import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Audited } from '../audit/audited.decorator';
import { RequireScopes } from '../auth/auth.decorators';
import {
  ApiConflict,
  ApiNotFound,
  ApiProviderErrors,
  ApiUnsettledProviderErrors,
  ApiValidationErrors,
} from '../common/api-responses';
import { Idempotent } from '../common/idempotency/idempotent.decorator';
import { ParseIdPipe } from '../common/validation';
import { CardTransactionsService } from './card-transactions.service';
import {
  CardAmountDto,
  CardTopUpDto,
  CardDto,
  CardPageDto,
  CardTransactionDto,
  CardTransactionPageDto,
  CreateCardDto,
  ListCardsQueryDto,
  ListCardTransactionsQueryDto,
} from './card.dto';
import { CardsService } from './cards.service';

const REFUSED_MOVE =
  'invalid_state_transition: allowed are active → frozen, frozen → active, active | frozen → terminated; or another ' +
  'move of this card is in flight (`transitionInFlight` names it). The provider is not called.';

/**
 * Virtual cards. Answers are masked (last4, brand, expiry, status, balance): the full card number
 * and CVV are never stored nor answered. Revealing them is not offered (see CardsService); the
 * `cards:reveal` scope is reserved.
 */
@ApiTags('cards')
@Controller('v1/cards')
export class CardsController {
  constructor(
    private readonly cards: CardsService,
    private readonly transactions: CardTransactionsService,
  ) {}

  @Post()
  @Audited('card.create', 'card')
  @RequireScopes('cards:write')
  @Idempotent()
  @ApiOperation({ summary: 'Create a virtual card for a card holder, with initial funding (status pending)' })
  @ApiCreatedResponse({ type: CardDto })
  @ApiValidationErrors()
  @ApiNotFound('customer')
  @ApiConflict('conflict: the customer has no card holder (or its KYC failed), or the reference is taken.')
  @ApiUnsettledProviderErrors()
  create(@Body() body: CreateCardDto): Promise<CardDto> {
    return this.cards.create(body);
  }

  @Get()
  @RequireScopes('cards:read')
  @ApiOperation({ summary: 'List cards, newest first; filter by customer and status' })
  @ApiOkResponse({ type: CardPageDto })
  @ApiValidationErrors()
  list(@Query() query: ListCardsQueryDto): Promise<CardPageDto> {
    return this.cards.list(query);
  }

  @Get(':id')
  @RequireScopes('cards:read')
  @ApiOperation({ summary: 'Get a card (masked: last4, brand, expiry, status, balance)' })
  @ApiOkResponse({ type: CardDto })
  @ApiValidationErrors()
  @ApiNotFound('card')
  get(@Param('id', ParseIdPipe()) id: string): Promise<CardDto> {
    return this.cards.get(id);
  }

  @Post(':id/freeze')
  @Audited('card.freeze', 'card')
  @HttpCode(200)
  @RequireScopes('cards:write')
  @ApiOperation({ summary: 'Freeze an active card' })
  @ApiOkResponse({ type: CardDto })
  @ApiValidationErrors()
  @ApiNotFound('card')
  @ApiConflict(REFUSED_MOVE)
  @ApiProviderErrors()
  freeze(@Param('id', ParseIdPipe()) id: string): Promise<CardDto> {
    return this.cards.act(id, 'freeze');
  }

  @Post(':id/unfreeze')
  @Audited('card.unfreeze', 'card')
  @HttpCode(200)
  @RequireScopes('cards:write')
  @ApiOperation({ summary: 'Unfreeze a frozen card' })
  @ApiOkResponse({ type: CardDto })
  @ApiValidationErrors()
  @ApiNotFound('card')
  @ApiConflict(REFUSED_MOVE)
  @ApiProviderErrors()
  unfreeze(@Param('id', ParseIdPipe()) id: string): Promise<CardDto> {
    return this.cards.act(id, 'unfreeze');
  }

  @Post(':id/terminate')
  @Audited('card.terminate', 'card')
  @HttpCode(200)
  @RequireScopes('cards:write')
  @ApiOperation({ summary: 'Terminate an active or frozen card (final)' })
  @ApiOkResponse({ type: CardDto })
  @ApiValidationErrors()
  @ApiNotFound('card')
  @ApiConflict(REFUSED_MOVE)
  @ApiProviderErrors()
  terminate(@Param('id', ParseIdPipe()) id: string): Promise<CardDto> {
    return this.cards.act(id, 'terminate');
  }

  @Post(':id/top-ups')
  @Audited('card.top_up', 'card')
  @RequireScopes('cards:write')
  @Idempotent({ claimInWork: true })
  @ApiOperation({ summary: 'Top up a card: 300–250000 USD minor units (3.00–2,500.00 USD); status pending' })
  @ApiCreatedResponse({ type: CardTransactionDto })
  @ApiValidationErrors()
  @ApiNotFound('card')
  @ApiConflict('conflict: the card is not active (frozen, terminated or not created yet), or a terminate is in flight.')
  @ApiUnsettledProviderErrors()
  topUp(@Param('id', ParseIdPipe()) id: string, @Body() body: CardTopUpDto): Promise<CardTransactionDto> {
    return this.transactions.topUp(id, body.amount);
  }

  @Post(':id/withdrawals')
  @Audited('card.withdraw', 'card')
  @RequireScopes('cards:write')
  @Idempotent({ claimInWork: true })
  @ApiOperation({ summary: 'Withdraw from a card back to the wallet (USD minor units); status pending' })
  @ApiCreatedResponse({ type: CardTransactionDto })
  @ApiValidationErrors()
  @ApiNotFound('card')
  @ApiConflict('conflict: the card is not active (frozen, terminated or not created yet), or a terminate is in flight.')
  @ApiUnsettledProviderErrors()
  withdraw(@Param('id', ParseIdPipe()) id: string, @Body() body: CardAmountDto): Promise<CardTransactionDto> {
    return this.transactions.withdraw(id, body.amount);
  }

  @Get(':id/transactions')
  @RequireScopes('cards:read')
  @ApiOperation({
    summary: "List a card's movements, newest first; the first page is refreshed from the provider's listing",
  })
  @ApiOkResponse({ type: CardTransactionPageDto })
  @ApiValidationErrors()
  @ApiNotFound('card')
  @ApiProviderErrors()
  listTransactions(
    @Param('id', ParseIdPipe()) id: string,
    @Query() query: ListCardTransactionsQueryDto,
  ): Promise<CardTransactionPageDto> {
    return this.transactions.list(id, query);
  }
}
