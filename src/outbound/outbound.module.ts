import { Global, Module } from '@nestjs/common';
import { OutboundDns } from './outbound-address';
import { OutboxDeliveryService } from './outbox-delivery.service';
import { OutboxRepository } from './outbox.repository';
import { OutboxService } from './outbox.service';
import { WebhookSubscriptionsController } from './webhook-subscriptions.controller';
import { WebhookSubscriptionsRepository } from './webhook-subscriptions.repository';
import { WebhookSubscriptionsService } from './webhook-subscriptions.service';

/**
 * Outbound gateway events for internal apps: subscriptions (/v1/webhook-subscriptions), the outbox
 * (`OutboxService.publish`, inside the caller's database transaction) and its delivery worker
 * (Standard Webhooks signatures, retries with backoff). Global, so that the ledger and the domain
 * modules publish without importing it.
 */
@Global()
@Module({
  controllers: [WebhookSubscriptionsController],
  providers: [
    OutboxService,
    OutboxRepository,
    OutboundDns,
    OutboxDeliveryService,
    WebhookSubscriptionsService,
    WebhookSubscriptionsRepository,
  ],
  exports: [OutboxService, OutboxDeliveryService],
})
export class OutboundModule {}
