/**
 * Gateway events: what internal apps can subscribe to (POST /v1/webhook-subscriptions) and
 * receive, signed per Standard Webhooks, from the outbox. Ledger events are announced by
 * `LedgerService` when a row moves to a status listed in `LEDGER_EVENT_TYPES`; card lifecycle
 * events are published by the cards module itself.
 */
import type { TransactionKind, TransactionStatus } from '../generated/prisma/client';

/**
 * Announced when a row of any kind moves to `needs_review`: nothing the provider lets us learn
 * settles it and money may have moved; a person resolves it (POST /v1/transactions/{id}/resolve).
 */
const TRANSACTION_NEEDS_REVIEW = 'transaction.needs_review';

/** The ledger's event table, as data: (kind, new status) → event type. Statuses not listed announce nothing. */
export const LEDGER_EVENT_TYPES = {
  payout: {
    success: 'payout.succeeded',
    failed: 'payout.failed',
    expired: 'payout.expired',
    reversed: 'payout.reversed',
    rejected: 'payout.rejected',
    needs_review: TRANSACTION_NEEDS_REVIEW,
  },
  collection: {
    success: 'collection.paid',
    failed: 'collection.failed',
    expired: 'collection.expired',
    reversed: 'collection.reversed',
    needs_review: TRANSACTION_NEEDS_REVIEW,
  },
  swap: {
    success: 'swap.succeeded',
    failed: 'swap.failed',
    reversed: 'swap.reversed',
    needs_review: TRANSACTION_NEEDS_REVIEW,
  },
  card_topup: {
    success: 'card.topup.succeeded',
    failed: 'card.topup.failed',
    reversed: 'card.topup.reversed',
    needs_review: TRANSACTION_NEEDS_REVIEW,
  },
  card_withdrawal: {
    success: 'card.withdrawal.succeeded',
    failed: 'card.withdrawal.failed',
    reversed: 'card.withdrawal.reversed',
    needs_review: TRANSACTION_NEEDS_REVIEW,
  },
  card_spend: {
    success: 'card.spend.succeeded',
    failed: 'card.spend.failed',
    reversed: 'card.spend.reversed',
  },
} as const satisfies Record<TransactionKind, Partial<Record<TransactionStatus, string>>>;

type LedgerEventType = {
  [K in keyof typeof LEDGER_EVENT_TYPES]: (typeof LEDGER_EVENT_TYPES)[K][keyof (typeof LEDGER_EVENT_TYPES)[K]];
}[keyof typeof LEDGER_EVENT_TYPES];

/** Events that are not ledger moves: card lifecycle (published by the cards module). */
export const CARD_LIFECYCLE_EVENT_TYPES = ['card.created', 'card.creation_failed'] as const;

/**
 * Payout approval events that are not a status of their own (src/payouts): `payout.approval_required`
 * when a payout over PAYOUT_APPROVAL_THRESHOLDS is stored `awaiting_approval` (its first status, so no
 * move announces it), `payout.approved` when a second API client approves it (the row goes back to
 * `created`, which every payout passes through). Data: the ledger row's public view plus `actorId`.
 * `payout.rejected` is a ledger event (status `rejected`).
 */
export const PAYOUT_APPROVAL_EVENT_TYPES = ['payout.approval_required', 'payout.approved'] as const;

/** `reconciliation.completed`: a reconciliation report finished; data `{runId, from, to, kinds, totals}` (src/reconciliation). */
export const RECONCILIATION_EVENT_TYPES = ['reconciliation.completed'] as const;

/** Every event type a subscription may name (validation of `eventTypes`), sorted. */
export const GATEWAY_EVENT_TYPES: readonly GatewayEventType[] = Object.freeze(
  [
    ...new Set([
      ...Object.values(LEDGER_EVENT_TYPES).flatMap((byStatus) => Object.values(byStatus) as LedgerEventType[]),
      ...CARD_LIFECYCLE_EVENT_TYPES,
      ...PAYOUT_APPROVAL_EVENT_TYPES,
      ...RECONCILIATION_EVENT_TYPES,
    ]),
  ].sort(),
);

export type GatewayEventType =
  | LedgerEventType
  | (typeof CARD_LIFECYCLE_EVENT_TYPES)[number]
  | (typeof PAYOUT_APPROVAL_EVENT_TYPES)[number]
  | (typeof RECONCILIATION_EVENT_TYPES)[number];

export function isGatewayEventType(value: unknown): value is GatewayEventType {
  return typeof value === 'string' && (GATEWAY_EVENT_TYPES as readonly string[]).includes(value);
}

/** The event a ledger row announces on reaching `status`, or null (e.g. `pending`, `unknown`). */
export function ledgerEventType(kind: TransactionKind, status: TransactionStatus): GatewayEventType | null {
  const byStatus: Partial<Record<TransactionStatus, GatewayEventType>> = LEDGER_EVENT_TYPES[kind];
  return byStatus[status] ?? null;
}

/**
 * The `data` of a ledger event (mapped by toTransactionEventData, src/transactions/transaction.mapper.ts): a small public view of the Transaction row. Amounts are integers
 * in minor units of `currency`, as JSON numbers while within ±Number.MAX_SAFE_INTEGER and as
 * decimal strings beyond (never a rounded number). Timestamps are ISO 8601 UTC.
 */
export interface TransactionEventData {
  id: string;
  kind: TransactionKind;
  direction: string;
  status: TransactionStatus;
  amount: number | string;
  fee: number | string;
  currency: string;
  reference: string;
  customerId: string | null;
  beneficiaryId: string | null;
  cardId: string | null;
  failureReason: string | null;
  createdAt: string;
  completedAt: string | null;
}
