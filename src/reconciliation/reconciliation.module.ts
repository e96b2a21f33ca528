import { Module } from '@nestjs/common';
import { CardsModule } from '../cards/cards.module';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { ExpiryService } from './expiry.service';
import { ReconciliationService } from './reconciliation.service';

@Module({
  imports: [WebhooksModule, CardsModule],
  providers: [ReconciliationService, ExpiryService],
  exports: [ReconciliationService, ExpiryService],
})
export class ReconciliationModule {}
