import { Module } from '@nestjs/common';
import { CardsModule } from '../cards/cards.module';
import { SwapsModule } from '../swaps/swaps.module';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { ExpiryService } from './expiry.service';
import { ReconciliationRepository } from './reconciliation.repository';
import { ReconciliationService } from './reconciliation.service';

@Module({
  imports: [WebhooksModule, CardsModule, SwapsModule],
  providers: [ReconciliationService, ExpiryService, ReconciliationRepository],
  exports: [ReconciliationService, ExpiryService],
})
export class ReconciliationModule {}
