import { Module } from '@nestjs/common';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { ExpiryService } from './expiry.service';
import { ReconciliationService } from './reconciliation.service';

@Module({
  imports: [WebhooksModule],
  providers: [ReconciliationService, ExpiryService],
  exports: [ReconciliationService, ExpiryService],
})
export class ReconciliationModule {}
