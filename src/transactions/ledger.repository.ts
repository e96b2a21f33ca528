import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { idempotencyKeyCtes, KEY_HELD, type ResourceKeySql } from '../common/idempotency/idempotency-context';
import { decodeCursor } from '../common/pagination';
import { isUniqueViolation, PrismaService } from '../database/prisma.service';
import { ReadPool } from '../database/read-pool';
import { binder, READ_POOL_TYPES, sqlStatement } from '../database/sql';
import {
  Prisma,
  type StatusChangeSource,
  type Transaction,
  type TransactionKind,
  type TransactionStatus,
} from '../generated/prisma/client';
import { subscribedTo } from '../outbound/outbox.service';
import { CARD_MOVEMENT_COLUMNS, type CardMovementRow, LEDGER_ROW_COLUMNS, type LedgerRow } from './ledger-row';

type Tx = Prisma.TransactionClient;

/** Every column of `transactions`, named as the Transaction type's fields (for raw RETURNING). */
const TRANSACTION_COLUMNS = Prisma.raw(`${LEDGER_ROW_COLUMNS}, t.provider_payload AS "providerPayload"`);

/**
 * The columns of `transactions` the raw writes (`insert`, `moveOnce`) set, by Transaction field:
 * column name and SQL type of the parameter's cast.
 */
const WRITABLE_COLUMNS: Readonly<Record<string, readonly [column: string, type: string]>> = {
  id: ['id', 'uuid'],
  kind: ['kind', '"TransactionKind"'],
  direction: ['direction', '"TransactionDirection"'],
  status: ['status', '"TransactionStatus"'],
  amount: ['amount', 'bigint'],
  fee: ['fee', 'bigint'],
  currency: ['currency', 'text'],
  counterAmount: ['counter_amount', 'bigint'],
  counterCurrency: ['counter_currency', 'text'],
  exchangeRate: ['exchange_rate', 'numeric'],
  customerId: ['customer_id', 'uuid'],
  beneficiaryId: ['beneficiary_id', 'uuid'],
  cardId: ['card_id', 'uuid'],
  providerId: ['provider_id', 'text'],
  reference: ['reference', 'text'],
  description: ['description', 'text'],
  failureReason: ['failure_reason', 'text'],
  confirmRequestedAt: ['confirm_requested_at', 'timestamptz'],
  providerPayload: ['provider_payload', 'jsonb'],
  createdAt: ['created_at', 'timestamptz'],
  updatedAt: ['updated_at', 'timestamptz'],
  completedAt: ['completed_at', 'timestamptz'],
  createdBy: ['created_by', 'uuid'],
  approvedAt: ['approved_at', 'timestamptz'],
};

/** Fields a raw move may set besides its status (`moveOnce`'s patch): the provider's answer and the failure. */
const PATCHABLE_IN_MOVE = new Set([
  'fee',
  'counterAmount',
  'counterCurrency',
  'exchangeRate',
  'providerId',
  'providerPayload',
  'failureReason',
]);

/** A Prisma JSON null marker (Prisma.JsonNull, DbNull, AnyNull): stored as SQL NULL. */
function isJsonNullMarker(value: unknown): boolean {
  return value === Prisma.JsonNull || value === Prisma.DbNull || value === Prisma.AnyNull;
}

/**
 * `fields` as [column, cast parameter] pairs for a raw write, or null when one of them cannot be
 * written raw (an unknown field, or a Prisma update operation such as `{ increment }`): the caller
 * then writes through Prisma. Undefined fields are left out.
 */
