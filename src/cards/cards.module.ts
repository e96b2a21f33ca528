import { Module, OnModuleInit } from '@nestjs/common';
import { IdempotencyService } from '../common/idempotency/idempotency.service';
import { CustomersModule } from '../customers/customers.module';
import { LedgerService } from '../transactions/ledger.service';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { CardEventsHandler } from './card-events.handler';
import { CardHoldersController } from './card-holders.controller';
import { CardHoldersService } from './card-holders.service';
import { CardLedgerService } from './card-ledger.service';
import { CardTransactionsService, toCardTransactionDto } from './card-transactions.service';
import { CardsController } from './cards.controller';
import { CardsRepository } from './cards.repository';
import { CardsService } from './cards.service';

/** Virtual cards: card holders, cards, card money movements, and the provider's card callbacks. */
@Module({
  imports: [CustomersModule, WebhooksModule],
  controllers: [CardHoldersController, CardsController],
  providers: [
    CardsRepository,
    CardLedgerService,
    CardHoldersService,
    CardsService,
    CardTransactionsService,
    CardEventsHandler,
  ],
  exports: [CardsService, CardTransactionsService],
})
export class CardsModule implements OnModuleInit {
  constructor(
    private readonly idempotency: IdempotencyService,
    private readonly cards: CardsService,
    private readonly ledger: LedgerService,
  ) {}

  /** A retry of a card creation, top-up or withdrawal whose process died is answered from its row as it is now. */
  onModuleInit(): void {
    this.idempotency.registerResource('card', (id) => this.cards.get(id));
    const movement = async (id: string) => toCardTransactionDto(await this.ledger.get(id));
    this.idempotency.registerResource('card_topup', movement);
    this.idempotency.registerResource('card_withdrawal', movement);
  }
}
