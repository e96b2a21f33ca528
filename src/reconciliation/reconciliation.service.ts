import { Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { CardTransactionsService } from '../cards/card-transactions.service';
import type { Env } from '../config/env';
import type { Prisma, Transaction, TransactionKind, TransactionStatus } from '../generated/prisma/client';
import { MetricsService } from '../metrics/metrics.service';
import { answerMismatch, ProviderClient } from '../provider';
import { SwapsService } from '../swaps/swaps.service';
import { LedgerService, type TransitionOutcome } from '../transactions/ledger.service';
import { FINAL_STATUSES } from '../transactions/transaction-state';
import { WebhooksService } from '../webhooks/webhooks.service';
import { ReconciliationRepository } from './reconciliation.repository';

/** Payout statuses the provider reports (docs/provider.md#statuses) → ledger statuses. */
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

/** Failure reason of a row settled `failed` because the provider's answer to its call never came. */
export const PROVIDER_ANSWER_LOST = 'provider_answer_lost';

/** Statuses of a row whose money-moving call got no answer (or was never answered before a crash). */
const UNANSWERED_STATUSES: TransactionStatus[] = ['created', 'unknown'];

/** Kinds settled without a provider id once past SETTLEMENT_DEADLINE (settleUnanswered). */
const UNANSWERED_KINDS: TransactionKind[] = ['payout', 'collection', 'swap'];

/** The provider event that says a collection was paid (docs/provider.md#events). */
const DEPOSIT_EVENT = 'transaction.deposit.success';

/** What reconciliation needs of a ledger row. */
export type ReconciledRow = Pick<
  Transaction,
  'id' | 'kind' | 'providerId' | 'status' | 'cardId' | 'createdAt' | 'approvedAt' | 'reference' | 'amount' | 'currency'
>;

/**
 * Kinds whose lookup answer is checked against the row's money before it moves the row: the
 * lookup answers the payout shape (docs/provider.md#transaction-lookup) whose `amount`/`centAmount` and
 * wallet `currency` are the payout's, or the swap's source, as their synchronous answers are
 * checked. A collection's lookup is not compared (what the payer sent, net of fees or not, is not
 * documented); its deposit callback is.
 */
const AMOUNT_CHECKED_KINDS: TransactionKind[] = ['payout', 'swap'];

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
  /** Rows without a provider id settled past SETTLEMENT_DEADLINE (failed, paid, or needs_review). */
  settled: number;
  /** Cards whose stored balance differs from their ledger (should be 0; also the `card_balance_drift_cards` gauge). */
  cardBalanceDrift: number;
}

/**
 * Reconciliation: payouts and swaps stuck in a non-final status for longer than a threshold are
 * looked up at the provider (GET /transactions/{id}); card top-ups and withdrawals through the
 * card's provider listing; each is moved forward through the ledger's state machine with source
 * `reconciliation`. Rows whose money-moving call was never answered (no provider id: a timeout, a
 * 5xx, or a gateway killed mid-call) are settled once past SETTLEMENT_DEADLINE by what the provider
 * lets us learn, never by sending the call again (settleUnanswered); card movements still open past
 * it after a sync go to `needs_review`. So no row stays `created` or `unknown` past the deadline.
 * Then inbox events that are due (unmatched, failed, or stored by a process that died) are retried.
 * Rows are leased per pass and moves are decided under the ledger's row lock, so instances running
 * passes at once never look a row up twice or apply a move twice. The `reconcile`
 * job (src/jobs) runs a pass every 2 minutes.
 */
@Injectable()
export class ReconciliationService {
  private readonly logger = new Logger('Reconciliation');

  constructor(
    private readonly repository: ReconciliationRepository,
    private readonly provider: ProviderClient,
    private readonly ledger: LedgerService,
    private readonly webhooks: WebhooksService,
    private readonly cardTransactions: CardTransactionsService,
    private readonly config: ConfigService<Env, true>,
    private readonly metrics: MetricsService,
    private readonly swaps: SwapsService,
  ) {}

