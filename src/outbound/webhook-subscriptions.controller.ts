import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Audited } from '../audit/audited.decorator';
import { type AuthenticatedClient, CurrentClient, RequireScopes } from '../auth/auth.decorators';
import { ApiBusinessRule, ApiConflict, ApiNotFound, ApiValidationErrors } from '../common/api-responses';
import { ParseIdPipe } from '../common/validation';
import {
  CreatedWebhookSubscriptionDto,
  CreateWebhookSubscriptionDto,
  ListOutboxMessagesQueryDto,
  ListWebhookSubscriptionsQueryDto,
  OutboxMessageDto,
  OutboxMessagePageDto,
  WebhookSubscriptionDto,
  WebhookSubscriptionPageDto,
} from './webhook-subscription.dto';
import { WebhookSubscriptionsService } from './webhook-subscriptions.service';

@ApiTags('webhook-subscriptions')
@Controller('v1/webhook-subscriptions')
export class WebhookSubscriptionsController {
  constructor(private readonly subscriptions: WebhookSubscriptionsService) {}

  @Post()
  @Audited('webhook_subscription.create', 'webhook_subscription')
  @RequireScopes('webhook-subscriptions:write')
  @ApiOperation({
    summary: 'Subscribe to gateway events (signed per Standard Webhooks); the signing secret is shown once',
  })
  @ApiCreatedResponse({ type: CreatedWebhookSubscriptionDto })
  @ApiValidationErrors()
  @ApiBusinessRule(
    'the URL is well formed, but its host does not resolve, or is or resolves to an address deliveries may not reach',
  )
  create(
    @CurrentClient() client: AuthenticatedClient,
    @Body() body: CreateWebhookSubscriptionDto,
  ): Promise<CreatedWebhookSubscriptionDto> {
    return this.subscriptions.create(client, body);
  }

  @Get()
  @RequireScopes('webhook-subscriptions:write')
  @ApiOperation({ summary: "List the caller's subscriptions, newest first (keyset pagination)" })
  @ApiOkResponse({ type: WebhookSubscriptionPageDto })
  @ApiValidationErrors()
  list(
    @CurrentClient() client: AuthenticatedClient,
    @Query() query: ListWebhookSubscriptionsQueryDto,
  ): Promise<WebhookSubscriptionPageDto> {
    return this.subscriptions.list(client, query);
  }

  @Get(':id')
  @RequireScopes('webhook-subscriptions:write')
  @ApiOperation({ summary: 'Get one of the caller’s subscriptions (without its secret)' })
  @ApiOkResponse({ type: WebhookSubscriptionDto })
  @ApiValidationErrors()
  @ApiNotFound('webhook subscription of this API client')
  get(
    @CurrentClient() client: AuthenticatedClient,
    @Param('id', ParseIdPipe()) id: string,
  ): Promise<WebhookSubscriptionDto> {
    return this.subscriptions.get(client, id);
  }

  @Delete(':id')
  @Audited('webhook_subscription.delete', 'webhook_subscription')
  @RequireScopes('webhook-subscriptions:write')
  @ApiOperation({
    summary: 'Delete (disable) a subscription: nothing more is delivered; pending messages become failed',
  })
  @ApiOkResponse({ type: WebhookSubscriptionDto })
  @ApiValidationErrors()
  @ApiNotFound('webhook subscription of this API client')
  remove(
    @CurrentClient() client: AuthenticatedClient,
    @Param('id', ParseIdPipe()) id: string,
  ): Promise<WebhookSubscriptionDto> {
    return this.subscriptions.remove(client, id);
  }

  @Get(':id/messages')
  @RequireScopes('webhook-subscriptions:write')
  @ApiOperation({
    summary: "A subscription's recent messages and how their delivery went, newest first (keyset pagination)",
  })
  @ApiOkResponse({ type: OutboxMessagePageDto })
  @ApiValidationErrors()
  @ApiNotFound('webhook subscription of this API client')
  messages(
    @CurrentClient() client: AuthenticatedClient,
    @Param('id', ParseIdPipe()) id: string,
    @Query() query: ListOutboxMessagesQueryDto,
  ): Promise<OutboxMessagePageDto> {
    return this.subscriptions.messages(client, id, query);
  }

  @Post(':id/messages/:messageId/retry')
  @Audited('webhook_subscription.retry_message', 'webhook_subscription')
  @HttpCode(200)
  @RequireScopes('webhook-subscriptions:write')
  @ApiOperation({ summary: 'Put a failed message back to pending, due at once, with a fresh set of attempts' })
  @ApiOkResponse({ type: OutboxMessageDto })
  @ApiValidationErrors()
  @ApiNotFound('webhook subscription of this API client, or message of it')
  @ApiConflict('invalid_state_transition: the message is not failed; conflict: the subscription is deleted.')
  retry(
    @CurrentClient() client: AuthenticatedClient,
    @Param('id', ParseIdPipe()) id: string,
    @Param('messageId', ParseIdPipe('messageId')) messageId: string,
  ): Promise<OutboxMessageDto> {
    return this.subscriptions.retry(client, id, messageId);
  }
}
