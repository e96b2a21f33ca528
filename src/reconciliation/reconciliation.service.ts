import { Injectable, Logger } from '@nestjs/common';
import { CardTransactionsService } from '../cards/card-transactions.service';
import { PrismaService } from '../database/prisma.service';
import type { Prisma, Transaction, TransactionKind, TransactionStatus } from '../generated/prisma/client';
import { ProviderClient } from '../provider';
import { LedgerService, type TransitionOutcome } from '../transactions/ledger.service';
import { FINAL_STATUSES } from '../transactions/transaction-state';
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

/** Statuses a payout or swap can be stuck in waiting for the provider. */
const OPEN_STATUSES: string[] = ['unknown', 'initiated', 'pending', 'processing'];

/** Ledger kinds whose rows the provider's GET /transactions/{id} can answer for. */
const LOOKED_UP_KINDS: TransactionKind[] = ['payout', 'swap', 'collection'];

/** Kinds the periodic pass looks up (collections settle by their deposit callback or expire). */
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
 * Reconciliation: payouts and swaps stuck in a non-final status for longer than a threshold are
 * looked up at the provider (GET /transactions/{id}); card top-ups and withdrawals through the
 * card's provider listing; each is moved forward through the ledger's state machine with source
 * `reconciliation`. Then inbox events that are due (unmatched, failed, or stored by a process that
 * died) are retried. Rows are leased per pass and moves are decided under the ledger's row lock, so
 * instances running passes at once never look a row up twice or apply a move twice. The `reconcile`
 * job (src/jobs) runs a pass every 2 minutes.
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
    const stuck = await this.leaseStuck(RECONCILED_KINDS, OPEN_STATUSES, before, opts.limit ?? 100);
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
   * Leases up to `limit` rows of these kinds stuck in these statuses since before `before` (payouts
   * and swaps need a provider id to be looked up; card movements a card): touching updated_at takes
   * them out of every other pass's selection, and SKIP LOCKED keeps concurrent passes from waiting
   * on each other, so with several gateway instances each row is handled by one pass only.
   */
  private leaseStuck(
    kinds: string[],
    statuses: string[],
    before: Date,
    limit: number,
  ): Promise<Array<Pick<Transaction, 'id' | 'kind' | 'providerId' | 'status' | 'cardId'>>> {
    return this.prisma.$queryRaw`
      UPDATE transactions SET updated_at = now()
      WHERE id IN (
        SELECT id FROM transactions
        WHERE kind::text = ANY(${kinds}) AND status::text = ANY(${statuses}) AND updated_at < ${before}
          AND (provider_id IS NOT NULL OR card_id IS NOT NULL)
        ORDER BY updated_at
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED)
      RETURNING id, kind, provider_id AS "providerId", status, card_id AS "cardId"`;
  }

  /**
   * Card top-ups and withdrawals stuck in `created`, `unknown` or `pending` (their callback never
   * came, or the provider's answer was lost): GET /transactions/{id} does not know card movements,
   * so the card's own listing is read instead (CardTransactionsService.sync, which settles rows by
   * provider id or reference, source `reconciliation`). Rows are leased like payouts, one sync per card.
   */
  private async reconcileCards(before: Date, limit: number, report: ReconciliationReport): Promise<void> {
    const stuck = await this.leaseStuck(
      ['card_topup', 'card_withdrawal'],
      ['created', 'unknown', 'pending'],
      before,
      limit,
    );
    for (const cardId of new Set(stuck.flatMap((row) => (row.cardId ? [row.cardId] : [])))) {
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
   * Looks one ledger row up at the provider and applies the forward move it shows, with source
   * `reconciliation`: payouts, swaps and collections through GET /transactions/{providerId}; card
   * top-ups and withdrawals through the card's listing (which knows them; the lookup does not). A
   * row already final, a card spend, or a row without a provider id is left as it is without
   * calling the provider (`unchanged`).
   * @throws ProviderError (502/504) when the provider cannot answer.
   */
  async reconcileTransaction(
    row: Pick<Transaction, 'id' | 'kind' | 'providerId' | 'status' | 'cardId'>,
  ): Promise<TransitionOutcome> {
    if (FINAL_STATUSES.includes(row.status)) return 'unchanged';
    if (row.kind === 'card_topup' || row.kind === 'card_withdrawal') {
      const card = row.cardId ? await this.prisma.card.findUnique({ where: { id: row.cardId } }) : null;
      if (!card?.providerId) return 'unchanged';
      await this.cardTransactions.sync(card);
      const after = await this.ledger.get(row.id);
      return after.status === row.status ? 'unchanged' : 'applied';
    }
    if (!LOOKED_UP_KINDS.includes(row.kind) || !row.providerId) return 'unchanged';
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
