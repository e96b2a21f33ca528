import { Module } from '@nestjs/common';
import { CustomersModule } from '../customers/customers.module';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { CardEventsHandler } from './card-events';
import { CardHoldersController } from './card-holders.controller';
import { CardHoldersService } from './card-holders.service';
import { CardLedger } from './card-ledger';
import { CardTransactionsService } from './card-transactions.service';
import { CardsController } from './cards.controller';
import { CardsRepository } from './cards.repository';
import { CardsService } from './cards.service';

/** Virtual cards: card holders, cards, card money movements, and the provider's card callbacks. */
@Module({
  imports: [CustomersModule, WebhooksModule],
  controllers: [CardHoldersController, CardsController],
  providers: [
    CardsRepository,
    CardLedger,
    CardHoldersService,
    CardsService,
    CardTransactionsService,
    CardEventsHandler,
  ],
  exports: [CardsService, CardTransactionsService],
})
export class CardsModule {}
