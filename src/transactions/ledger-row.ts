/**
 * The one row view of the ledger: which columns of `transactions` every read selects, and the
 * type those columns read as. The ledger's writes (LedgerRepository, Prisma) and the finance reads
 * (TransactionsRepository, node-postgres) select the same list and hand out the same type, from
 * which every API view (transaction, payout, swap, card movement, gateway event) is mapped once
 * (transaction.mapper.ts). No I/O here.
 */
import { type IsoInstants, isoTimeSql } from '../common/pagination';
import type { Transaction } from '../generated/prisma/client';

/**
 * A ledger row as every reader gets it: the Transaction model without the provider's payload
 * (large, never shown; LedgerRepository's writes return the full Transaction, which is one).
 * Amounts are bigint minor units, `exchangeRate` an exact decimal, times Dates.
 */
export type LedgerRow = Omit<Transaction, 'providerPayload'>;

/** Every column of `transactions` but `provider_payload` and the instants, named as the Transaction type's fields. */
const LEDGER_FIELDS = `t.id, t.kind, t.direction, t.status, t.amount, t.fee, t.currency,
  t.counter_amount AS "counterAmount", t.counter_currency AS "counterCurrency", t.exchange_rate AS "exchangeRate",
  t.customer_id AS "customerId", t.beneficiary_id AS "beneficiaryId", t.card_id AS "cardId",
  t.provider_id AS "providerId", t.reference, t.description, t.failure_reason AS "failureReason",
  t.created_by AS "createdBy"`;

/**
 * Every column of `transactions` but `provider_payload`, named as the Transaction type's fields
 * (quoted camelCase aliases), for a table aliased `t`. Used as is by the finance reads and, with
 * `t.provider_payload AS "providerPayload"` added, for the ledger's raw RETURNING.
 */
export const LEDGER_ROW_COLUMNS = `${LEDGER_FIELDS}, t.confirm_requested_at AS "confirmRequestedAt",
  t.created_at AS "createdAt", t.updated_at AS "updatedAt", t.completed_at AS "completedAt",
  t.approved_at AS "approvedAt"`;

/**
 * When a row's provider calls started: its creation (the write-ahead, right before the first call),
 * or, for a payout held for approval (maker-checker), its approval — the initialize is sent then.
 * The payout's quote window and the settlement deadline count from it.
 */
export function providerCallsStartedAt(row: Pick<LedgerRow, 'createdAt' | 'approvedAt'>): Date {
  return row.approvedAt ?? row.createdAt;
}

/**
 * The ledger row's fields a card movement shows (toCardMovementDto, CardTransactionDto): a
 * projection of the one row view, for the card's movement page, which reads only these columns
 * (the fee and exchange rate, exact decimals, cost a parse per row and are never shown there).
 * Its instants are Dates in a ledger row, and `isoTime` text in the page's rows (CARD_MOVEMENT_COLUMNS):
 * 21 rows × 3 instants parsed into Dates and written out again were a tenth of the page's CPU.
 */
export type CardMovementRow = IsoInstants<
  Pick<
    LedgerRow,
    | 'id'
    | 'kind'
    | 'direction'
    | 'status'
    | 'amount'
    | 'currency'
    | 'cardId'
    | 'providerId'
    | 'reference'
    | 'description'
    | 'failureReason'
    | 'createdAt'
    | 'updatedAt'
    | 'completedAt'
  >,
  'createdAt' | 'updatedAt' | 'completedAt'
>;

/** The instants of a ledger row. */
type LedgerInstant = 'createdAt' | 'updatedAt' | 'completedAt' | 'confirmRequestedAt' | 'approvedAt';

/**
 * A ledger row as the finance list reads it (LEDGER_PAGE_COLUMNS): the one row view with its
 * instants as `isoTime` text, which toTransactionDto writes out as they are. A page of 21 rows had
 * up to 84 instants parsed into Dates only to be written out again.
 */
export type LedgerPageRow = IsoInstants<LedgerRow, LedgerInstant>;

/** LEDGER_ROW_COLUMNS with the instants as `isoTime` text (`LedgerPageRow`), for a table aliased `t`. */
export const LEDGER_PAGE_COLUMNS = `${LEDGER_FIELDS}, ${isoTimeSql('t.confirm_requested_at', 'confirmRequestedAt')},
  ${isoTimeSql('t.created_at', 'createdAt')}, ${isoTimeSql('t.updated_at', 'updatedAt')},
  ${isoTimeSql('t.completed_at', 'completedAt')}, ${isoTimeSql('t.approved_at', 'approvedAt')}`;

/** The columns of `CardMovementRow`, named as its fields (instants as `isoTime` text), for a table aliased `t`. */
export const CARD_MOVEMENT_COLUMNS = `t.id, t.kind, t.direction, t.status, t.amount, t.currency, t.card_id AS "cardId",
  t.provider_id AS "providerId", t.reference, t.description, t.failure_reason AS "failureReason",
  ${isoTimeSql('t.created_at', 'createdAt')}, ${isoTimeSql('t.updated_at', 'updatedAt')},
  ${isoTimeSql('t.completed_at', 'completedAt')}`;
