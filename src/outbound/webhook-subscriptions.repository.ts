import { Injectable } from '@nestjs/common';
import { recordAuditedChange } from '../audit/audit-chain';
import { afterCursor } from '../common/pagination';
import { PrismaService } from '../database/prisma.service';
import type { OutboxMessage, WebhookSubscription } from '../generated/prisma/client';
import type { OutboxMessageStatus } from './webhook-subscription.dto';

/** Last error written on the pending messages of a subscription when it is deleted. */
export const DISABLED_ERROR = 'subscription deleted before delivery';

/** Database access for subscriptions and, per subscription, their outbox messages (the API's side). */
@Injectable()
export class WebhookSubscriptionsRepository {
  constructor(private readonly prisma: PrismaService) {}

  create(data: {
    clientId: string;
    url: string;
    secret: string;
    eventTypes: string[];
    description: string | null;
  }): Promise<WebhookSubscription> {
    return this.prisma.$transaction(async (tx) => {
      const row = await tx.webhookSubscription.create({ data });
      await recordAuditedChange(tx, row.id);
      return row;
    });
  }

  /** The subscription if it belongs to `clientId`, else null (another client's is not found either). */
  findOwned(id: string, clientId: string): Promise<WebhookSubscription | null> {
    return this.prisma.webhookSubscription.findFirst({ where: { id, clientId } });
  }

  /** `limit + 1` of the client's subscriptions after the cursor, newest first. */
  listOwned(clientId: string, includeDisabled: boolean, cursor: string | undefined, limit: number) {
    return this.prisma.webhookSubscription.findMany({
      where: { clientId, ...(includeDisabled ? {} : { disabledAt: null }), ...afterCursor(cursor) },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: limit + 1,
    });
  }

  /**
   * Disables the subscription (once: a second call keeps the first `disabledAt`) and, in the same
   * transaction, marks its pending messages `failed` with DISABLED_ERROR so none is delivered.
   */
  disable(id: string): Promise<WebhookSubscription> {
    return this.prisma.$transaction(async (db) => {
      await db.webhookSubscription.updateMany({ where: { id, disabledAt: null }, data: { disabledAt: new Date() } });
      await recordAuditedChange(db, id);
      await db.outboxMessage.updateMany({
        where: { subscriptionId: id, status: 'pending' },
        data: { status: 'failed', lastError: DISABLED_ERROR },
      });
      return db.webhookSubscription.findUniqueOrThrow({ where: { id } });
    });
  }

  /** `limit + 1` messages of one subscription after the cursor, newest first. */
  listMessages(
    subscriptionId: string,
    status: OutboxMessageStatus | undefined,
    cursor: string | undefined,
    limit: number,
  ): Promise<OutboxMessage[]> {
    return this.prisma.outboxMessage.findMany({
      where: { subscriptionId, ...(status ? { status } : {}), ...afterCursor(cursor) },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: limit + 1,
    });
  }

  findMessage(subscriptionId: string, id: string): Promise<OutboxMessage | null> {
    return this.prisma.outboxMessage.findFirst({ where: { id, subscriptionId } });
  }

  /**
   * A `failed` message back to `pending`, due now, with a fresh count of attempts (its last
   * status code and error are kept until the next attempt). Returns null when it was not `failed`.
   */
  async requeueFailed(subscriptionId: string, id: string): Promise<OutboxMessage | null> {
    const { count } = await this.prisma.outboxMessage.updateMany({
      where: { id, subscriptionId, status: 'failed' },
      data: { status: 'pending', attempts: 0, nextAttemptAt: new Date() },
    });
    return count === 0 ? null : this.prisma.outboxMessage.findUnique({ where: { id } });
  }
}
