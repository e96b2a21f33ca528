import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { AuthenticatedClient } from '../auth/auth.decorators';
import { BusinessRuleError, ConflictError, ErrorCode, NotFoundError, ValidationError } from '../common/errors';
import { Page, toPage } from '../common/pagination';
import type { Env } from '../config/env';
import type { OutboxMessage, WebhookSubscription } from '../generated/prisma/client';
import { hostProblem, OutboundDns } from './outbound-address';
import { generateSigningSecret } from './standard-webhooks';
import { subscriptionUrlProblem } from './subscription-url';
import {
  CreatedWebhookSubscriptionDto,
  CreateWebhookSubscriptionDto,
  GatewayEventDto,
  ListOutboxMessagesQueryDto,
  ListWebhookSubscriptionsQueryDto,
  OutboxMessageDto,
  WebhookSubscriptionDto,
} from './webhook-subscription.dto';
import { WebhookSubscriptionsRepository } from './webhook-subscriptions.repository';

/** The gateway's answer for a subscription row; never the secret. */
export function toWebhookSubscriptionDto(row: WebhookSubscription): WebhookSubscriptionDto {
  return {
    id: row.id,
    url: row.url,
    eventTypes: row.eventTypes,
    description: row.description,
    active: row.disabledAt === null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    disabledAt: row.disabledAt?.toISOString() ?? null,
  };
}

export function toOutboxMessageDto(row: OutboxMessage): OutboxMessageDto {
  return {
    id: row.id,
    subscriptionId: row.subscriptionId,
    eventType: row.eventType,
    status: row.status,
    attempts: row.attempts,
    nextAttemptAt: row.status === 'pending' ? row.nextAttemptAt.toISOString() : null,
    lastStatusCode: row.lastStatusCode,
    lastError: row.lastError,
    payload: row.payload as unknown as GatewayEventDto,
    createdAt: row.createdAt.toISOString(),
    deliveredAt: row.deliveredAt?.toISOString() ?? null,
  };
}

/**
 * Outbound event subscriptions of internal apps: each API client registers, lists and deletes its
 * own (another client's answer 404, as if absent), and reads how the deliveries to them went.
 */
@Injectable()
export class WebhookSubscriptionsService {
  constructor(
    private readonly subscriptions: WebhookSubscriptionsRepository,
    private readonly config: ConfigService<Env, true>,
    private readonly dns: OutboundDns,
  ) {}

  /**
   * Registers a subscription with a new signing secret, returned in this answer only.
   * `eventTypes` empty or absent = every event type.
   * @throws ValidationError (400) for a URL refused by subscription-url.ts (e.g. plain http to a public host);
   * BusinessRuleError (422 `business_rule_failed`, `errors` naming `url`) for a well-formed URL whose host
   * is or resolves to an address outbound-address.ts refuses (loopback, private, link-local,
   * metadata, …, unless OUTBOUND_ALLOW_PRIVATE), or does not resolve: that depends on the network
   * and the deployment, not on the body, so the API description cannot state it as a schema.
   */
  async create(
    client: AuthenticatedClient,
    input: CreateWebhookSubscriptionDto,
  ): Promise<CreatedWebhookSubscriptionDto> {
    const problem = subscriptionUrlProblem(input.url, this.config.get('NODE_ENV', { infer: true }) === 'production');
    if (problem) throw new ValidationError([{ field: 'url', message: problem }]);
    const allowPrivate = this.config.get('OUTBOUND_ALLOW_PRIVATE', { infer: true });
    const addressProblem = await hostProblem(new URL(input.url).hostname, allowPrivate, (host) =>
      this.dns.resolve(host),
    );
    if (addressProblem) throw new BusinessRuleError([{ field: 'url', message: addressProblem }]);
    const secret = generateSigningSecret();
    const row = await this.subscriptions.create({
      clientId: client.id,
      url: input.url,
      secret,
      eventTypes: [...new Set(input.eventTypes ?? [])].sort(),
      description: input.description || null,
    });
    return { ...toWebhookSubscriptionDto(row), secret };
  }

  /** The client's subscriptions, newest first (keyset pagination); deleted ones only on request. */
  async list(
    client: AuthenticatedClient,
    query: ListWebhookSubscriptionsQueryDto,
  ): Promise<Page<WebhookSubscriptionDto>> {
    const limit = query.limit ?? 20;
    const rows = await this.subscriptions.listOwned(client.id, query.includeDisabled === true, query.cursor, limit);
    return toPage(rows, limit, toWebhookSubscriptionDto);
  }

  /** @throws NotFoundError (404) when absent or another client's. */
  async get(client: AuthenticatedClient, id: string): Promise<WebhookSubscriptionDto> {
    return toWebhookSubscriptionDto(await this.requireOwned(client, id));
  }

  /**
   * Deletes (disables) the subscription: nothing more is delivered to it, and its pending messages
   * become `failed` ("subscription deleted before delivery"). Repeating it changes nothing.
   * @throws NotFoundError (404) when absent or another client's.
   */
  async remove(client: AuthenticatedClient, id: string): Promise<WebhookSubscriptionDto> {
    await this.requireOwned(client, id);
    return toWebhookSubscriptionDto(await this.subscriptions.disable(id));
  }

  /**
   * The subscription's messages, newest first, with their delivery status, attempts, last status
   * code and last error; optionally only one status.
   * @throws NotFoundError (404) when the subscription is absent or another client's.
   */
  async messages(
    client: AuthenticatedClient,
    id: string,
    query: ListOutboxMessagesQueryDto,
  ): Promise<Page<OutboxMessageDto>> {
    await this.requireOwned(client, id);
    const limit = query.limit ?? 20;
    const rows = await this.subscriptions.listMessages(id, query.status, query.cursor, limit);
    return toPage(rows, limit, toOutboxMessageDto);
  }

  /**
   * Puts a `failed` message back to `pending`, due at once, with a fresh set of attempts.
   * @throws NotFoundError (404) for an unknown subscription or message (or another client's);
   * ConflictError (409 `conflict`) when the subscription is deleted; (409 `invalid_state_transition`)
   * when the message is not `failed`.
   */
  async retry(client: AuthenticatedClient, id: string, messageId: string): Promise<OutboxMessageDto> {
    const subscription = await this.requireOwned(client, id);
    const message = await this.subscriptions.findMessage(id, messageId);
    if (!message) throw new NotFoundError('Outbox message', messageId);
    if (subscription.disabledAt) {
      throw new ConflictError(`Webhook subscription ${id} is deleted; its messages are not delivered.`);
    }
    const requeued = await this.subscriptions.requeueFailed(id, messageId);
    if (!requeued) {
      throw new ConflictError(
        `Only a failed message can be retried; this one is ${message.status}.`,
        ErrorCode.InvalidStateTransition,
        { from: message.status, to: 'pending' },
      );
    }
    return toOutboxMessageDto(requeued);
  }

  private async requireOwned(client: AuthenticatedClient, id: string): Promise<WebhookSubscription> {
    const row = await this.subscriptions.findOwned(id, client.id);
    if (!row) throw new NotFoundError('Webhook subscription', id);
    return row;
  }
}
