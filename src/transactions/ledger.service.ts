import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { DomainError, InvalidStateTransitionError, NotFoundError, providerDidNotAct } from '../common/errors';
import { currentIdempotencyClaim, noteIdempotentResource } from '../common/idempotency/idempotency-context';
import type { Env } from '../config/env';
import { PrismaService } from '../database/prisma.service';
import {
  Prisma,
  type StatusChangeSource,
  type Transaction,
  type TransactionKind,
  type TransactionStatus,
} from '../generated/prisma/client';
import { OutboxService, subscribedTo } from '../outbound/outbox.service';
import { ProviderAmountMismatchError } from '../provider/answer-checks';
import { FINAL_STATUSES, sourcesOf } from './transaction-state';

/** Result of a status move: `applied`, `unchanged` (already there: a duplicate), or `refused`. */
export type TransitionOutcome = 'applied' | 'unchanged' | 'refused';

/** Fields a transition may set together with the status (e.g. the provider's answer). */
export type TransactionPatch = Omit<Prisma.TransactionUncheckedUpdateInput, 'id' | 'status' | 'kind' | 'createdAt'>;

type Tx = Prisma.TransactionClient;

/**
 * What the module owning a kind of row does, in the same database transaction, when a person moves
 * one of its rows out of `needs_review` (POST /v1/transactions/{id}/resolve): a card's balance, a
 * swap's quote. `row` is the row after the move; `from` the status it left.
 */
export type ManualMoveEffect = (tx: Tx, row: Transaction, from: TransactionStatus) => Promise<void>;

/**
 * The statuses `source` may move a row of `kind` to `to` from: the state table's, where only a
 * person (`manual`, POST /v1/transactions/{id}/resolve) moves a row out of `needs_review`, and a
 * manual move starts nowhere else. Callbacks, reconciliation and the API never leave `needs_review`.
 */
export function movableFrom(
  kind: TransactionKind,
  to: TransactionStatus,
  source: StatusChangeSource,
): TransactionStatus[] {
  const sources = sourcesOf(kind, to);
  return source === 'manual'
    ? sources.filter((from) => from === 'needs_review')
    : sources.filter((from) => from !== 'needs_review');
}

/** The client of the current idempotent request, recorded as the actor of `api` moves (null elsewhere). */
function apiActor(source: StatusChangeSource): string | null {
  return source === 'api' ? (currentIdempotencyClaim()?.clientId ?? null) : null;
}

/** Every column of `transactions`, named as the Transaction type's fields (for raw RETURNING). */
const TRANSACTION_COLUMNS = Prisma.sql`t.id, t.kind, t.direction, t.status, t.amount, t.fee, t.currency,
  t.counter_amount AS "counterAmount", t.counter_currency AS "counterCurrency", t.exchange_rate AS "exchangeRate",
  t.customer_id AS "customerId", t.beneficiary_id AS "beneficiaryId", t.card_id AS "cardId",
  t.provider_id AS "providerId", t.reference, t.description, t.failure_reason AS "failureReason",
  t.confirm_requested_at AS "confirmRequestedAt", t.provider_payload AS "providerPayload",
  t.created_at AS "createdAt", t.updated_at AS "updatedAt", t.completed_at AS "completedAt"`;

/**
 * The local ledger: one Transaction row per money movement, with every status move recorded in
 * TransactionStatusChange. Rows are written before the provider is called (status `created`) and
 * updated after; they are never deleted.
 */
@Injectable()
export class LedgerService {
  private readonly manualMoveEffects = new Map<TransactionKind, ManualMoveEffect>();

  constructor(
    private readonly prisma: PrismaService,
    private readonly outbox: OutboxService,
    private readonly config: ConfigService<Env, true>,
  ) {}

  /**
   * Registers what the module owning `kinds` does when a person resolves one of its rows.
   * @throws Error when a kind already has an effect (two owners would be a bug).
   */
  registerManualMoveEffect(kinds: TransactionKind[], effect: ManualMoveEffect): void {
    for (const kind of kinds) {
      if (this.manualMoveEffects.has(kind)) throw new Error(`manual move effect for ${kind} already registered`);
      this.manualMoveEffects.set(kind, effect);
    }
  }

