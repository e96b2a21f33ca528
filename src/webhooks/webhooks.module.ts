import { Module } from '@nestjs/common';
import { CollectionsModule } from '../collections/collections.module';
import { InboxRepository } from './inbox.repository';
import { WebhookHandlerRegistry } from './webhook-handlers';
import { WebhooksController } from './webhooks.controller';
import { WebhooksService } from './webhooks.service';

/** Provider callbacks: the signed receiver, the inbox, and the registry domain modules add their event handlers to. */
@Module({
  imports: [CollectionsModule],
  controllers: [WebhooksController],
  providers: [InboxRepository, WebhooksService, WebhookHandlerRegistry],
  exports: [WebhooksService, WebhookHandlerRegistry],
})
export class WebhooksModule {}