  /** Rows created before this instant are past SETTLEMENT_DEADLINE at `now`. */
  private deadlineCutoff(now: Date): Date {
    return new Date(now.getTime() - this.config.get('SETTLEMENT_DEADLINE', { infer: true }) * 60_000);
  }

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
      settled: 0,
      cardBalanceDrift: 0,
    };
    const now = opts.now ?? new Date();
    const before = new Date(now.getTime() - (opts.olderThanMs ?? 5 * 60_000));
    const stuck = await this.repository.leaseStuck(RECONCILED_KINDS, OPEN_STATUSES, before, opts.limit ?? 100);
    for (const row of stuck) {
      report.checked += 1;
      try {
        if ((await this.reconcileTransaction(row)) === 'applied') report.moved += 1;
      } catch (error) {
        report.errors += 1;
        this.logger.warn({ transactionId: row.id, error: (error as Error).message }, 'reconciliation lookup failed');
      }
      // No row stays `unknown` past the deadline: one the lookup could not settle (the provider keeps
      // failing, or shows a status this kind cannot take) goes to a person; money may have moved.
      try {
        const reason = 'still unknown after the provider lookup, past the settlement deadline';
        if (row.status === 'unknown' && (await this.reviewIfOverdue(row.id, now, reason)) === 'applied') {
          report.settled += 1;
        }
      } catch (error) {
        report.errors += 1;
        this.logger.warn({ transactionId: row.id, error: (error as Error).message }, 'review of an overdue row failed');
      }
    }
    await this.settleAllUnanswered(now, before, opts.limit ?? 100, report);
    await this.reconcileCards(now, before, opts.limit ?? 100, report);
    const inbox = await this.webhooks.retryDue({ limit: opts.limit, now });
    report.inboxRetried = inbox.retried;
    report.inboxMatched = inbox.settled;
    await this.checkCardBalances(report);
    return report;
  }

  /**
   * The card balance check: every card's stored balance against the sum of its successful ledger
   * movements. A drift is reported (gauge `card_balance_drift_cards`, a warning per card with both
   * values), never corrected silently: which side is right is for a person to find out.
   */
  private async checkCardBalances(report: ReconciliationReport): Promise<void> {
    try {
      const drifted = await this.cardTransactions.balanceDrift();
      report.cardBalanceDrift = drifted.length;
      this.metrics.cardBalanceDrift.set(drifted.length);
      for (const card of drifted) {
        this.logger.warn(
          { cardId: card.cardId, balance: card.balance.toString(), ledger: card.ledger.toString() },
          'card balance differs from its ledger',
        );
      }
    } catch (error) {
      report.errors += 1;
      this.logger.warn({ error: (error as Error).message }, 'card balance check failed');
    }
  }

  /** Leases the payouts, collections and swaps without a provider id past the deadline and settles each. */
  private async settleAllUnanswered(
    now: Date,
    before: Date,
    limit: number,
    report: ReconciliationReport,
  ): Promise<void> {
    const rows = await this.repository.leaseStuck(UNANSWERED_KINDS, UNANSWERED_STATUSES, before, limit, {
      withoutProviderId: this.deadlineCutoff(now),
    });
    for (const row of rows) {
      report.checked += 1;
      try {
        if ((await this.settleUnanswered(row, now)) === 'applied') report.settled += 1;
      } catch (error) {
        report.errors += 1;
        this.logger.warn({ transactionId: row.id, error: (error as Error).message }, 'settling failed');
      }
    }
  }

  /**
   * Settles a payout, collection or swap whose money-moving call was never answered (status
   * `created` or `unknown`, no provider id), once past SETTLEMENT_DEADLINE at `now` (before that it
   * is left as it is: `unchanged`). Never by sending the call again:
   * - payout → `failed`, reason `provider_answer_lost`: initialize moves no money, and the
   *   provider's initiated record lapses after its ~4-minute rate window (docs/provider.md#payouts) without
   *   a finalize, which the gateway sends only for a row holding the provider id. The client may try again.
   * - collection → paid when a deposit callback with its reference is in the inbox (webhook_events:
   *   the row moves to `unknown`, then the event is applied again as the webhook would, source
   *   `webhook`); else `failed`, reason `provider_answer_lost`: its account detail never reached the
   *   client, so nobody was told where to pay.
   * - swap → `needs_review` once its quote has expired, and the quote `needs_review` too: nothing in
   *   the provider's documented API finds a swap by its quote, and finalizing the quote again would
   *   move money if the first call never arrived. A person resolves it (POST /v1/transactions/{id}/resolve).
   * Every move has source `reconciliation`, and is decided under the ledger's row lock, so a row is
   * settled once however many passes run.
   */
  async settleUnanswered(row: ReconciledRow, now: Date = new Date()): Promise<TransitionOutcome> {
    if (!UNANSWERED_KINDS.includes(row.kind) || !UNANSWERED_STATUSES.includes(row.status) || row.providerId)
      return 'unchanged';
    const settlesBy = this.ledger.settlesBy(row);
    if (settlesBy > now) return 'unchanged';
    const lost = { reason: PROVIDER_ANSWER_LOST, settlesBy: settlesBy.toISOString() };
    if (row.kind === 'swap') {
      const quoteExpiresAt = await this.swaps.quoteExpiryOfSwap(row.id);
      if (quoteExpiresAt && quoteExpiresAt > now) return 'unchanged';
      return this.repository.withTransaction(async (tx) => {
        const { outcome } = await this.ledger.transition(row.id, 'needs_review', 'reconciliation', {
          tx,
          payload: lost,
        });
        if (outcome === 'applied') await this.swaps.followLedger(tx, row.id, 'needs_review');
        return outcome;
      });
    }
    if (row.kind === 'collection') {
      const deposit = await this.repository.findFirstInboxEvent(DEPOSIT_EVENT, row.reference);
      if (deposit) {
        if (row.status === 'created') {
          await this.ledger.transition(row.id, 'unknown', 'reconciliation', {
            payload: { reason: 'deposit callback found in the inbox', webhookEventId: deposit.id },
          });
        }
        const outcome = await this.webhooks.process(deposit);
        return outcome === 'applied' ? 'applied' : 'unchanged';
      }
    }
    const { outcome } = await this.ledger.transition(row.id, 'failed', 'reconciliation', {
      patch: { failureReason: PROVIDER_ANSWER_LOST },
      payload: lost,
    });
    return outcome;
  }

  /**
   * A card top-up or withdrawal (or a card's initial funding) still `created` or `unknown` past
   * SETTLEMENT_DEADLINE after its card was synced (or whose card never got a provider id) →
   * `needs_review`, source `reconciliation`: the provider may have moved the money, and nothing
   * more can be learnt.
   */
  private async reviewIfOverdue(
    id: string,
    now: Date,
    reason = 'not in the card listing past the settlement deadline',
  ): Promise<TransitionOutcome> {
    const row = await this.ledger.get(id);
    if (!UNANSWERED_STATUSES.includes(row.status) || this.ledger.settlesBy(row) > now) return 'unchanged';
    return this.repository.withTransaction(async (tx) => {
      const { outcome } = await this.ledger.transition(id, 'needs_review', 'reconciliation', {
        tx,
        payload: { reason },
      });
      if (outcome === 'applied' && row.kind === 'swap') await this.swaps.followLedger(tx, id, 'needs_review');
      return outcome;
    });
  }

  /**
   * Card top-ups and withdrawals stuck in `created`, `unknown` or `pending` (their callback never
   * came, or the provider's answer was lost): GET /transactions/{id} does not know card movements,
   * so the card's own listing is read instead (CardTransactionsService.sync, which settles rows by
   * provider id or reference, source `reconciliation`). Rows are leased like payouts, one sync per card.
   */
  private async reconcileCards(now: Date, before: Date, limit: number, report: ReconciliationReport): Promise<void> {
    const stuck = await this.repository.leaseStuck(
      ['card_topup', 'card_withdrawal'],
      ['created', 'unknown', 'pending'],
      before,
      limit,
    );
    for (const cardId of new Set(stuck.flatMap((row) => (row.cardId ? [row.cardId] : [])))) {
      try {
        const card = await this.repository.findCard(cardId);
        if (!card) continue;
        if (card.providerId) {
          const { changed } = await this.cardTransactions.sync(card);
          report.cardsSynced += 1;
          report.cardMoved += changed;
        }
        for (const row of stuck.filter((r) => r.cardId === cardId)) {
          if ((await this.reviewIfOverdue(row.id, now)) === 'applied') report.settled += 1;
        }
      } catch (error) {
        report.errors += 1;
        this.logger.warn({ cardId, error: (error as Error).message }, 'card reconciliation failed');
      }
    }
  }

  /**
   * Looks one ledger row up at the provider and applies the forward move it shows, with source
   * `reconciliation`: payouts, swaps and collections through GET /transactions/{providerId}; card
   * top-ups and withdrawals through the card's listing (which knows them; the lookup does not), then
   * `needs_review` when still open past SETTLEMENT_DEADLINE. A payout, collection or swap without a
   * provider id is settled by settleUnanswered when past SETTLEMENT_DEADLINE at `now`, else left as
   * it is. A row already final or under review, or a card spend, is left as it is without calling
   * the provider (`unchanged`).
   * @throws ProviderError (502/504) when the provider cannot answer.
   */
  async reconcileTransaction(row: ReconciledRow, now: Date = new Date()): Promise<TransitionOutcome> {
    if (FINAL_STATUSES.includes(row.status) || row.status === 'needs_review') return 'unchanged';
    if (row.kind === 'card_topup' || row.kind === 'card_withdrawal') {
      const card = row.cardId ? await this.repository.findCard(row.cardId) : null;
      if (!card) return 'unchanged';
      if (card.providerId) await this.cardTransactions.sync(card);
      const reviewed = await this.reviewIfOverdue(row.id, now);
      const after = await this.ledger.get(row.id);
      return after.status === row.status && reviewed !== 'applied' ? 'unchanged' : 'applied';
    }
    if (!row.providerId) return this.settleUnanswered(row, now);
    if (!LOOKED_UP_KINDS.includes(row.kind)) return 'unchanged';
    const upstream = await this.provider.getTransaction(row.providerId);
    const to = PAYOUT_STATUS[upstream.status.toLowerCase()];
    if (!to || to === row.status) return 'unchanged';
    const mismatch = AMOUNT_CHECKED_KINDS.includes(row.kind)
      ? answerMismatch(
          'getTransaction',
          { amountMinor: row.amount, currency: row.currency },
          { amountMinor: upstream.amountMinor, currency: upstream.currency },
          { id: upstream.id, raw: upstream.raw },
        )
      : null;
    if (mismatch) {
      // The lookup shows other money than the row holds: not applied; a person decides (docs/money-safety.md).
      this.metrics.countProviderAmountMismatch(mismatch.operation);
      this.logger.warn(
        { transactionId: row.id, asked: mismatch.extensions.asked, answered: mismatch.extensions.answered },
        'provider lookup states another amount than the ledger row; held for review',
      );
    }
    const target: TransactionStatus = mismatch ? 'needs_review' : to;
    return this.repository.withTransaction(async (tx) => {
      const { outcome } = await this.ledger.transition(row.id, target, 'reconciliation', {
        tx,
        payload: upstream.raw as Prisma.InputJsonValue,
        patch: mismatch
          ? { failureReason: mismatch.message }
          : // Still `initiated` upstream: the confirm never took effect, so it may be sent again.
            to === 'initiated'
            ? { confirmRequestedAt: null }
            : undefined,
      });
      if (outcome === 'applied' && row.kind === 'swap') await this.swaps.followLedger(tx, row.id, target);
      return outcome;
    });
  }
}
