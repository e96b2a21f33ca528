import type { TransactionKind, TransactionStatus } from '../generated/prisma/client';

/**
 * The ledger's state machines, as data: for each kind, the statuses a transaction may move to
 * from each status. The API, webhook handlers and reconciliation all move statuses through
 * `LedgerService.transition`, which reads this table; no other code assigns a status.
 *
 * `created` is written before the provider is called (write-ahead). `unknown` means the provider
 * call's outcome is not known (timeout, 5xx): reconciliation settles it, it is never retried blindly.
 * `needs_review` is where a row goes when nothing the provider lets us learn can settle it and money
 * may have moved (a swap whose answer was lost, an answer whose amount differs from the request): only
 * a person's decision (source `manual`, POST /v1/transactions/{id}/resolve) moves it on.
 * Final statuses only move on an explicit reversal (`success → reversed`), except that a collection
 * `failed` or `expired` whose deposit arrives anyway goes to `needs_review` (money moved after all).
 * Sources: docs/provider.md#statuses (the provider's statuses, the payout statuses included).
 */
export const TRANSITIONS: Record<TransactionKind, Partial<Record<TransactionStatus, TransactionStatus[]>>> = {
  payout: {
    created: ['initiated', 'failed', 'unknown', 'needs_review'],
    unknown: ['initiated', 'pending', 'processing', 'success', 'failed', 'expired', 'needs_review'],
    // `unknown`: a confirm (finalize) got no clear answer; reconciliation settles it.
    initiated: ['pending', 'processing', 'success', 'failed', 'expired', 'unknown', 'needs_review'],
    pending: ['processing', 'success', 'failed', 'needs_review'],
    processing: ['success', 'failed', 'needs_review'],
    needs_review: ['success', 'failed'],
    success: ['reversed'],
    // Maker-checker (PAYOUT_APPROVAL_THRESHOLDS): written directly as `awaiting_approval`, no provider
    // call; approval → `created` (then initialized upstream), rejection → `rejected`, lapsed TTL → `expired`.
    awaiting_approval: ['created', 'rejected', 'expired'],
  },
  collection: {
    created: ['processing', 'failed', 'unknown', 'needs_review'],
    unknown: ['processing', 'success', 'failed', 'expired', 'needs_review'],
    processing: ['success', 'failed', 'expired', 'needs_review'],
    needs_review: ['success', 'failed'],
    success: ['reversed'],
    // A deposit callback for a collection already failed (its account detail was never delivered:
    // provider_answer_lost) or expired: the money is at the provider, so a person decides.
    failed: ['needs_review'],
    expired: ['needs_review'],
  },
  swap: {
    created: ['success', 'failed', 'unknown', 'needs_review'],
    unknown: ['success', 'failed', 'needs_review'],
    needs_review: ['success', 'failed'],
    success: ['reversed'],
  },
  // `created → success`: a card movement's callback or listing row may settle it before the
  // provider's answer is recorded (CardLedgerService.settle moves it in one step).
  card_topup: {
    created: ['pending', 'success', 'failed', 'unknown', 'needs_review'],
    unknown: ['pending', 'success', 'failed', 'needs_review'],
    pending: ['success', 'failed', 'needs_review'],
    needs_review: ['success', 'failed'],
    success: ['reversed'],
  },
  card_withdrawal: {
    created: ['pending', 'success', 'failed', 'unknown', 'needs_review'],
    unknown: ['pending', 'success', 'failed', 'needs_review'],
    pending: ['success', 'failed', 'needs_review'],
    needs_review: ['success', 'failed'],
    success: ['reversed'],
  },
  card_spend: {
    pending: ['success', 'failed', 'reversed'],
    success: ['reversed'],
  },
};

/** Statuses from which nothing moves but an explicit reversal. */
export const FINAL_STATUSES: TransactionStatus[] = ['success', 'failed', 'expired', 'reversed', 'rejected'];

/** Whether `kind` may move from `from` to `to`. */
export function canTransition(kind: TransactionKind, from: TransactionStatus, to: TransactionStatus): boolean {
  return TRANSITIONS[kind][from]?.includes(to) ?? false;
}

/** The statuses from which `kind` may move to `to` (for conditional updates). */
export function sourcesOf(kind: TransactionKind, to: TransactionStatus): TransactionStatus[] {
  return (Object.entries(TRANSITIONS[kind]) as Array<[TransactionStatus, TransactionStatus[]]>)
    .filter(([, targets]) => targets.includes(to))
    .map(([from]) => from);
}
