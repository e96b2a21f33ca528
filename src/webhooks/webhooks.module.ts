import { Module } from '@nestjs/common';
import { WebhookHandlerRegistry } from './webhook-handlers';
import { WebhooksController } from './webhooks.controller';
import { WebhooksService } from './webhooks.service';

/** Provider callbacks: the signed receiver, the inbox, and the registry domain modules add their event handlers to. */
@Module({
  controllers: [WebhooksController],
  providers: [WebhooksService, WebhookHandlerRegistry],
  exports: [WebhooksService, WebhookHandlerRegistry],
})
export class WebhooksModule {}
