/**
 * SQL for the finance reads of the ledger (rows: LEDGER_ROW_COLUMNS, ledger-row.ts), as pure functions (no I/O) so that the text of each
 * statement depends only on which filters are present, never on their values: values are always
 * bind parameters. The read pool prepares each distinct text once per connection under a name
 * derived from it (src/database/sql.ts statementName).
 *
 * Every list and export walks the keyset (created_at, id): `ORDER BY created_at DESC, id DESC`
 * (or both ASC), and the next page starts strictly after the last row with a row comparison, which
 * PostgreSQL answers from the (filter column, created_at DESC, id DESC) indexes of the
 * `finance_indexes` migration. No OFFSET anywhere.
 */
import type { CreatedAtCursor } from '../common/pagination';
import { type SqlStatement, statementName } from '../database/sql';
import type { TransactionDirection, TransactionKind, TransactionStatus } from '../generated/prisma/enums';
import { LEDGER_PAGE_COLUMNS, LEDGER_ROW_COLUMNS } from './ledger-row';

/** The filters of a finance read, already validated and typed. Every present one must match. */
export interface TransactionFilter {
  kind?: TransactionKind;
  status?: TransactionStatus;
  direction?: TransactionDirection;
  currency?: string;
  customerId?: string;
  cardId?: string;
  beneficiaryId?: string;
  reference?: string;
  /** created_at ≥ from. */
  from?: Date;
  /** created_at < to. */
  to?: Date;
  /** amount ≥ amountMin (minor units). */
  amountMin?: bigint;
  /** amount ≤ amountMax (minor units). */
  amountMax?: bigint;
  /**
   * created_by = createdBy: the ownership rule's restriction (OWNERSHIP=client, audit/ownership.ts),
   * set by the service from the request, never from the query string.
   */
  createdBy?: string;
}

export type SortOrder = 'asc' | 'desc';

/** Equality filters and their columns, in a fixed order (the statement text must be stable). */
const EQUALS: Array<[keyof TransactionFilter, string]> = [
  ['kind', 'kind'],
  ['status', 'status'],
  ['direction', 'direction'],
  ['currency', 'currency'],
  ['customerId', 'customer_id'],
  ['cardId', 'card_id'],
  ['beneficiaryId', 'beneficiary_id'],
  ['reference', 'reference'],
  ['createdBy', 'created_by'],
];

/** Parameter casts, so that a prepared statement's parameter types match the indexed columns. */
const CASTS: Partial<Record<keyof TransactionFilter, string>> = {
  kind: '::"TransactionKind"',
  status: '::"TransactionStatus"',
  direction: '::"TransactionDirection"',
  customerId: '::uuid',
  cardId: '::uuid',
  beneficiaryId: '::uuid',
  createdBy: '::uuid',
};

/** The WHERE conditions of `filter`, appending their values to `values` ($n numbering follows it). */
export function filterConditions(filter: TransactionFilter, values: unknown[]): string[] {
  const where: string[] = [];
  const bind = (value: unknown) => {
    values.push(value);
    return `$${values.length}`;
  };
  for (const [key, column] of EQUALS) {
    const value = filter[key];
    if (value === undefined) continue;
    where.push(`t.${column} = ${bind(value)}${CASTS[key] ?? ''}`);
  }
  if (filter.from) where.push(`t.created_at >= ${bind(filter.from)}::timestamptz`);
  if (filter.to) where.push(`t.created_at < ${bind(filter.to)}::timestamptz`);
  if (filter.amountMin !== undefined) where.push(`t.amount >= ${bind(filter.amountMin.toString())}::bigint`);
  if (filter.amountMax !== undefined) where.push(`t.amount <= ${bind(filter.amountMax.toString())}::bigint`);
  return where;
}

function orderBy(order: SortOrder): string {
  return order === 'asc' ? 'ORDER BY t.created_at ASC, t.id ASC' : 'ORDER BY t.created_at DESC, t.id DESC';
}

/**
 * One page: `limit + 1` rows after `after` (so the caller can tell whether a next page exists),
 * in `order` on (created_at, id).
 */
export function listStatement(
  filter: TransactionFilter,
  order: SortOrder,
  after: CreatedAtCursor | undefined,
  limit: number,
): SqlStatement {
  const values: unknown[] = [];
  const where = filterConditions(filter, values);
  if (after) {
    values.push(after.createdAt, after.id);
    const op = order === 'asc' ? '>' : '<';
    where.push(`(t.created_at, t.id) ${op} ($${values.length - 1}::timestamptz, $${values.length}::uuid)`);
  }
  values.push(limit + 1);
  const text = [
    `SELECT ${LEDGER_PAGE_COLUMNS} FROM transactions t`,
    where.length ? `WHERE ${where.join(' AND ')}` : '',
    orderBy(order),
    `LIMIT $${values.length}`,
  ]
    .filter(Boolean)
    .join(' ');
  return { name: statementName('tx_list', text), text, values };
}