function rawColumns(fields: Record<string, unknown>): Array<[string, Prisma.Sql]> | null {
  const columns: Array<[string, Prisma.Sql]> = [];
  for (const [field, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    const spec = WRITABLE_COLUMNS[field];
    if (!spec) return null;
    const [column, type] = spec;
    let param: unknown;
    if (value === null || isJsonNullMarker(value)) param = null;
    else if (type === 'jsonb') param = JSON.stringify(value);
    else if (type === 'numeric') {
      if (value instanceof Prisma.Decimal) param = value.toString();
      else if (typeof value === 'string' || typeof value === 'number') param = String(value);
      else return null;
    } else if (value instanceof Date || typeof value !== 'object') param = value;
    else return null;
    columns.push([column, Prisma.sql`${param}::${Prisma.raw(type)}`]);
  }
  return columns;
}

/**
 * Whether `patch` can go with a move in one raw statement (`moveOnce`): every field is one of the
 * provider's answer or the failure reason, with a plain value (a failure reason only as text: the
 * one statement never clears it).
 */
export function patchFitsOneStatement(patch: Record<string, unknown> | undefined): boolean {
  if (!patch) return true;
  if (patch.failureReason !== undefined && typeof patch.failureReason !== 'string') return false;
  return Object.keys(patch).every((field) => PATCHABLE_IN_MOVE.has(field)) && rawColumns(patch) !== null;
}

/**
 * `row` with a one-statement patch's answer fields applied as the database stores them (bigint
 * minor units, exact decimal rate), for the gateway event built before the move is written.
 */
export function withAnswer(row: Transaction, patch: Record<string, unknown> | undefined): Transaction {
  if (!patch) return row;
  const next: Transaction = { ...row };
  const bigintOrNull = (value: unknown) => (value === null ? null : BigInt(value as bigint | number | string));
  if (patch.fee !== undefined) next.fee = BigInt(patch.fee as bigint | number);
  if (patch.counterAmount !== undefined) next.counterAmount = bigintOrNull(patch.counterAmount);
  if (patch.counterCurrency !== undefined) next.counterCurrency = patch.counterCurrency as string | null;
  if (patch.exchangeRate !== undefined)
    next.exchangeRate =
      patch.exchangeRate === null ? null : new Prisma.Decimal(patch.exchangeRate as string | number | Prisma.Decimal);
  if (patch.providerId !== undefined) next.providerId = patch.providerId as string | null;
  if (patch.providerPayload !== undefined) next.providerPayload = patch.providerPayload;
  return next;
}

/**
 * The CTEs `ins` (the row of `columns`, RETURNING every column named as the Transaction type's
 * fields) and `history` (its first entry, from null to its status, at `now`), both written only if
 * `onlyIf` holds: the one text every raw insert of a ledger row uses.
 */
function insertCtes(columns: Array<[string, Prisma.Sql]>, entry: StatusChangeEntry, onlyIf: Prisma.Sql, now: Date) {
  return Prisma.sql`
      ins AS (
        INSERT INTO transactions AS t (${Prisma.join(columns.map(([column]) => Prisma.raw(column)))})
        SELECT ${Prisma.join(columns.map(([, value]) => value))} WHERE ${onlyIf}
        RETURNING ${TRANSACTION_COLUMNS}),
      history AS (
        INSERT INTO transaction_status_changes (transaction_id, "from", "to", source, at, actor_id)
        SELECT id, NULL, status, ${entry.source}::"StatusChangeSource", ${now}::timestamptz, ${entry.actorId}::uuid
        FROM ins)`;
}

/**
 * A new ledger row for `ledgerInsertCtes`: its id and status set, its currency given or computed in
 * the statement (e.g. a card's, read under the card's lock).
 */
export type WriteAheadRow = Omit<Prisma.TransactionUncheckedCreateInput, 'currency'> & {
  id: string;
  status: TransactionStatus;
  currency?: string;
};

/**
 * The write-ahead insert of ledger row `data` as two CTEs of a caller's ONE statement (a
 * data-modifying CTE sent through node-postgres, PrismaService.sql), for a write that must happen
 * together with another (a swap quote claimed, a card locked): `ins` (the row, RETURNING every
 * column named as the Transaction type's fields) and `history` (its first entry, from null to its
 * status), both written only if `onlyIf` holds (an SQL condition over the caller's earlier CTEs,
 * e.g. that its claim returned a row). `computed`: fields whose value is an SQL expression over
 * those CTEs instead of a value of `data` (e.g. a card's currency read under its lock). INSERTED is
 * the condition, later in the statement, that the row was written. `data.id` must be set (the
 * caller names the row in its other CTEs); its currency given there or in `computed`.
 * @throws Error when a field cannot be written raw (an object other than a Date, Decimal or JSON
 * payload): such data goes through LedgerService.record.
 */
export function ledgerInsertCtes(
  data: WriteAheadRow,
  entry: StatusChangeEntry,
  onlyIf: Prisma.Sql,
  computed: Partial<Record<keyof Prisma.TransactionUncheckedCreateInput, Prisma.Sql>> = {},
): Prisma.Sql {
  const now = new Date();
  const columns = rawColumns({ createdAt: now, updatedAt: now, ...data });
  if (!columns) throw new Error('ledgerInsertCtes: a field of this row cannot be written in one raw statement');
  for (const [field, value] of Object.entries(computed)) {
    const spec = WRITABLE_COLUMNS[field];
    if (!spec || !value) throw new Error(`ledgerInsertCtes: ${field} cannot be computed`);
    const at = columns.findIndex(([column]) => column === spec[0]);
    const cell: [string, Prisma.Sql] = [spec[0], Prisma.sql`(${value})::${Prisma.raw(spec[1])}`];
    if (at >= 0) columns[at] = cell;
    else columns.push(cell);
  }
  if (!columns.some(([column]) => column === 'currency')) throw new Error('ledgerInsertCtes: no currency');
  return insertCtes(columns, entry, onlyIf, now);
}

/** The condition, inside insertAlone's statement, that the row was inserted (for its `audit` statement). */
export const INSERTED = Prisma.sql`EXISTS (SELECT 1 FROM ins)`;

/**
 * What insertGuarded reads in the row's own statement, and writes the row only if it holds: `with`,
 * CTE definitions (`name AS (…)`, comma-separated) placed first; `from`, the name of one of them
 * that reads exactly one row, whose columns (`fields`, named apart from the ledger row's) come back
 * as `found`; `onlyIf`, an SQL condition on them; `columns`, ledger row fields whose values are SQL
 * expressions on them (e.g. `(SELECT currency FROM refs)`).
 */
export interface InsertGuard<F extends object = Record<string, unknown>> {
  with: Prisma.Sql;
  from: Prisma.Sql;
  fields: ReadonlyArray<keyof F & string>;
  onlyIf: Prisma.Sql;
  columns: Partial<Record<keyof Prisma.TransactionUncheckedCreateInput, Prisma.Sql>>;
}

/** The condition, inside moveOnce's statement, that the move was made (for its `also` statement). */
export const MOVED = Prisma.sql`EXISTS (SELECT 1 FROM upd)`;

/** The card money movement kinds of the ledger. */
export const CARD_TRANSACTION_KINDS: TransactionKind[] = ['card_topup', 'card_withdrawal', 'card_spend'];

/** Who moved a row and why, as written on its history entry (transaction_status_changes). */
export interface StatusChangeEntry {
  source: StatusChangeSource;
  payload?: Prisma.InputJsonValue;
  actorId: string | null;
}

/** A gateway event to write to the outbox with a move: its type, and itself (as JSON) is the message's payload. */
export interface LedgerEventMessage {
  type: string;
}

/**
 * The ledger's tables: `transactions` and its history `transaction_status_changes` (and, in the one
 * statement of `moveOnce`, the outbox messages of the move). The only code that reads or writes
 * them through Prisma; which moves are allowed is LedgerService's (transaction-state.ts). Methods
 * taking `db` run inside the caller's database transaction.
 */
@Injectable()
export class LedgerRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly reads: ReadPool,
  ) {}

  /** Runs `run` in one database transaction (committed when it resolves, rolled back when it throws). */
  withTransaction<T>(run: (tx: Tx) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(run);
  }

  /**
   * Inserts a ledger row with its first history entry (from null to its status), inside `db`, in
   * ONE SQL statement (a data-modifying CTE). With `note` (the Idempotency-Key's note of this row as
   * its resource, `idempotentResourceNote`: an `UPDATE … RETURNING 1`), the note runs in that
   * statement too, and `noteKept` says whether it found the claim still ours (the caller throws,
   * rolling `db` back, when not). Fields that cannot be written raw go through Prisma (two statements).
   */
  async insert(
    db: Tx,
    data: Prisma.TransactionUncheckedCreateInput & { status: TransactionStatus },
    entry: StatusChangeEntry,
    note: Prisma.Sql | null = null,
  ): Promise<Transaction & { noteKept?: boolean }> {
    const now = new Date();
    const columns = rawColumns({ id: randomUUID(), createdAt: now, updatedAt: now, ...data });
    if (!columns) {
      const row = await db.transaction.create({ data });
      await db.transactionStatusChange.create({
        data: { transactionId: row.id, from: null, to: row.status, source: entry.source, actorId: entry.actorId },
      });
      return note ? { ...row, noteKept: (await db.$queryRaw<unknown[]>(note)).length > 0 } : row;
    }
    const [inserted] = await db.$queryRaw<Array<Transaction & { noteKept: boolean }>>`
      WITH ${insertCtes(columns, entry, Prisma.sql`true`, now)},
      note AS (${note ?? Prisma.sql`SELECT 1 WHERE false`})
      SELECT ins.*, EXISTS (SELECT 1 FROM note) AS "noteKept" FROM ins`;
    const { noteKept, ...row } = inserted;
    return note ? { ...row, noteKept } : row;
  }

  /**
   * `insert` on its own, as ONE SQL statement sent through node-postgres (PrismaService.sql: no
   * interactive transaction, no Prisma runtime; the statement commits alone): the Idempotency-Key's
   * `note` (when given, `idempotentResourceNote`: an `UPDATE … RETURNING 1` of the claim) runs
   * first, and the row and its first history entry are written only if the note found the claim
   * still ours; `audit` (the request's audit event, `auditedChangeSql` conditioned on INSERTED)
   * runs in the same statement — all of it or nothing. Returns the row (the
   * Transaction type, read as Prisma reads it), `lost` when the note found the claim lost (nothing
   * written: the caller throws `lostClaim()` and must not call the provider), or null when a field
   * cannot be written raw (nothing written: the caller goes through `insert`).
   */
  async insertAlone(
    data: Prisma.TransactionUncheckedCreateInput & { status: TransactionStatus },
    entry: StatusChangeEntry,
    note: Prisma.Sql | null,
    audit: Prisma.Sql | null,
  ): Promise<Transaction | 'lost' | null> {
    const now = new Date();
    const columns = rawColumns({ id: randomUUID(), createdAt: now, updatedAt: now, ...data });
    if (!columns) return null;
    const [inserted] = await this.prisma.sql<Transaction>(
      Prisma.sql`
      WITH note AS (${note ?? Prisma.sql`SELECT 1`}),
      ${insertCtes(columns, entry, Prisma.sql`EXISTS (SELECT 1 FROM note)`, now)},
      audit AS (${audit ? Prisma.sql`${audit}` : Prisma.sql`SELECT 1 WHERE false`})
      SELECT ins.* FROM ins`,
      READ_POOL_TYPES,
    );
    return inserted ?? 'lost';
  }

  /**
   * insertAlone with a `guard`: reads the row depends on, made in the same statement (e.g. a payout's
   * customer and beneficiary), and optionally the Idempotency-Key's deferred claim (`claim`,
   * idempotentClaimSql: the key's record inserted in this statement) — so that the request's first
   * write is its only statement before the provider call. ONE statement sent through node-postgres
   * (it commits alone; prepared once per connection): the guard's CTEs are read; `claim` (when given) inserts the key's record,
   * noting this row as its resource only where the guard holds; `note` (when given instead, for a
   * claim already held: idempotentResourceNote conditioned on the guard) notes it; then, only if the
   * guard holds and the claim is the request's, the row, its first history entry and `audit` (the
   * request's audit event, conditioned on INSERTED) are written — all of it or nothing. Fields of
   * `guard.columns` take their values from the guard's reads (e.g. the beneficiary's currency).
   * Returns the row (null when not written), `keyHeld` (the deferred claim's record was inserted:
   * false without `claim`), `guardHeld` (the guard's condition held: if the row was not written
   * nonetheless, the claim was not the request's), and `found`: the guard's `from` row (its
   * `fields`), for the caller to say why nothing was written. The row and its history entry are
   * ledgerInsertCtes' (the guard's `columns` as its `computed` fields).
   * @throws Error when a field cannot be written raw (nothing written).
   */
  async insertGuarded<F extends object>(
    data: WriteAheadRow,
    entry: StatusChangeEntry,
    idempotency: ResourceKeySql,
    audit: Prisma.Sql | null,
    guard: InsertGuard<F>,
  ): Promise<{ row: Transaction | null; keyHeld: boolean; guardHeld: boolean; found: F }> {
    const [result] = await this.prisma.sql<Record<string, unknown>>(
      Prisma.sql`
      WITH ${guard.with},
      ${idempotencyKeyCtes(idempotency)},
      ${ledgerInsertCtes(data, entry, Prisma.sql`(${guard.onlyIf}) AND EXISTS (SELECT 1 FROM note)`, guard.columns)},
      audit AS (${audit ?? Prisma.sql`SELECT 1 WHERE false`})
      SELECT ins.*, ${KEY_HELD}, (${guard.onlyIf}) AS "guardHeld", g.*
      FROM ${guard.from} AS g LEFT JOIN ins ON true`,
      READ_POOL_TYPES,
      'ledger_insert_guarded',
    );
    const found: Record<string, unknown> = {};
    for (const field of guard.fields) {
      found[field] = result[field];
      delete result[field];
    }
    const { keyHeld, guardHeld, ...row } = result as Transaction & { keyHeld: boolean; guardHeld: boolean };
    // The guard's `fields` are the columns its CTE reads, typed by the guard (InsertGuard<F>).
    return { row: row.id ? row : null, keyHeld, guardHeld, found: found as F };
  }

  /** Locks row `id` (FOR UPDATE, until `db` ends) and returns its kind and status; undefined when there is none. */
  async lockStatus(db: Tx, id: string): Promise<Pick<Transaction, 'id' | 'kind' | 'status'> | undefined> {
    const [current] = await db.$queryRaw<Array<Pick<Transaction, 'id' | 'kind' | 'status'>>>`
      SELECT id, kind, status FROM transactions WHERE id = ${id}::uuid FOR UPDATE`;
    return current;
  }

  /** Row `id` (read inside `db` when given), or null. */
  find(id: string, db: Tx = this.prisma): Promise<Transaction | null> {
    return db.transaction.findUnique({ where: { id } });
  }

  /** Sets `patch` on row `id` without moving its status (no history entry). */
  update(db: Tx, id: string, patch: Prisma.TransactionUncheckedUpdateInput): Promise<Transaction> {
    return db.transaction.update({ where: { id }, data: patch });
  }

  /**
   * Writes a move the caller has decided under the row's lock (`lockStatus`): row `id` from `from`
   * to `to` with `patch` (and `completedAt` when `final`), and its history entry, inside `db`.
   */
  async move(
    db: Tx,
    id: string,
    from: TransactionStatus,
    to: TransactionStatus,
    patch: Prisma.TransactionUncheckedUpdateInput,
    final: boolean,
    entry: StatusChangeEntry,
  ): Promise<Transaction> {
    const row = await db.transaction.update({
      where: { id },
      data: { ...patch, status: to, ...(final ? { completedAt: new Date() } : {}) },
    });
    await db.transactionStatusChange.create({
      data: { transactionId: id, from, to, source: entry.source, payload: entry.payload, actorId: entry.actorId },
    });
    return row;
  }

  /** A claimMove guard: the row (aliased `t`) was created before `createdBefore`. */
  createdBeforeGuard(createdBefore: Date): Prisma.Sql {
    return Prisma.sql`t.created_at < ${createdBefore}::timestamptz`;
  }

  /**
   * Claims a move, inside `db`: ONE conditional `UPDATE … WHERE status = from` (with the history
   * entry written in the same statement, a data-modifying CTE) moves row `id` of `kind` from exactly
   * `from` to `to`, setting `updated_at`, `completed_at` when `final`, `failure_reason` when given,
   * and `patch` (fields written raw: rawColumns), only where `guard` (an SQL condition on the row,
   * aliased `t`) holds too. The UPDATE takes the row's lock: a concurrent claim of the same row
   * waits for it, then reads the row as committed, finds its status moved and moves nothing — so of
   * any number of callers exactly one wins. Returns the moved row (as Prisma reads it), or null when
   * nothing moved (no such row, another status, or the guard did not hold): nothing written.
   * @throws Error when a field of `patch` cannot be written raw (a programming error).
   */
  async claimMove(
    db: Tx,
    id: string,
    kind: TransactionKind,
    from: TransactionStatus,
    to: TransactionStatus,
    move: {
      now: Date;
      final: boolean;
      failureReason: string | null;
      entry: StatusChangeEntry;
      patch?: Record<string, unknown>;
      guard?: Prisma.Sql;
    },
  ): Promise<Transaction | null> {
    const { now, final, failureReason, entry } = move;
    const columns = rawColumns(move.patch ?? {});
    if (!columns) throw new Error('claimMove: this patch cannot be written raw');
    const patch = columns.map(([column, value]) => Prisma.sql`, ${Prisma.raw(column)} = ${value}`);
    const [row] = await db.$queryRaw<Transaction[]>`
      WITH upd AS (
        UPDATE transactions t
        SET status = ${to}::"TransactionStatus",
            updated_at = ${now}::timestamptz,
            completed_at = COALESCE(${final ? now : null}::timestamptz, t.completed_at),
            failure_reason = COALESCE(${failureReason}::text, t.failure_reason)${patch.length ? Prisma.join(patch, '') : Prisma.empty}
        WHERE t.id = ${id}::uuid AND t.kind = ${kind}::"TransactionKind" AND t.status = ${from}::"TransactionStatus"
          AND (${move.guard ?? Prisma.sql`true`})
        RETURNING ${TRANSACTION_COLUMNS}),
      history AS (
        INSERT INTO transaction_status_changes (transaction_id, "from", "to", source, at, payload, actor_id)
        SELECT id, ${from}::"TransactionStatus", ${to}::"TransactionStatus", ${entry.source}::"StatusChangeSource",
               ${now}::timestamptz, ${entry.payload === undefined ? null : JSON.stringify(entry.payload)}::jsonb,
               ${entry.actorId}::uuid
        FROM upd)
      SELECT upd.* FROM upd`;
    return row ?? null;
  }

  /**
   * Row `id` read without a lock in one statement (the fast path's first read), or undefined.
   * Sent through node-postgres (PrismaService.sql) as a prepared statement (`ledger_peek`: every
   * single callback's move reads it), typed as Prisma reads it.
   */
  async peek(id: string): Promise<Transaction | undefined> {
    const [row] = await this.prisma.sql<Transaction>(
      Prisma.sql`SELECT ${TRANSACTION_COLUMNS} FROM transactions t WHERE t.id = ${id}::uuid`,
      READ_POOL_TYPES,
      'ledger_peek',
    );
    return row;
  }

  /**
   * Claim "move row `id` to `to` once, if its status is one of `from`", as ONE SQL statement (a CTE):
   * lock the row, move it only when its current status is in `from` (setting `updated_at`,
   * `completed_at` when `final`, and `failure_reason` when given), write the history entry with the
   * status it left, and insert `event` (when given) into the outbox for every active subscription
   * taking its type — atomically. Null when nothing moved: no row `id`, or its status (read under
   * the lock) is not in `from` (a refused move, or another caller moved it first: the lost race).
   * An interactive Prisma transaction costs about 2 ms of CPU per move against 0.4 ms for this.
   * It also sets `patch` (fields of the provider's answer: fee, counterAmount,
   * counterCurrency, exchangeRate, providerId, providerPayload, failureReason; `patchFitsOneStatement`
   * says whether a patch qualifies) in the same statement, and returning the moved row with `from`,
   * the status it left (read under the lock). `also`, a statement conditioned on MOVED, runs in the
   * same statement (`alsoDone`: it returned a row). Null when nothing moved. Sent through
   * node-postgres (PrismaService.sql; a raw Prisma query costs the gateway ~450 µs of CPU against
   * ~50 µs), prepared once per connection (its text takes a few shapes), the row typed as Prisma reads it.
   * @throws Error when `patch` does not fit one statement (check with patchFitsOneStatement first).
   */
  async moveOnce(
    id: string,
    from: TransactionStatus[],
    to: TransactionStatus,
    move: {
      now: Date;
      final: boolean;
      failureReason: string | null;
      entry: StatusChangeEntry;
      patch?: Record<string, unknown>;
      /** A statement to run with the move (`UPDATE … RETURNING 1`, conditioned on MOVED), e.g. the request's answer. */
      also?: Prisma.Sql | null;
      /**
       * More statements to run with the move, each conditioned on MOVED by the caller (the move's
       * effect on another table: a card's balance, a swap's quote); their rows are not read.
       */
      effects?: Prisma.Sql[];
    },
    event: LedgerEventMessage | null,
  ): Promise<{ row: Transaction; from: TransactionStatus; alsoDone: boolean } | null> {
    const { now, final, failureReason, entry } = move;
    const { failureReason: _reason, ...rest } = move.patch ?? {};
    if (!patchFitsOneStatement(rest)) throw new Error('moveOnce: this patch cannot be written in one statement');
    const patch = (rawColumns(rest) ?? []).map(([column, value]) => Prisma.sql`, ${Prisma.raw(column)} = ${value}`);
    const effects = move.effects?.length
      ? Prisma.join(
          move.effects.map((effect, i) => Prisma.sql`, ${Prisma.raw(`effect_${i}`)} AS (${effect})`),
          '',
        )
      : Prisma.empty;
    const rows = await this.prisma.sql<Transaction & { previousStatus: TransactionStatus; alsoDone: boolean }>(
      Prisma.sql`
      WITH cur AS (SELECT id, status FROM transactions WHERE id = ${id}::uuid FOR UPDATE),
      upd AS (
        UPDATE transactions t
        SET status = ${to}::"TransactionStatus",
            updated_at = ${now}::timestamptz,
            completed_at = COALESCE(${final ? now : null}::timestamptz, t.completed_at),
            failure_reason = COALESCE(${failureReason}::text, t.failure_reason)${patch.length ? Prisma.join(patch, '') : Prisma.empty}
        FROM cur
        WHERE t.id = cur.id AND cur.status::text = ANY(${from}::text[])
        RETURNING ${TRANSACTION_COLUMNS}, cur.status AS "previousStatus"),
      history AS (
        INSERT INTO transaction_status_changes (transaction_id, "from", "to", source, at, payload, actor_id)
        SELECT id, "previousStatus", ${to}::"TransactionStatus", ${entry.source}::"StatusChangeSource", ${now}::timestamptz,
               ${entry.payload === undefined ? null : JSON.stringify(entry.payload)}::jsonb, ${entry.actorId}::uuid
        FROM upd),
      outbox AS (
        INSERT INTO outbox_messages (id, subscription_id, event_type, payload, next_attempt_at)
        SELECT gen_random_uuid(), s.id, ${event?.type ?? null}::text, ${event ? JSON.stringify(event) : null}::jsonb,
               ${now}::timestamptz
        FROM webhook_subscriptions s, upd
        WHERE ${event ? subscribedTo(event.type) : Prisma.sql`false`}),
      also AS (${move.also ?? Prisma.sql`SELECT 1 WHERE false`})${effects}
      SELECT upd.*, EXISTS (SELECT 1 FROM also) AS "alsoDone" FROM upd`,
      READ_POOL_TYPES,
      'ledger_move_once',
    );
    if (rows.length === 0) return null;
    const { previousStatus, alsoDone, ...moved } = rows[0];
    return { row: moved, from: previousStatus, alsoDone };
  }

  /**
   * The row of `kind` matched by the provider's id, else by the reference the gateway sent; when
   * both match different rows, the provider id wins. Null when nothing matches. Sent through
   * node-postgres (PrismaService.sql: every callback of a single event reads it), typed as Prisma reads it.
   */
  async findByProviderIdOrReference(
    kind: TransactionKind,
    providerId: string | null,
    reference: string | null,
  ): Promise<Transaction | null> {
    const [row] = await this.prisma.sql<Transaction>(
      Prisma.sql`
      SELECT ${TRANSACTION_COLUMNS} FROM transactions t
      WHERE t.kind = ${kind}::"TransactionKind" AND (t.provider_id = ${providerId}::text OR t.reference = ${reference}::text)
      ORDER BY (t.provider_id = ${providerId}::text) DESC NULLS LAST
      LIMIT 1`,
      READ_POOL_TYPES,
    );
    return row ?? null;
  }

  // ---- Card movements (rows with a card id): the reads and the one conditional write the card
  // ledger (src/cards, through LedgerService) needs besides inserts and status moves.

  /**
   * The ledger row of a movement the provider reports for a card: the row with the provider's
   * id (whatever its card or kind: the id is unique), else the row with its reference when that
   * row is this card's and of this kind. Null when neither.
   */
  async findCardMovement(
    cardId: string,
    kind: TransactionKind,
    providerId: string,
    reference: string | null,
  ): Promise<Transaction | null> {
    const byId = await this.prisma.transaction.findUnique({ where: { providerId } });
    if (byId) return byId;
    if (!reference) return null;
    const byReference = await this.prisma.transaction.findUnique({ where: { reference } });
    return byReference?.cardId === cardId && byReference.kind === kind ? byReference : null;
  }

  /** The card's movement with the provider's id, else the one with the reference. Null when neither. */
  async findCardSpend(
    cardId: string,
    providerId: string | null,
    reference: string | null,
  ): Promise<Transaction | null> {
    const byId = providerId ? await this.prisma.transaction.findFirst({ where: { cardId, providerId } }) : null;
    if (byId) return byId;
    return reference ? this.prisma.transaction.findFirst({ where: { cardId, reference } }) : null;
  }

  /** Whether any ledger row already has `reference`. */
  async referenceTaken(reference: string): Promise<boolean> {
    return (await this.prisma.transaction.count({ where: { reference } })) > 0;
  }

  /**
   * Sets the provider's id on a card movement that has none (the first answer or callback naming
   * it). Conditional: an id already there stays; an id another row already has is left off (the
   * unique violation is swallowed). Returns whether it was set.
   */
  async attachProviderId(id: string, providerId: string, tx: Tx | PrismaService = this.prisma): Promise<boolean> {
    try {
      const set = await tx.transaction.updateMany({ where: { id, providerId: null }, data: { providerId } });
      return set.count === 1;
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      return false;
    }
  }

  /**
   * One page of card `cardId`'s movements, newest first (keyset on createdAt, id: the (card_id,
   * created_at DESC, id DESC) index), `limit + 1` rows, and the card's owner (`createdBy`, for the
   * ownership rule), in one statement on the read pool (a hot read): `card` is null when no card
   * has that id. Rows carry only the columns a movement shows (CardMovementRow).
   * @throws ValidationError (400) on a malformed cursor, before anything is read.
   */
  async cardMovementsPage(
    cardId: string,
    cursor: string | undefined,
    limit: number,
  ): Promise<{ card: { createdBy: string | null } | null; rows: CardMovementRow[] }> {
    const values: unknown[] = [];
    const bind = binder(values);
    const card = bind(cardId, '::uuid');
    const where = [`t.card_id = c.id`, `t.kind IN (${CARD_TRANSACTION_KINDS.map((kind) => `'${kind}'`).join(', ')})`];
    if (cursor) {
      const after = decodeCursor(cursor);
      where.push(`(t.created_at, t.id) < (${bind(after.createdAt, '::timestamptz')}, ${bind(after.id, '::uuid')})`);
    }
    // LEFT JOIN LATERAL: a card without movements still gives its one row (movement columns null).
    const text = `SELECT c.created_by AS "cardCreatedBy", m.* FROM cards c LEFT JOIN LATERAL (
      SELECT ${CARD_MOVEMENT_COLUMNS} FROM transactions t WHERE ${where.join(' AND ')}
      ORDER BY t.created_at DESC, t.id DESC LIMIT ${bind(limit + 1)}) m ON true WHERE c.id = ${card}`;
    const found = await this.reads.rows<CardMovementRow & { cardCreatedBy: string | null }>(
      sqlStatement('card_movements_page', text, values),
    );
    if (found.length === 0) return { card: null, rows: [] };
    return { card: { createdBy: found[0].cardCreatedBy }, rows: found[0].id === null ? [] : found };
  }

  /** The card's movements still open (`created`, `unknown`, `pending`): their references and provider ids. */
  openCardMovements(cardId: string): Promise<Array<{ reference: string; providerId: string | null }>> {
    return this.prisma.transaction.findMany({
      where: { cardId, status: { in: ['created', 'unknown', 'pending'] } },
      select: { reference: true, providerId: true },
    });
  }

  // ---- Many rows at once (provider callbacks applied in batches: WebhooksService). These statements
  // go through node-postgres (PrismaService.sql, the same connections): Prisma's own cost per raw
  // statement is several times the statement's. Rows read are typed as Prisma reads them (READ_POOL_TYPES, src/database/sql.ts).

  /**
   * For each `{providerId, reference}` of `keys`, in order: the row of `kind` matched by the
   * provider's id, else by the reference (the provider id wins when both match different rows), as
   * `findByProviderIdOrReference` would find it, without `providerPayload`; null when nothing
   * matches or neither is given. One statement for all of them.
   */
  async findManyByProviderIdOrReference(
    kind: TransactionKind,
    keys: Array<{ providerId: string | null; reference: string | null }>,
  ): Promise<Array<LedgerRow | null>> {
    if (keys.length === 0) return [];
    const rows = await this.prisma.sql<LedgerRow & { ord: bigint }>(
      Prisma.sql`
      SELECT k.ord, t.* FROM unnest(${keys.map((k) => k.providerId)}::text[], ${keys.map((k) => k.reference)}::text[])
        WITH ORDINALITY AS k(provider_id, reference, ord)
      CROSS JOIN LATERAL (
        SELECT ${Prisma.raw(LEDGER_ROW_COLUMNS)} FROM transactions t
        WHERE t.kind = ${kind}::"TransactionKind" AND (t.provider_id = k.provider_id OR t.reference = k.reference)
        ORDER BY (t.provider_id = k.provider_id) DESC NULLS LAST
        LIMIT 1) t`,
      READ_POOL_TYPES,
    );
    const found: Array<LedgerRow | null> = keys.map(() => null);
    for (const { ord, ...row } of rows) found[Number(ord) - 1] = row;
    return found;
  }

  /**
   * Claim "move each row once, if its status is one of its `from`", for many rows in ONE SQL
   * statement (a CTE), as `moveOnce` does for one: lock the rows (FOR UPDATE, in id order, so
   * two such statements never deadlock), move each whose current status (read under the lock) is in
   * its `from` list to its `to` (setting `updated_at`, `completed_at` when `final`, and
   * `failure_reason` when given), write each moved row's history entry (with the status it left and
   * its own `payload`) and insert its `event` (when given) into the outbox for every active
   * subscription taking its type — atomically: all of it, or nothing when the statement fails.
   * Ids must be distinct. The moves travel as one JSON text parameter (per-row parameters cost the
   * client far more). Returns the ids of the rows moved; a row not among them did not move (no such
   * row, or its status is not in its `from`: refused, or moved first by another caller).
   */
  async moveManyIfFrom(
    moves: Array<{
      id: string;
      from: TransactionStatus[];
      to: TransactionStatus;
      final: boolean;
      failureReason: string | null;
      payload: Prisma.InputJsonValue | undefined;
      event: LedgerEventMessage | null;
    }>,
    common: { now: Date; source: StatusChangeSource; actorId: string | null },
  ): Promise<Set<string>> {
    if (moves.length === 0) return new Set();
    const { now, source, actorId } = common;
    const document = JSON.stringify(
      moves.map((m) => ({
        id: m.id,
        from_list: m.from,
        to_status: m.to,
        final: m.final,
        failure_reason: m.failureReason,
        payload: m.payload ?? null,
        event_type: m.event?.type ?? null,
        event: m.event,
      })),
    );
    const rows = await this.prisma.sql<{ id: string }>(Prisma.sql`
      WITH input AS (
        SELECT * FROM json_to_recordset(${document}::json)
          AS i(id uuid, from_list text[], to_status text, final boolean, failure_reason text, payload jsonb,
               event_type text, event jsonb)),
      cur AS (
        SELECT t.id, t.status FROM transactions t
        WHERE t.id IN (SELECT id FROM input)
        ORDER BY t.id
        FOR UPDATE),
      upd AS (
        UPDATE transactions t
        SET status = i.to_status::"TransactionStatus",
            updated_at = ${now},
            completed_at = CASE WHEN i.final THEN ${now}::timestamptz ELSE t.completed_at END,
            failure_reason = COALESCE(i.failure_reason, t.failure_reason)
        FROM cur JOIN input i ON i.id = cur.id
        WHERE t.id = cur.id AND cur.status::text = ANY(i.from_list)
        RETURNING t.id, cur.status AS previous_status),
      history AS (
        INSERT INTO transaction_status_changes (transaction_id, "from", "to", source, at, payload, actor_id)
        SELECT upd.id, upd.previous_status, i.to_status::"TransactionStatus", ${source}::"StatusChangeSource", ${now},
               i.payload, ${actorId}::uuid
        FROM upd JOIN input i ON i.id = upd.id),
      outbox AS (
        INSERT INTO outbox_messages (id, subscription_id, event_type, payload, next_attempt_at)
        SELECT gen_random_uuid(), s.id, i.event_type, i.event, ${now}::timestamptz
        FROM upd JOIN input i ON i.id = upd.id, webhook_subscriptions s
        WHERE i.event_type IS NOT NULL AND ${subscribedTo(Prisma.sql`i.event_type`)})
      SELECT id FROM upd`);
    return new Set(rows.map((row) => row.id));
  }
}