  /** Runs the owning module's effect (if any) of a manual move of `row` from `from`, inside `tx`. */
  async applyManualMoveEffect(tx: Tx, row: Transaction, from: TransactionStatus): Promise<void> {
    await this.manualMoveEffects.get(row.kind)?.(tx, row, from);
  }

  /**
   * When a row left without the provider's answer is settled at the latest: its creation +
   * SETTLEMENT_DEADLINE minutes (reconciliation settles `created`/`unknown` rows past it).
   */
  settlesBy(row: Pick<Transaction, 'createdAt'>): Date {
    return new Date(row.createdAt.getTime() + this.config.get('SETTLEMENT_DEADLINE', { infer: true }) * 60_000);
  }

  /**
   * Writes a new ledger row in status `created` (or the given initial status) with its first
   * history entry, in one database transaction. Amounts are minor units. An initial status with a
   * gateway event (src/outbound/gateway-events.ts) publishes it to the outbox in that transaction.
   * Under an Idempotency-Key, the row is recorded on the request's claim as its resource (kind + id)
   * in the same transaction, and the client as the history entry's actor.
   * @throws ConflictError (409 `request_in_progress`) when the request lost its claim to a retry:
   * nothing is written, and the caller must not call the provider.
   */
  async record(
    data: Omit<Prisma.TransactionUncheckedCreateInput, 'status'> & { status?: TransactionStatus },
    source: StatusChangeSource = 'api',
    tx?: Tx,
  ): Promise<Transaction> {
    const run = async (db: Tx) => {
      const row = await db.transaction.create({ data: { ...data, status: data.status ?? 'created' } });
      await db.transactionStatusChange.create({
        data: { transactionId: row.id, from: null, to: row.status, source, actorId: apiActor(source) },
      });
      await noteIdempotentResource(db, row.kind, row.id);
      await this.outbox.publishLedgerStatus(row, db);
      return row;
    };
    return tx ? run(tx) : this.prisma.$transaction(run);
  }

  /**
   * Moves a transaction to `to` if its state machine allows it from the current status
   * (transaction-state.ts), setting `patch` and writing the history entry atomically. A move to
   * the status it already has is `unchanged` (duplicate events change nothing).
   * With `strict`, a refused move throws InvalidStateTransitionError (409) instead of returning `refused`.
   * Only a `manual` move leaves `needs_review`, and a `manual` move leaves nothing else (movableFrom):
   * a callback or reconciliation for a row under review is `refused` (or `unchanged`).
   * `actorId`: who moved it (an API client id; the current idempotent request's client by default for `api`).
   * An `applied` move to a status with a gateway event (e.g. payout success → `payout.succeeded`,
   * src/outbound/gateway-events.ts) publishes it to the outbox in the same database transaction.
   */
  async transition(
    id: string,
    to: TransactionStatus,
    source: StatusChangeSource,
    opts: {
      patch?: TransactionPatch;
      payload?: Prisma.InputJsonValue;
      strict?: boolean;
      tx?: Tx;
      actorId?: string;
    } = {},
  ): Promise<{ outcome: TransitionOutcome; transaction: Transaction }> {
    const actorId = opts.actorId ?? apiActor(source);
    if (
      !opts.tx &&
      source !== 'manual' &&
      Object.entries(opts.patch ?? {}).every(([key, value]) => key === 'failureReason' && typeof value === 'string')
    ) {
      const result = await this.moveInOneStatement(id, to, source, { ...opts, actorId });
      if (result) return result;
      // Not decided (a refused move, an unknown id, or a duplicate with a patch): the general path says which.
    }
    const run = async (db: Tx) => {
      const [current] = await db.$queryRaw<Array<Pick<Transaction, 'id' | 'kind' | 'status'>>>`
        SELECT id, kind, status FROM transactions WHERE id = ${id}::uuid FOR UPDATE`;
      if (!current) throw new NotFoundError('Transaction', id);
      if (source === 'manual' && current.status !== 'needs_review') {
        if (opts.strict) throw new InvalidStateTransitionError(current.kind, current.status, to);
        return { outcome: 'refused' as const, transaction: await db.transaction.findUniqueOrThrow({ where: { id } }) };
      }
      if (current.status === to) {
        const row = opts.patch
          ? await db.transaction.update({ where: { id }, data: opts.patch })
          : await db.transaction.findUniqueOrThrow({ where: { id } });
        return { outcome: 'unchanged' as const, transaction: row };
      }
      if (!movableFrom(current.kind, to, source).includes(current.status)) {
        if (opts.strict) throw new InvalidStateTransitionError(current.kind, current.status, to);
        return { outcome: 'refused' as const, transaction: await db.transaction.findUniqueOrThrow({ where: { id } }) };
      }
      const row = await db.transaction.update({
        where: { id },
        data: { ...opts.patch, status: to, ...(FINAL_STATUSES.includes(to) ? { completedAt: new Date() } : {}) },
      });
      await db.transactionStatusChange.create({
        data: { transactionId: id, from: current.status, to, source, payload: opts.payload, actorId },
      });
      await this.outbox.publishLedgerStatus(row, db);
      return { outcome: 'applied' as const, transaction: row };
    };
    return opts.tx ? run(opts.tx) : this.prisma.$transaction(run);
  }

