import { Module } from '@nestjs/common';
import { ReconciliationModule } from '../reconciliation/reconciliation.module';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { JobsService } from './jobs.service';

@Module({ imports: [ReconciliationModule, WebhooksModule], providers: [JobsService] })
export class JobsModule {}
