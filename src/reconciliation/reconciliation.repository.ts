import { Injectable } from '@nestjs/common';
import { PrismaService } from '../database/prisma.service';
import { Prisma, type Card, type WebhookEvent } from '../generated/prisma/client';
import type { ReconciledRow } from './reconciliation.service';

type Tx = Prisma.TransactionClient;

/** Database access of the reconciliation and expiry jobs (they sweep rows of several modules' tables). */
@Injectable()
export class ReconciliationRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Ledger ids of up to `limit` collections past `expiresAt` at `now` whose ledger row is still `processing`. */
  async lapsedCollectionTransactionIds(now: Date, limit: number): Promise<string[]> {
    const lapsed = await this.prisma.collection.findMany({
      where: { expiresAt: { lt: now }, transaction: { status: 'processing' } },
      select: { transactionId: true },
      take: limit,
    });
    return lapsed.map((row) => row.transactionId);
  }

  /** Ids of up to `limit` payouts still `awaiting_approval` that were created before `createdBefore`. */
  async lapsedApprovalIds(createdBefore: Date, limit: number): Promise<string[]> {
    const rows = await this.prisma.transaction.findMany({
      where: { kind: 'payout', status: 'awaiting_approval', createdAt: { lt: createdBefore } },
      select: { id: true },
      orderBy: { createdAt: 'asc' },
      take: limit,
    });
    return rows.map((row) => row.id);
  }

  /** Marks `open` swap quotes past their expiry at `now` as `expired`; answers how many. */
  async expireOpenQuotes(now: Date): Promise<number> {
    const quotes = await this.prisma.swapQuote.updateMany({
      where: { status: 'open', expiresAt: { lt: now } },
      data: { status: 'expired' },
    });
    return quotes.count;
  }

  /** Deletes idempotency records past their expiry at `now`; answers how many. */
  async purgeExpiredIdempotencyRecords(now: Date): Promise<number> {
    const keys = await this.prisma.idempotencyRecord.deleteMany({ where: { expiresAt: { lt: now } } });
    return keys.count;
  }

  /** Runs `work` in one database transaction; the repository methods given its `tx` take part in it. */
  withTransaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(work);
  }

  /**
   * Leases up to `limit` rows of these kinds stuck in these statuses since before `before` (payouts
   * and swaps need a provider id to be looked up; card movements a card): touching updated_at takes
   * them out of every other pass's selection, and SKIP LOCKED keeps concurrent passes from waiting
   * on each other, so with several gateway instances each row is handled by one pass only.
   * `withoutProviderId`: instead, rows with no provider id whose provider calls started before that
   * instant (their creation, or a held payout's approval: providerCallsStartedAt).
   */
  leaseStuck(
    kinds: string[],
    statuses: string[],
    before: Date,
    limit: number,
    opts: { withoutProviderId?: Date } = {},
  ): Promise<ReconciledRow[]> {
    const which = opts.withoutProviderId
      ? Prisma.sql`provider_id IS NULL AND COALESCE(approved_at, created_at) < ${opts.withoutProviderId}`
      : Prisma.sql`(provider_id IS NOT NULL OR card_id IS NOT NULL)`;
    return this.prisma.$queryRaw`
      UPDATE transactions SET updated_at = now()
      WHERE id IN (
        SELECT id FROM transactions
        WHERE kind::text = ANY(${kinds}) AND status::text = ANY(${statuses}) AND updated_at < ${before}
          AND ${which}
        ORDER BY updated_at
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED)
      RETURNING id, kind, provider_id AS "providerId", status, card_id AS "cardId", created_at AS "createdAt",
        approved_at AS "approvedAt", reference, amount, currency`;
  }

  /** The earliest inbox event named `event` with our `reference`, if any. */
  findFirstInboxEvent(event: string, reference: string | null): Promise<WebhookEvent | null> {
    return this.prisma.webhookEvent.findFirst({ where: { event, reference }, orderBy: { receivedAt: 'asc' } });
  }

  findCard(id: string): Promise<Card | null> {
    return this.prisma.card.findUnique({ where: { id } });
  }
}