/** Every matching row in `order`, for the CSV export (read through a cursor, never all at once). */
export function exportStatement(filter: TransactionFilter, order: SortOrder): Omit<SqlStatement, 'name'> {
  const values: unknown[] = [];
  const where = filterConditions(filter, values);
  const text = [
    `SELECT ${LEDGER_ROW_COLUMNS} FROM transactions t`,
    where.length ? `WHERE ${where.join(' AND ')}` : '',
    orderBy(order),
  ]
    .filter(Boolean)
    .join(' ');
  return { text, values };
}

/** Count and sums of amount and fee per (currency, kind, status); sums are numeric rendered as text. */
export function summaryStatement(filter: TransactionFilter): SqlStatement {
  const values: unknown[] = [];
  const where = filterConditions(filter, values);
  const text = [
    `SELECT t.currency, t.kind, t.status, count(*)::int AS count, sum(t.amount)::text AS amount, sum(t.fee)::text AS fee`,
    'FROM transactions t',
    where.length ? `WHERE ${where.join(' AND ')}` : '',
    'GROUP BY t.currency, t.kind, t.status ORDER BY t.currency, t.kind::text, t.status::text',
  ]
    .filter(Boolean)
    .join(' ');
  return { name: statementName('tx_sum', text), text, values };
}

/**
 * Net money per currency over the succeeded rows (`status = success`) that match `filter`: money in
 * (credits' amounts), money out (debits' amounts) and fees (every such row's fee, in the row's
 * currency), sums as numeric rendered as text. A swap moves money between two currencies of the
 * same customer: its source amount is a debit of its own currency (the row), and its target amount
 * (`counter_amount`) is counted as money in of its target currency (`counter_currency`), with the
 * currency filter applied to that target currency and the direction filter as `credit`. A payout's
 * counter amount is the beneficiary's, not ours: not counted. Net = in − out − fees (the caller).
 */
export function netStatement(filter: TransactionFilter): SqlStatement {
  const values: unknown[] = [];
  const rows = filterConditions(filter, values);
  // The swap's target leg: the same filters, but currency is the target currency and direction is credit.
  const leg = filterConditions({ ...filter, currency: undefined, direction: undefined }, values);
  if (filter.currency !== undefined) {
    values.push(filter.currency);
    leg.push(`t.counter_currency = $${values.length}`);
  }
  if (filter.direction !== undefined) {
    values.push(filter.direction);
    leg.push(`$${values.length}::"TransactionDirection" = 'credit'`);
  }
  const text = [
    'SELECT n.currency, sum(n.money_in)::text AS "moneyIn", sum(n.money_out)::text AS "moneyOut",',
    'sum(n.fee)::text AS fees FROM (',
    "SELECT t.currency, CASE WHEN t.direction = 'credit' THEN t.amount ELSE 0 END AS money_in,",
    "CASE WHEN t.direction = 'debit' THEN t.amount ELSE 0 END AS money_out, t.fee",
    `FROM transactions t WHERE ${[...rows, "t.status = 'success'"].join(' AND ')}`,
    'UNION ALL',
    'SELECT t.counter_currency, t.counter_amount, 0, 0 FROM transactions t WHERE',
    [
      ...leg,
      "t.status = 'success'",
      "t.kind = 'swap'",
      't.counter_currency IS NOT NULL',
      't.counter_amount IS NOT NULL',
    ].join(' AND '),
    ') n GROUP BY n.currency ORDER BY n.currency',
  ].join(' ');
  return { name: statementName('tx_net', text), text, values };
}

const WITH_HISTORY = `SELECT ${LEDGER_ROW_COLUMNS},
    COALESCE((SELECT json_agg(json_build_object('from', c."from", 'to', c."to", 'source', c.source, 'at', c.at,
                                              'actorId', c.actor_id, 'decision', c.payload->>'decision',
                                              'reason', c.payload->>'reason')
                              ORDER BY c.at, c.id)
              FROM transaction_status_changes c WHERE c.transaction_id = t.id), '[]'::json) AS "statusHistory"
    FROM transactions t WHERE t.id = $1::uuid`;

/** One transaction with its status history (oldest first) as a JSON array, in one round trip. */
export const GET_WITH_HISTORY: SqlStatement = {
  name: 'tx_get_with_history',
  text: WITH_HISTORY,
  values: [],
};

/** GET_WITH_HISTORY limited to the rows of one client (`$2`, OWNERSHIP=client): another's is not found. */
export const GET_OWN_WITH_HISTORY: SqlStatement = {
  name: 'tx_get_own_with_history',
  text: `${WITH_HISTORY} AND t.created_by = $2::uuid`,
  values: [],
};

/**
 * The statement reading transaction `id` with its history: any row, or with `createdBy` (the
 * ownership rule's restriction) only a row that client created.
 */
export function getWithHistoryStatement(id: string, createdBy?: string): SqlStatement {
  return createdBy === undefined
    ? { ...GET_WITH_HISTORY, values: [id] }
    : { ...GET_OWN_WITH_HISTORY, values: [id, createdBy] };
}