  /**
   * The common move (no caller transaction, no patch but `failureReason`) as ONE SQL statement: lock
   * the row, move it if the state machine allows it from its current status, write the history
   * entry and the outbox messages of its gateway event, atomically. An interactive Prisma
   * transaction costs about 2 ms of CPU per move against 0.4 ms for this (measured), and callbacks
   * apply through here. The event's data is built beforehand from the row as read without a lock:
   * the fields it shows besides status, completedAt and failureReason never change.
   * Returns the outcome and row (`applied`, or `unchanged` for a duplicate without a patch), or null
   * when this path cannot decide (the general path then does).
   */
  private async moveInOneStatement(
    id: string,
    to: TransactionStatus,
    source: StatusChangeSource,
    opts: { patch?: TransactionPatch; payload?: Prisma.InputJsonValue; actorId: string | null },
  ): Promise<{ outcome: 'applied' | 'unchanged'; transaction: Transaction } | null> {
    const [before] = await this.prisma.$queryRaw<Transaction[]>`
      SELECT ${TRANSACTION_COLUMNS} FROM transactions t WHERE t.id = ${id}::uuid`;
    if (!before) return null;
    // A duplicate (a retried callback): statuses only move forward, so a row already there stays.
    if (before.status === to && !opts.patch) return { outcome: 'unchanged', transaction: before };
    const sources = movableFrom(before.kind, to, source);
    if (!sources.includes(before.status)) return null;
    const now = new Date();
    const failureReason = typeof opts.patch?.failureReason === 'string' ? opts.patch.failureReason : null;
    const final = FINAL_STATUSES.includes(to);
    const after: Transaction = {
      ...before,
      status: to,
      updatedAt: now,
      completedAt: final ? now : before.completedAt,
      failureReason: failureReason ?? before.failureReason,
    };
    const event = this.outbox.ledgerEvent(after);
    const rows = await this.prisma.$queryRaw<Transaction[]>`
      WITH cur AS (SELECT id, status FROM transactions WHERE id = ${id}::uuid FOR UPDATE),
      upd AS (
        UPDATE transactions t
        SET status = ${to}::"TransactionStatus",
            updated_at = ${now},
            completed_at = COALESCE(${final ? now : null}::timestamptz, t.completed_at),
            failure_reason = COALESCE(${failureReason}::text, t.failure_reason)
        FROM cur
        WHERE t.id = cur.id AND cur.status::text = ANY(${sources}::text[])
        RETURNING ${TRANSACTION_COLUMNS}, cur.status AS "previousStatus"),
      history AS (
        INSERT INTO transaction_status_changes (transaction_id, "from", "to", source, at, payload, actor_id)
        SELECT id, "previousStatus", ${to}::"TransactionStatus", ${source}::"StatusChangeSource", ${now},
               ${opts.payload === undefined ? null : JSON.stringify(opts.payload)}::jsonb, ${opts.actorId}::uuid
        FROM upd),
      outbox AS (
        INSERT INTO outbox_messages (id, subscription_id, event_type, payload)
        SELECT gen_random_uuid(), s.id, ${event?.type ?? null}::text, ${event ? JSON.stringify(event) : null}::jsonb
        FROM webhook_subscriptions s, upd
        WHERE ${event ? subscribedTo(event.type) : Prisma.sql`false`})
      SELECT * FROM upd`;
    if (rows.length === 0) return null;
    const { previousStatus: _previous, ...moved } = rows[0] as Transaction & { previousStatus: string };
    return { outcome: 'applied', transaction: moved };
  }

