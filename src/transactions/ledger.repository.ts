import { Injectable } from '@nestjs/common';
import { NotFoundError } from '../common/errors';
import { decodeCursor } from '../common/pagination';
import { isUniqueViolation, PrismaService } from '../database/prisma.service';
import { ReadPool } from '../database/read-pool';
import { binder, sqlStatement } from '../database/sql';
import {
  Prisma,
  type StatusChangeSource,
  type Transaction,
  type TransactionDirection,
  type TransactionKind,
  type TransactionStatus,
} from '../generated/prisma/client';
import { subscribedTo } from '../outbound/outbox.service';
import { LEDGER_ROW_COLUMNS, type LedgerRow } from './ledger-row';

type Tx = Prisma.TransactionClient;

/** Every column of `transactions`, named as the Transaction type's fields (for raw RETURNING). */
const TRANSACTION_COLUMNS = Prisma.raw(`${LEDGER_ROW_COLUMNS}, t.provider_payload AS "providerPayload"`);

/** The card money movement kinds of the ledger. */
export const CARD_TRANSACTION_KINDS: TransactionKind[] = ['card_topup', 'card_withdrawal', 'card_spend'];

/** A card movement's ledger row as `lockCardMovement` reads it (amount in minor units). */
export type LockedMovement = {
  kind: TransactionKind;
  status: TransactionStatus;
  direction: TransactionDirection;
  amount: bigint;
};

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
 * statement of `moveIfFrom`, the outbox messages of the move). The only code that reads or writes
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

  /** Inserts a ledger row with its first history entry (from null to its status), inside `db`. */
  async insert(
    db: Tx,
    data: Prisma.TransactionUncheckedCreateInput & { status: TransactionStatus },
    entry: StatusChangeEntry,
  ): Promise<Transaction> {
    const row = await db.transaction.create({ data });
    await db.transactionStatusChange.create({
      data: { transactionId: row.id, from: null, to: row.status, source: entry.source, actorId: entry.actorId },
    });
    return row;
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

  /** Row `id` read without a lock in one raw statement (the fast path's first read), or undefined. */
  async peek(id: string): Promise<Transaction | undefined> {
    const [row] = await this.prisma.$queryRaw<Transaction[]>`
      SELECT ${TRANSACTION_COLUMNS} FROM transactions t WHERE t.id = ${id}::uuid`;
    return row;
  }

  /**
   * Claim "move row `id` to `to` once, if its status is one of `from`", as ONE SQL statement (a CTE):
   * lock the row, move it only when its current status is in `from` (setting `updated_at`,
   * `completed_at` when `final`, and `failure_reason` when given), write the history entry with the
   * status it left, and insert `event` (when given) into the outbox for every active subscription
   * taking its type — atomically. Returns the moved row, or null when nothing moved: no row `id`,
   * or its status (read under the lock) is not in `from` (a refused move, or another caller moved
   * it first: the lost race). An interactive Prisma transaction costs about 2 ms of CPU per move
   * against 0.4 ms for this (measured).
   */
  async moveIfFrom(
    id: string,
    from: TransactionStatus[],
    to: TransactionStatus,
    move: { now: Date; final: boolean; failureReason: string | null; entry: StatusChangeEntry },
    event: LedgerEventMessage | null,
  ): Promise<Transaction | null> {
    const { now, final, failureReason, entry } = move;
    const rows = await this.prisma.$queryRaw<Array<Transaction & { previousStatus: string }>>`
      WITH cur AS (SELECT id, status FROM transactions WHERE id = ${id}::uuid FOR UPDATE),
      upd AS (
        UPDATE transactions t
        SET status = ${to}::"TransactionStatus",
            updated_at = ${now},
            completed_at = COALESCE(${final ? now : null}::timestamptz, t.completed_at),
            failure_reason = COALESCE(${failureReason}::text, t.failure_reason)
        FROM cur
        WHERE t.id = cur.id AND cur.status::text = ANY(${from}::text[])
        RETURNING ${TRANSACTION_COLUMNS}, cur.status AS "previousStatus"),
      history AS (
        INSERT INTO transaction_status_changes (transaction_id, "from", "to", source, at, payload, actor_id)
        SELECT id, "previousStatus", ${to}::"TransactionStatus", ${entry.source}::"StatusChangeSource", ${now},
               ${entry.payload === undefined ? null : JSON.stringify(entry.payload)}::jsonb, ${entry.actorId}::uuid
        FROM upd),
      outbox AS (
        INSERT INTO outbox_messages (id, subscription_id, event_type, payload)
        SELECT gen_random_uuid(), s.id, ${event?.type ?? null}::text, ${event ? JSON.stringify(event) : null}::jsonb
        FROM webhook_subscriptions s, upd
        WHERE ${event ? subscribedTo(event.type) : Prisma.sql`false`})
      SELECT * FROM upd`;
    if (rows.length === 0) return null;
    const { previousStatus: _previous, ...moved } = rows[0];
    return moved;
  }

  /**
   * The row of `kind` matched by the provider's id, else by the reference the gateway sent; when
   * both match different rows, the provider id wins. Null when nothing matches.
   */
  async findByProviderIdOrReference(
    kind: TransactionKind,
    providerId: string | null,
    reference: string | null,
  ): Promise<Transaction | null> {
    const [row] = await this.prisma.$queryRaw<Transaction[]>`
      SELECT ${TRANSACTION_COLUMNS} FROM transactions t
      WHERE t.kind = ${kind}::"TransactionKind" AND (t.provider_id = ${providerId} OR t.reference = ${reference})
      ORDER BY (t.provider_id = ${providerId}) DESC NULLS LAST
      LIMIT 1`;
    return row ?? null;
  }

  // ---- Card movements (rows with a card id): the reads and the one conditional write the card
  // ledger (src/cards, through LedgerService) needs besides inserts and status moves.

  /**
   * Locks a card movement's ledger row (FOR UPDATE, until `tx` ends) and reads what its balance
   * effect needs: kind, status, direction, amount.
   * @throws NotFoundError (404).
   */
  async lockCardMovement(id: string, tx: Tx): Promise<LockedMovement> {
    const [row] = await tx.$queryRaw<LockedMovement[]>`
      SELECT kind, status, direction, amount FROM transactions WHERE id = ${id}::uuid FOR UPDATE`;
    if (!row) throw new NotFoundError('Transaction', id);
    return { ...row, amount: BigInt(row.amount) };
  }

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
   * One page of the card's movements, newest first (keyset on createdAt, id: the (card_id,
   * created_at DESC, id DESC) index), `limit + 1` rows: typed SQL on the read pool (a hot read).
   * @throws ValidationError (400) on a malformed cursor.
   */
  async listCardMovements(cardId: string, cursor: string | undefined, limit: number): Promise<LedgerRow[]> {
    const values: unknown[] = [];
    const bind = binder(values);
    const where = [
      `t.card_id = ${bind(cardId, '::uuid')}`,
      `t.kind IN (${CARD_TRANSACTION_KINDS.map((kind) => `'${kind}'`).join(', ')})`,
    ];
    if (cursor) {
      const after = decodeCursor(cursor);
      where.push(`(t.created_at, t.id) < (${bind(after.createdAt, '::timestamptz')}, ${bind(after.id, '::uuid')})`);
    }
    const text = `SELECT ${LEDGER_ROW_COLUMNS} FROM transactions t WHERE ${where.join(' AND ')} ORDER BY t.created_at DESC, t.id DESC LIMIT ${bind(limit + 1)}`;
    return this.reads.rows<LedgerRow>(sqlStatement('card_movements_page', text, values));
  }

  /** The card's movements still open (`created`, `unknown`, `pending`): their references and provider ids. */
  openCardMovements(cardId: string): Promise<Array<{ reference: string; providerId: string | null }>> {
    return this.prisma.transaction.findMany({
      where: { cardId, status: { in: ['created', 'unknown', 'pending'] } },
      select: { reference: true, providerId: true },
    });
  }
}
