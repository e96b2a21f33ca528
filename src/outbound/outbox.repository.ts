import { Injectable } from '@nestjs/common';
import { PII_COLUMNS, PiiCipher } from '../common/crypto/pii-cipher';
import { PrismaService } from '../database/prisma.service';
import { Prisma } from '../generated/prisma/client';

type Db = Prisma.TransactionClient | PrismaService;

/**
 * SQL condition on `webhook_subscriptions s`: active, and taking `eventType` (naming it, or naming
 * no type at all). The one statement of who receives an event, also used inside the ledger's move.
 * `eventType` is the type itself, or an SQL expression of type text (a column of a batch's rows).
 */
export function subscribedTo(eventType: string | Prisma.Sql): Prisma.Sql {
  const type = typeof eventType === 'string' ? Prisma.sql`${eventType}::text` : eventType;
  return Prisma.sql`s.disabled_at IS NULL AND (cardinality(s.event_types) = 0 OR ${type} = ANY(s.event_types))`;
}

/** A message taken for one delivery attempt, with what is needed to send it. */
export interface ClaimedMessage {
  id: string;
  subscriptionId: string;
  eventType: string;
  payload: unknown;
  /** Attempts including this one. */
  attempts: number;
  /** The lease: `next_attempt_at` while this attempt runs; results are written only while it holds. */
  leaseUntil: Date;
  url: string;
  /** The subscription's signing secret, decrypted (stored encrypted: src/common/crypto). */
  secret: string;
}

/** Database access for the outbox (the delivery side): writing messages, leasing due ones, recording results. */
@Injectable()
export class OutboxRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly pii: PiiCipher,
  ) {}

  /**
   * Writes `payload` as a message of `eventType` to every active subscription that takes it, in one
   * INSERT … SELECT on `db` (the caller's transaction). Returns how many were written.
   */
  async insertForEvent(eventType: string, payload: Prisma.InputJsonValue, db: Db = this.prisma): Promise<number> {
    // Due from now by the application's clock, the one claimDue compares with: the column's default,
    // the database's now() rounded to the millisecond, can be up to 0.5 ms ahead of it, so a pass
    // started in the same millisecond did not see the message due (a flaky e2e test on Node 24).
    return db.$executeRaw`
      INSERT INTO outbox_messages (id, subscription_id, event_type, payload, next_attempt_at)
      SELECT gen_random_uuid(), s.id, ${eventType}, ${JSON.stringify(payload)}::jsonb, ${new Date()}::timestamptz
      FROM webhook_subscriptions s
      WHERE ${subscribedTo(eventType)}`;
  }

  /**
   * Leases up to `limit` due messages (pending, `next_attempt_at` ≤ now, subscription active):
   * rows are locked with `FOR UPDATE SKIP LOCKED`, so concurrent passes (other gateway instances)
   * never take the same message, then counted as one more attempt and pushed to `leaseUntil`, so
   * that a pass that dies mid-delivery leaves them due again once the lease runs out.
   */
  async claimDue(now: Date, leaseUntil: Date, limit: number): Promise<ClaimedMessage[]> {
    const rows = await this.prisma.$queryRaw<
      Array<{
        id: string;
        subscription_id: string;
        event_type: string;
        payload: unknown;
        attempts: number;
        url: string;
        secret: string;
      }>
    >`
      WITH due AS (
        SELECT o.id FROM outbox_messages o
        JOIN webhook_subscriptions w ON w.id = o.subscription_id
        WHERE o.status = 'pending' AND o.next_attempt_at <= ${now} AND w.disabled_at IS NULL
        ORDER BY o.next_attempt_at, o.created_at
        LIMIT ${limit}
        FOR UPDATE OF o SKIP LOCKED)
      UPDATE outbox_messages m
      SET attempts = m.attempts + 1, next_attempt_at = ${leaseUntil}
      FROM due, webhook_subscriptions s
      WHERE m.id = due.id AND s.id = m.subscription_id
      RETURNING m.id, m.subscription_id, m.event_type, m.payload, m.attempts, s.url, s.secret`;
    return rows.map((r) => ({
      id: r.id,
      subscriptionId: r.subscription_id,
      eventType: r.event_type,
      payload: r.payload,
      attempts: r.attempts,
      leaseUntil,
      url: r.url,
      secret: this.pii.open(r.secret, PII_COLUMNS.webhookSubscriptionSecret),
    }));
  }

  /**
   * Records a 2xx answer. Applies while this attempt's lease holds, also when the subscription
   * was deleted meanwhile (the receiver did get it). Returns whether it was written.
   */
  async markDelivered(message: ClaimedMessage, statusCode: number, at: Date): Promise<boolean> {
    const { count } = await this.prisma.outboxMessage.updateMany({
      where: { id: message.id, attempts: message.attempts, nextAttemptAt: message.leaseUntil },
      data: { status: 'delivered', deliveredAt: at, lastStatusCode: statusCode, lastError: null },
    });
    return count === 1;
  }

  /** Records a failed attempt: pending again at `nextAttemptAt`, or `failed` for good. Only while the lease holds. */
  async markAttemptFailed(
    message: ClaimedMessage,
    result: { statusCode: number | null; error: string },
    next: { status: 'pending'; nextAttemptAt: Date } | { status: 'failed' },
  ): Promise<boolean> {
    const { count } = await this.prisma.outboxMessage.updateMany({
      where: { id: message.id, status: 'pending', attempts: message.attempts, nextAttemptAt: message.leaseUntil },
      data: {
        status: next.status,
        ...(next.status === 'pending' ? { nextAttemptAt: next.nextAttemptAt } : {}),
        lastStatusCode: result.statusCode,
        lastError: result.error,
      },
    });
    return count === 1;
  }
}