  /**
   * Records a failed provider call on a ledger row: a refusal (`provider_rejected`: nothing
   * happened upstream) → `failed`; an answer stating another amount or currency than asked
   * (`ProviderAmountMismatchError`, src/provider/answer-checks.ts) → `needs_review`, with the
   * provider's id and answer kept for the reviewer (never confirmed, never finalized); anything else
   * (timeout, 5xx, an error after the call) → `unknown`, which reconciliation settles. Returns the
   * status aimed for.
   * When the row is left `unknown` and `error` is a DomainError (the answer the client gets), its
   * problem+json says what happens next: `transactionId`, `transactionStatus: 'unknown'` and `settlesBy` (ISO
   * 8601: the row's creation + SETTLEMENT_DEADLINE, by when reconciliation has settled it; see
   * ReconciliationService). The client should not start the movement again before then. A row held
   * for review names itself the same way (`transactionStatus: 'needs_review'`, no `settlesBy`: a
   * person decides). A row that had already moved elsewhere (a callback during the call) stays where
   * it is, and a 502/504 still names it: `transactionId` and `settlesBy`, without `transactionStatus`.
   */
  async recordProviderFailure(id: string, error: unknown, tx?: Tx): Promise<TransactionStatus> {
    const refused = providerDidNotAct(error);
    const mismatch = error instanceof ProviderAmountMismatchError;
    const to: TransactionStatus = refused ? 'failed' : mismatch ? 'needs_review' : 'unknown';
    const { transaction } = await this.transition(id, to, 'api', {
      tx,
      patch: {
        failureReason: error instanceof Error ? error.message : String(error),
        ...(mismatch && error.providerId ? { providerId: error.providerId } : {}),
        ...(mismatch && error.raw ? { providerPayload: error.raw as Prisma.InputJsonValue } : {}),
      },
    });
    if (transaction.status === 'unknown' && error instanceof DomainError) {
      Object.assign(error.extensions, {
        transactionId: transaction.id,
        // `status` is the HTTP status in a problem (RFC 9457), so the ledger's goes by another name.
        transactionStatus: 'unknown',
        settlesBy: this.settlesBy(transaction).toISOString(),
      });
    } else if (transaction.status === 'needs_review' && error instanceof DomainError) {
      Object.assign(error.extensions, { transactionId: transaction.id, transactionStatus: 'needs_review' });
    } else if (!refused && error instanceof DomainError) {
      // Already moved on meanwhile (e.g. a callback settled it during the call): the move was not
      // made, but the 502/504 still names the row (read it for its status) and its settlesBy.
      Object.assign(error.extensions, {
        transactionId: transaction.id,
        settlesBy: this.settlesBy(transaction).toISOString(),
      });
    }
    return to;
  }

  /**
   * The ledger row of `kind` a provider record or event is about: matched by the provider's id,
   * else by the reference the gateway sent; when both match different rows, the provider id wins.
   * Null when neither is given or nothing matches.
   */
  async findByProviderIdOrReference(
    kind: TransactionKind,
    providerId: string | null,
    reference: string | null,
  ): Promise<Transaction | null> {
    if (!providerId && !reference) return null;
    const [row] = await this.prisma.$queryRaw<Transaction[]>`
      SELECT ${TRANSACTION_COLUMNS} FROM transactions t
      WHERE t.kind = ${kind}::"TransactionKind" AND (t.provider_id = ${providerId} OR t.reference = ${reference})
      ORDER BY (t.provider_id = ${providerId}) DESC NULLS LAST
      LIMIT 1`;
    return row ?? null;
  }

  /** @throws NotFoundError (404). */
  async get(id: string): Promise<Transaction> {
    const row = await this.prisma.transaction.findUnique({ where: { id } });
    if (!row) throw new NotFoundError('Transaction', id);
    return row;
  }
}
