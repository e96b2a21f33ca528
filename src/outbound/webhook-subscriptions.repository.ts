import { Injectable } from '@nestjs/common';
import { recordAuditedChange } from '../audit/audit-chain';
import { PII_COLUMNS, PiiCipher } from '../common/crypto/pii-cipher';
import { afterCursor } from '../common/pagination';
import { PrismaService } from '../database/prisma.service';
import type { OutboxMessage, WebhookSubscription } from '../generated/prisma/client';
import type { OutboxMessageStatus } from './webhook-subscription.dto';

/** Last error written on the pending messages of a subscription when it is deleted. */
export const DISABLED_ERROR = 'subscription deleted before delivery';

/**
 * Database access for subscriptions and, per subscription, their outbox messages (the API's side).
 * The signing secret is stored encrypted (PiiCipher) and returned decrypted; `reencryptSecrets`
 * moves stored secrets to the current key.
 */
@Injectable()
export class WebhookSubscriptionsRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly pii: PiiCipher,
  ) {}

  /** Stores a new subscription, `secret` (plaintext) encrypted. */
  async create(data: {
    clientId: string;
    url: string;
    secret: string;
    eventTypes: string[];
    description: string | null;
  }): Promise<WebhookSubscription> {
    const secret = this.pii.seal(data.secret, PII_COLUMNS.webhookSubscriptionSecret);
    return this.prisma.$transaction(async (tx) => {
      const row = await tx.webhookSubscription.create({ data: { ...data, secret } });
      await recordAuditedChange(tx, row.id);
      return this.open(row);
    });
  }

  /** The subscription if it belongs to `clientId`, else null (another client's is not found either). */
  async findOwned(id: string, clientId: string): Promise<WebhookSubscription | null> {
    const row = await this.prisma.webhookSubscription.findFirst({ where: { id, clientId } });
    return row ? this.open(row) : null;
  }

  /** `limit + 1` of the client's subscriptions after the cursor, newest first. */
  async listOwned(
    clientId: string,
    includeDisabled: boolean,
    cursor: string | undefined,
    limit: number,
  ): Promise<WebhookSubscription[]> {
    const rows = await this.prisma.webhookSubscription.findMany({
      where: { clientId, ...(includeDisabled ? {} : { disabledAt: null }), ...afterCursor(cursor) },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: limit + 1,
    });
    return rows.map((row) => this.open(row));
  }

  /**
   * Re-encrypts with the current key up to `limit` subscription secrets, in id order after
   * `afterId`, that are legacy plaintext or under an older key; each written only if unchanged since
   * read. Returns the last id looked at (null when none is left) and how many were rewritten.
   */
  async reencryptSecrets(afterId: string | null, limit: number): Promise<{ lastId: string | null; rewritten: number }> {
    const rows = await this.prisma.$queryRaw<Array<{ id: string; secret: string }>>`
      SELECT id, secret FROM webhook_subscriptions
      WHERE (${afterId}::uuid IS NULL OR id > ${afterId}::uuid) AND secret NOT LIKE ${`${this.pii.currentPrefix}%`}
      ORDER BY id
      LIMIT ${limit}`;
    let rewritten = 0;
    for (const row of rows) {
      const plain = this.pii.open(row.secret, PII_COLUMNS.webhookSubscriptionSecret);
      const { count } = await this.prisma.webhookSubscription.updateMany({
        where: { id: row.id, secret: row.secret },
        data: { secret: this.pii.seal(plain, PII_COLUMNS.webhookSubscriptionSecret) },
      });
      rewritten += count;
    }
    return { lastId: rows.length ? rows[rows.length - 1].id : null, rewritten };
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
      return this.open(await db.webhookSubscription.findUniqueOrThrow({ where: { id } }));
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
   * status code and error are kept until the next attempt), with the request's audit event
   * (`webhook_subscription.retry_message`: target the subscription, the message in details) in the
   * same transaction. Returns null when it was not `failed` (nothing written).
   */
  requeueFailed(subscriptionId: string, id: string): Promise<OutboxMessage | null> {
    return this.prisma.$transaction(async (tx) => {
      const { count } = await tx.outboxMessage.updateMany({
        where: { id, subscriptionId, status: 'failed' },
        data: { status: 'pending', attempts: 0, nextAttemptAt: new Date() },
      });
      if (count === 0) return null;
      const row = await tx.outboxMessage.findUnique({ where: { id } });
      await recordAuditedChange(tx, subscriptionId, { messageId: id });
      return row;
    });
  }

  /** The row with its secret decrypted (a legacy plaintext secret read as it is). */
  private open(row: WebhookSubscription): WebhookSubscription {
    return { ...row, secret: this.pii.open(row.secret, PII_COLUMNS.webhookSubscriptionSecret) };
  }
}
