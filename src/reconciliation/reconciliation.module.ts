import { Module } from '@nestjs/common';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { ReconciliationService } from './reconciliation.service';

@Module({ imports: [WebhooksModule], providers: [ReconciliationService], exports: [ReconciliationService] })
export class ReconciliationModule {}
