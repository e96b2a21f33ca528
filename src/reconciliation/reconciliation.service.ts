import { Injectable, Logger } from '@nestjs/common';
import { CardTransactionsService } from '../cards/card-transactions.service';
import { PrismaService } from '../database/prisma.service';
import type { Prisma, Transaction, TransactionStatus } from '../generated/prisma/client';
import { ProviderClient } from '../provider';
import { LedgerService, type TransitionOutcome } from '../transactions/ledger.service';
import { WebhooksService } from '../webhooks/webhooks.service';

/** Payout statuses the provider reports (provider-webhooks.md "Other documented rules") → ledger statuses. */
const PAYOUT_STATUS: Record<string, TransactionStatus> = {
  initiated: 'initiated',
  pending: 'pending',
  processing: 'processing',
  success: 'success',
  failed: 'failed',
  expired: 'expired',
};

/** Statuses a payout can be stuck in waiting for the provider. */
const OPEN_PAYOUT_STATUSES: string[] = ['unknown', 'initiated', 'pending', 'processing'];

/** Ledger kinds whose rows the provider's GET /transactions/{id} can answer for. */
const RECONCILED_KINDS: string[] = ['payout', 'swap'];

/** Counts of one reconciliation pass. */
export interface ReconciliationReport {
  checked: number;
  moved: number;
  errors: number;
  inboxRetried: number;
  inboxMatched: number;
  /** Cards whose provider listing was read to settle stuck top-ups and withdrawals. */
  cardsSynced: number;
  /** Card movements the listing settled or added. */
  cardMoved: number;
}

/**
 * Reconciliation: asks the provider (GET /transactions/{id}) about payouts stuck in a non-final
 * status for longer than a threshold and moves them forward through the ledger's state machine
 * with source `reconciliation`; re-tries inbox events that matched no record when they arrived.
 * Moves are decided under the ledger's row lock, so two instances running a pass at once never
 * apply the same move twice. (Scheduling it every few minutes comes with the job queue.)
 */
@Injectable()
export class ReconciliationService {
  private readonly logger = new Logger('Reconciliation');

  constructor(
    private readonly prisma: PrismaService,
    private readonly provider: ProviderClient,
    private readonly ledger: LedgerService,
    private readonly webhooks: WebhooksService,
    private readonly cardTransactions: CardTransactionsService,
  ) {}

  /**
   * One pass. `olderThanMs`: only records untouched for this long (default 5 min); `limit`: at most
   * this many payouts per pass, oldest first.
   */
  async run(opts: { olderThanMs?: number; limit?: number; now?: Date } = {}): Promise<ReconciliationReport> {
    const report: ReconciliationReport = {
      checked: 0,
      moved: 0,
      errors: 0,
      inboxRetried: 0,
      inboxMatched: 0,
      cardsSynced: 0,
      cardMoved: 0,
    };
    const now = opts.now ?? new Date();
    const before = new Date(now.getTime() - (opts.olderThanMs ?? 5 * 60_000));
    // Lease the stuck rows: touching updated_at takes them out of every other pass's selection
    // (SKIP LOCKED keeps concurrent passes from waiting on each other), so with several gateway
    // instances each row is looked up by one pass only.
    const stuck = await this.prisma.$queryRaw<Array<Pick<Transaction, 'id' | 'providerId' | 'status'>>>`
      UPDATE transactions SET updated_at = now()
      WHERE id IN (
        SELECT id FROM transactions
        WHERE kind::text = ANY(${RECONCILED_KINDS}) AND status::text = ANY(${OPEN_PAYOUT_STATUSES})
          AND provider_id IS NOT NULL AND updated_at < ${before}
        ORDER BY updated_at
        LIMIT ${opts.limit ?? 100}
        FOR UPDATE SKIP LOCKED)
      RETURNING id, provider_id AS "providerId", status`;
    for (const row of stuck) {
      report.checked += 1;
      try {
        if ((await this.reconcileTransaction(row)) === 'applied') report.moved += 1;
      } catch (error) {
        report.errors += 1;
        this.logger.warn({ transactionId: row.id, error: (error as Error).message }, 'reconciliation lookup failed');
      }
    }
    await this.reconcileCards(before, opts.limit ?? 100, report);
    const inbox = await this.webhooks.retryDue({ limit: opts.limit, now });
    report.inboxRetried = inbox.retried;
    report.inboxMatched = inbox.settled;
    return report;
  }

  /**
   * Card top-ups and withdrawals stuck in `created`, `unknown` or `pending` (their callback never
   * came, or the provider's answer was lost): GET /transactions/{id} does not know card movements,
   * so the card's own listing is read instead (CardTransactionsService.sync, which settles rows by
   * provider id or reference, source `reconciliation`). Rows are leased like payouts, one sync per card.
   */
  private async reconcileCards(before: Date, limit: number, report: ReconciliationReport): Promise<void> {
    const stuck = await this.prisma.$queryRaw<Array<{ cardId: string }>>`
      UPDATE transactions SET updated_at = now()
      WHERE id IN (
        SELECT id FROM transactions
        WHERE kind IN ('card_topup', 'card_withdrawal') AND status IN ('created', 'unknown', 'pending')
          AND card_id IS NOT NULL AND updated_at < ${before}
        ORDER BY updated_at
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED)
      RETURNING card_id AS "cardId"`;
    for (const cardId of new Set(stuck.map((row) => row.cardId))) {
      try {
        const card = await this.prisma.card.findUnique({ where: { id: cardId } });
        if (!card?.providerId) continue;
        const { changed } = await this.cardTransactions.sync(card);
        report.cardsSynced += 1;
        report.cardMoved += changed;
      } catch (error) {
        report.errors += 1;
        this.logger.warn({ cardId, error: (error as Error).message }, 'card reconciliation failed');
      }
    }
  }

  /**
   * Looks one ledger row up at the provider (GET /transactions/{providerId}) and applies the
   * forward move it shows, with source `reconciliation`. Rows without a provider id, or whose
   * provider status means nothing new, are left as they are (`unchanged`).
   * @throws ProviderError (502/504) when the provider cannot answer.
   */
  async reconcileTransaction(row: Pick<Transaction, 'id' | 'providerId' | 'status'>): Promise<TransitionOutcome> {
    if (!row.providerId) return 'unchanged';
    const upstream = await this.provider.getTransaction(row.providerId);
    const to = PAYOUT_STATUS[upstream.status.toLowerCase()];
    if (!to || to === row.status) return 'unchanged';
    const { outcome } = await this.ledger.transition(row.id, to, 'reconciliation', {
      payload: upstream.raw as Prisma.InputJsonValue,
      // Still `initiated` upstream: the confirm never took effect, so it may be sent again.
      patch: to === 'initiated' ? { confirmRequestedAt: null } : undefined,
    });
    return outcome;
  }
}
