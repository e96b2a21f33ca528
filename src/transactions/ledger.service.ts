import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { auditedChangeRecorded, auditedChangeSql, recordAuditedChange } from '../audit/audit-chain';
import { creatorId } from '../audit/ownership';
import { DomainError, InvalidStateTransitionError, NotFoundError, providerDidNotAct } from '../common/errors';
import {
  answeredWith,
  currentIdempotencyClaim,
  idempotentAnswer,
  idempotentWriteSql,
  idempotentResourceNote,
  lostClaim,
  runWithIdempotencyClaim,
} from '../common/idempotency/idempotency-context';
import type { Env } from '../config/env';
import { PendingWrites } from '../database/pending-writes';
import { isDatabaseUnavailable } from '../database/unavailable';
import type {
  Prisma,
  StatusChangeSource,
  Transaction,
  TransactionKind,
  TransactionStatus,
} from '../generated/prisma/client';
import { ledgerEventType } from '../outbound/gateway-events';
import { OutboxService } from '../outbound/outbox.service';
import { ProviderAmountMismatchError } from '../provider/answer-checks';
import { type CardMovementRow, type LedgerRow, providerCallsStartedAt } from './ledger-row';
import {
  type InsertGuard,
  INSERTED,
  LedgerRepository,
  MOVED,
  patchFitsOneStatement,
  type StatusChangeEntry,
  withAnswer,
  type WriteAheadRow,
} from './ledger.repository';
import { FINAL_STATUSES, sourcesOf } from './transaction-state';

export type { InsertGuard } from './ledger.repository';

/**
 * What another module's repository needs of the ledger's statements to write a ledger row, or move
 * one, inside a statement of its own (e.g. a swap quote claimed with its swap's write-ahead row).
 */
export { INSERTED, ledgerInsertCtes, MOVED, type StatusChangeEntry, type WriteAheadRow } from './ledger.repository';

/**
 * What a status move takes besides the row, its target and the source (LedgerService.transition,
 * transitionAlone): `patch` (fields set with the move), `payload` (kept on the history entry),
 * `actorId` (who moved it; the idempotent request's client by default for `api`), `known` (the row
 * as the caller last read or wrote it), `answer` (the request's answer for the moved row).
 */
export interface MoveOptions {
  patch?: TransactionPatch;
  payload?: Prisma.InputJsonValue;
  actorId?: string;
  known?: Transaction;
  answer?: (row: Transaction) => unknown;
}

/** Result of a status move: `applied`, `unchanged` (already there: a duplicate), or `refused`. */
export type TransitionOutcome = 'applied' | 'unchanged' | 'refused';

/**
 * What `transition` did: its outcome, the row as it is after it, and `from`: the status the row had
 * when the move was decided (under its lock), i.e. the status an `applied` move left.
 */
export interface TransitionResult {
  outcome: TransitionOutcome;
  transaction: Transaction;
  from: TransactionStatus;
  /** The request's answer, when `answer` was given and it was stored with the move (return exactly it). */
  answered?: unknown;
}

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

/** `answer(row)`, or undefined when it throws (the answer is then stored after the work, as usual). */
function answerOrNothing(answer: (row: Transaction) => unknown, row: Transaction): unknown {
  try {
    return answer(row);
  } catch {
    return undefined;
  }
}

/**
 * A row to write with the ledger's defaults: a new id unless given, status `created` unless given,
 * and the current request's API client as `createdBy` unless given (null included).
 */
function withRecordDefaults<T extends { id?: string; status?: TransactionStatus; createdBy?: string | null }>(
  data: T,
): T & { id: string; status: TransactionStatus } {
  return {
    ...data,
    id: data.id ?? randomUUID(),
    status: data.status ?? 'created',
    createdBy: data.createdBy !== undefined ? data.createdBy : creatorId(),
  };
}

/** The client of the current idempotent request, recorded as the actor of `api` moves (null elsewhere). */
function apiActor(source: StatusChangeSource): string | null {
  return source === 'api' ? (currentIdempotencyClaim()?.clientId ?? null) : null;
}

/**
 * The local ledger: one Transaction row per money movement, with every status move recorded in
 * TransactionStatusChange. Rows are written before the provider is called (status `created`) and
 * updated after; they are never deleted.
 */
@Injectable()
export class LedgerService {
  private readonly manualMoveEffects = new Map<TransactionKind, ManualMoveEffect>();

  constructor(
    private readonly repository: LedgerRepository,
    private readonly outbox: OutboxService,
    private readonly config: ConfigService<Env, true>,
    private readonly pending: PendingWrites,
  ) {}

  /**
   * Runs `move` (a status move with no caller transaction); when it fails because the database is
   * unavailable in a request that has called the provider (the move writes what the provider
   * answered, or its failure), keeps the same move in PendingWrites, under the request's
   * Idempotency-Key claim (so that the key's answer is stored with it), to be written as soon as
   * the database is back; then rethrows (the request answers 503 `database_unavailable`).
   */
  private async keptOnOutage<T>(what: string, move: () => Promise<T>): Promise<T> {
    try {
      return await move();
    } catch (error) {
      const claim = currentIdempotencyClaim();
      if (claim?.providerCalled && isDatabaseUnavailable(error)) {
        this.pending.keep(what, () => runWithIdempotencyClaim(claim, move));
      }
      throw error;
    }
  }

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
   * When a row left without the provider's answer is settled at the latest: SETTLEMENT_DEADLINE
   * minutes after its provider calls started — its creation, or its approval for a payout held for
   * approval (providerCallsStartedAt) — (reconciliation settles `created`/`unknown` rows past it).
   */
  settlesBy(row: Pick<Transaction, 'createdAt' | 'approvedAt'>): Date {
    const deadlineMs = this.config.get('SETTLEMENT_DEADLINE', { infer: true }) * 60_000;
    return new Date(providerCallsStartedAt(row).getTime() + deadlineMs);
  }

  /**
   * A new ledger row as `record` would write it, for a repository that writes it in a statement of
   * its own (`ledgerInsertCtes`, together with another write): `data` with its status (`created`
   * unless given) and `createdBy` (the request's client unless `data` names one, null included), and
   * its first history entry (`source`, the idempotent request's client as actor for `api`). The
   * caller notes the row as the Idempotency-Key's resource (`idempotentResourceNote`) and writes the
   * request's audit event (`auditedChangeSql`) in that statement; an initial status announcing a
   * gateway event is not for this path (`record` publishes it).
   * @throws Error when the initial status announces a gateway event.
   */
  prepareRecord(
    data: Omit<WriteAheadRow, 'status'> & { status?: TransactionStatus },
    source: StatusChangeSource = 'api',
  ): { row: WriteAheadRow; entry: StatusChangeEntry } {
    const row = withRecordDefaults(data);
    if (ledgerEventType(row.kind, row.status)) throw new Error(`prepareRecord: ${row.status} announces an event`);
    return { row, entry: { source, actorId: apiActor(source) } };
  }

  /**
   * Writes a new ledger row in status `created` (or the given initial status) with its first
   * history entry, in one database transaction. Amounts are minor units. An initial status with a
   * gateway event (src/outbound/gateway-events.ts) publishes it to the outbox in that transaction.
   * Under an Idempotency-Key, the row is recorded on the request's claim as its resource (kind + id)
   * in the same transaction, and the client as the history entry's actor. `createdBy` (the owner
   * under OWNERSHIP=client) is the request's client unless `data` names one (null included).
   * The request's audit event is written here unless the caller's transaction already wrote it.
   * Without `tx`, when the initial status announces nothing and every field can be written raw (the
   * usual write-ahead), all of it is ONE statement sent through node-postgres (LedgerRepository.insertAlone).
   * @throws ConflictError (409 `request_in_progress`) when the request lost its claim to a retry:
   * nothing is written, and the caller must not call the provider.
   */
  async record(
    data: Omit<Prisma.TransactionUncheckedCreateInput, 'status'> & { status?: TransactionStatus },
    source: StatusChangeSource = 'api',
    tx?: Tx,
  ): Promise<Transaction> {
    const full = withRecordDefaults(data);
    const id = full.id;
    const entry = { source, actorId: apiActor(source) };
    if (!tx && !ledgerEventType(full.kind, full.status)) {
      const row = await this.repository.insertAlone(
        full,
        entry,
        idempotentResourceNote(full.kind, id),
        auditedChangeSql(id, INSERTED),
      );
      if (row === 'lost') throw lostClaim();
      if (row) {
        auditedChangeRecorded();
        return row;
      }
      // A field that cannot be written raw: the general path below.
    }
    const run = async (db: Tx) => {
      // Write-ahead, ONE statement: the row, its first history entry, and (under an Idempotency-Key)
      // the row noted as the key's resource; a claim lost meanwhile rolls it all back (409).
      const { noteKept, ...row } = await this.repository.insert(db, full, entry, idempotentResourceNote(data.kind, id));
      if (noteKept === false) throw lostClaim();
      await this.outbox.publishLedgerStatus(row, db);
      await recordAuditedChange(db, row.id);
      return row;
    };
    return tx ? run(tx) : this.repository.withTransaction(run);
  }

  /**
   * The usual write-ahead (`record` without `tx`, an initial status that announces nothing, every
   * field written raw) with `guard`: reads the row depends on, made in the row's own statement
   * (LedgerRepository.insertGuarded), and, under an Idempotency-Key whose claim is deferred
   * (IdempotencyService.run `deferClaim`), the key's claim in that statement too: ONE statement,
   * one commit. The row is written (with its history entry, the key's note and the request's audit
   * event) only if the guard holds and the key is the request's. Returns the row, or null when the
   * guard did not hold (nothing written but the key's claim), with `found`, the guard's reads, for
   * the caller to say why. `createdBy` and the history entry's actor as `record` sets them.
   * @throws IdempotencyKeyTaken when the deferred claim found the key taken (nothing written);
   * ConflictError (409 `request_in_progress`) when a claim held already was lost to a retry
   * (nothing written); Error when a field cannot be written raw.
   */
  async recordGuarded<F extends object>(
    data: Omit<Prisma.TransactionUncheckedCreateInput, 'status'> & { status?: TransactionStatus },
    guard: InsertGuard<F>,
  ): Promise<{ row: Transaction | null; found: F }> {
    const full = withRecordDefaults(data);
    const id = full.id;
    if (ledgerEventType(full.kind, full.status)) throw new Error(`recordGuarded: ${full.status} announces an event`);
    const key = idempotentWriteSql(full.kind, id, guard.onlyIf);
    const written = await this.repository.insertGuarded(
      full,
      { source: 'api', actorId: apiActor('api') },
      key,
      auditedChangeSql(id, INSERTED),
      guard,
    );
    key.settled(written.keyHeld);
    if (written.row) {
      auditedChangeRecorded();
      return { row: written.row, found: written.found };
    }
    // The guard held but the row was not written: the claim held already was lost to a retry.
    if (written.guardHeld) throw lostClaim();
    return { row: null, found: written.found };
  }

  /**
   * Moves a transaction to `to` if its state machine allows it from the current status
   * (transaction-state.ts), setting `patch` and writing the history entry atomically. A move to
   * the status it already has is `unchanged` (duplicate events change nothing).
   * With `strict`, a refused move throws InvalidStateTransitionError (409) instead of returning
   * `refused`, and so does a move to the status the row already has (never `unchanged`: a strict
   * caller acts on its move, and a row already there was moved by someone else).
   * Only a `manual` move leaves `needs_review`, and a `manual` move leaves nothing else (movableFrom):
   * a callback or reconciliation for a row under review is `refused` (or `unchanged`).
   * `actorId`: who moved it (an API client id; the current idempotent request's client by default for `api`).
   * An `applied` move to a status with a gateway event (e.g. payout success → `payout.succeeded`,
   * src/outbound/gateway-events.ts) publishes it to the outbox in the same database transaction.
   * Without `tx`, and with no patch beyond the provider's answer and a failure reason, the move is ONE
   * SQL statement; `known` (the row as the caller last read or wrote it) spares that path its
   * unlocked read: the status it moves from is still decided under the row's lock.
   * `answer` (the request's answer for the moved row, e.g. toPayoutDto): under an Idempotency-Key,
   * the one-statement move also stores it as the key's answer (no separate write after the work);
   * it is then returned as `answered`, and the caller must answer exactly that.
   * Returns the outcome, the row after it, and `from`: the status the row had when the move was
   * decided (the status an applied move left; e.g. a card's balance effect depends on it).
   * Without `tx`, in an idempotent request that has called the provider, a move the database could
   * not take (`isDatabaseUnavailable`) is kept in PendingWrites and written, with the key's answer,
   * once the database is back; the error is rethrown (503 `database_unavailable`).
   */
  async transition(
    id: string,
    to: TransactionStatus,
    source: StatusChangeSource,
    opts: MoveOptions & { strict?: boolean; tx?: Tx } = {},
  ): Promise<TransitionResult> {
    // After a provider call, a move the database could not take is kept and written once it is back.
    if (!opts.tx) return this.keptOnOutage(`ledger ${id} → ${to}`, () => this.transitionNow(id, to, source, opts));
    return this.transitionNow(id, to, source, opts);
  }

  /** `transition` itself (see there), without keeping a move the database could not take. */
  private async transitionNow(
    id: string,
    to: TransactionStatus,
    source: StatusChangeSource,
    opts: MoveOptions & { strict?: boolean; tx?: Tx },
  ): Promise<TransitionResult> {
    const actorId = opts.actorId ?? apiActor(source);
    if (!opts.tx) {
      const result = await this.transitionAloneNow(id, to, source, opts);
      // A strict move is never `unchanged`: the general path below refuses it (409).
      if (result && !(opts.strict && result.outcome === 'unchanged')) return result;
      // Not decided (a refused move, an unknown id, or a duplicate with a patch): the general path says which.
    }
    const run = async (db: Tx): Promise<TransitionResult> => {
      const current = await this.repository.lockStatus(db, id);
      if (!current) throw new NotFoundError('Transaction', id);
      const from = current.status;
      const refuse = async () => {
        if (opts.strict) throw new InvalidStateTransitionError(current.kind, current.status, to);
        return { outcome: 'refused' as const, transaction: await this.requireRow(id, db), from };
      };
      if (source === 'manual' && current.status !== 'needs_review') return refuse();
      if (current.status === to) {
        // A strict move is a decision (the caller acts on it): already there means another made it.
        if (opts.strict) return refuse();
        const row = opts.patch ? await this.repository.update(db, id, opts.patch) : await this.requireRow(id, db);
        return { outcome: 'unchanged' as const, transaction: row, from };
      }
      if (!movableFrom(current.kind, to, source).includes(current.status)) return refuse();
      const row = await this.repository.move(
        db,
        id,
        current.status,
        to,
        opts.patch ?? {},
        FINAL_STATUSES.includes(to),
        {
          source,
          payload: opts.payload,
          actorId,
        },
      );
      await this.outbox.publishLedgerStatus(row, db);
      return { outcome: 'applied' as const, transaction: row, from };
    };
    return opts.tx ? run(opts.tx) : this.repository.withTransaction(run);
  }

  /**
   * Claims the move of row `id` (of `kind`) from exactly `from` to `to`: ONE conditional UPDATE
   * (LedgerRepository.claimMove) that moves it only if its status is `from` now and `guard` (an SQL
   * condition on the row, aliased `t`, e.g. who may decide it) holds, writing its history entry in
   * the same statement; the gateway event of `to` (if any) is published in the same database
   * transaction (`tx`, else one of its own). Of concurrent claims of one row exactly one wins: the
   * others wait for its lock, find the status moved, and move nothing. For a decision that must be
   * taken once (a payout's approval, rejection or expiry): unlike `transition`, a row already at
   * `to` is never a success. `patch`: fields written raw with the move (failureReason, approvedAt, …);
   * `at`: the move's instant (its history entry's, `updatedAt`; now by default).
   * Returns the moved row, or null when nothing moved (no such row, another status, the guard did
   * not hold): nothing written — the caller reads the row to say why.
   * @throws Error when the state table does not allow `from` → `to` for `source` (a programming error).
   */
  async claimTransition(
    id: string,
    kind: TransactionKind,
    from: TransactionStatus,
    to: TransactionStatus,
    source: StatusChangeSource,
    opts: Omit<MoveOptions, 'known' | 'answer'> & { tx?: Tx; guard?: Prisma.Sql; at?: Date } = {},
  ): Promise<Transaction | null> {
    if (!movableFrom(kind, to, source).includes(from)) {
      throw new Error(`claimTransition: ${kind} may not move from ${from} to ${to} (${source})`);
    }
    const { failureReason, ...patch } = opts.patch ?? {};
    const run = async (db: Tx): Promise<Transaction | null> => {
      const row = await this.repository.claimMove(db, id, kind, from, to, {
        now: opts.at ?? new Date(),
        final: FINAL_STATUSES.includes(to),
        failureReason: typeof failureReason === 'string' ? failureReason : null,
        entry: { source, payload: opts.payload, actorId: opts.actorId ?? apiActor(source) },
        patch,
        guard: opts.guard,
      });
      if (row) await this.outbox.publishLedgerStatus(row, db);
      return row;
    };
    return opts.tx ? run(opts.tx) : this.repository.withTransaction(run);
  }

  /**
   * Expires payout `id` whose approval lapsed (still `awaiting_approval`, created before
   * `createdBefore` = now − PAYOUT_APPROVAL_TTL), claimed as a maker-checker decision is: only from
   * `awaiting_approval`, so an approval or rejection that won first stays. Source `reconciliation`,
   * no provider call (none was made). Used by the approve/reject path and the expiry job alike.
   * @returns the expired row, or null when nothing moved.
   */
  expireLapsedApproval(id: string, createdBefore: Date): Promise<Transaction | null> {
    return this.claimTransition(id, 'payout', 'awaiting_approval', 'expired', 'reconciliation', {
      guard: this.repository.createdBeforeGuard(createdBefore),
      payload: { reason: 'approval TTL lapsed (PAYOUT_APPROVAL_TTL)' },
    });
  }

  /**
   * `transition`'s one-statement path on its own (no caller transaction; a patch of the provider's
   * answer and `failureReason` only: patchFitsOneStatement; never `manual`), with `effects`:
   * statements written in that same statement, each conditioned by the caller on MOVED (the move's
   * effect on its owner's table: a card's balance, a swap's quote). `known`, `answer` as for
   * `transition`. Returns the result of an `applied` move (or `unchanged` for a duplicate without a
   * patch: nothing written, `effects` included), or null when this path cannot decide (a move the
   * state machine refuses from the status read, an unknown id, a duplicate with a patch, a lost race,
   * a patch that does not fit): nothing was written, and the caller takes its transactional path
   * (`transition` with its `tx`), which says which. A move the database could not take after a
   * provider call is kept and written once it is back, as `transition`'s.
   */
  async transitionAlone(
    id: string,
    to: TransactionStatus,
    source: StatusChangeSource,
    opts: MoveOptions & { effects?: Prisma.Sql[] } = {},
  ): Promise<TransitionResult | null> {
    return this.keptOnOutage(`ledger ${id} → ${to}`, () => this.transitionAloneNow(id, to, source, opts));
  }

  /** `transitionAlone` itself, without keeping a move the database could not take. */
  private async transitionAloneNow(
    id: string,
    to: TransactionStatus,
    source: StatusChangeSource,
    opts: MoveOptions & { effects?: Prisma.Sql[] } = {},
  ): Promise<TransitionResult | null> {
    if (source === 'manual' || !patchFitsOneStatement(opts.patch)) return null;
    return this.moveInOneStatement(id, to, source, { ...opts, actorId: opts.actorId ?? apiActor(source) });
  }

  /**
   * The common move (no caller transaction, no patch but the provider's answer and `failureReason`:
   * patchFitsOneStatement) as ONE SQL statement (LedgerRepository.moveOnce, with the statuses the
   * state table allows it from): lock the row, move it if the state machine allows it from its
   * current status, set the patch, write the history entry and the outbox messages of its gateway
   * event, atomically. An interactive Prisma transaction costs about 2 ms of CPU per move against
   * 0.4 ms for this (measured), and callbacks and the payout's answers apply through here. The
   * event's data is built beforehand from the row as read without a lock (`known`: as the caller
   * last read or wrote it, else read now): the fields it shows besides status, completedAt,
   * failureReason and the patch never change; which status it moves from is decided under the lock.
   * Returns the outcome and row (`applied`, or `unchanged` for a duplicate without a patch), or null
   * when this path cannot decide (the general path then does).
   */
  private async moveInOneStatement(
    id: string,
    to: TransactionStatus,
    source: StatusChangeSource,
    opts: Omit<MoveOptions, 'actorId'> & { actorId: string | null; effects?: Prisma.Sql[] },
  ): Promise<TransitionResult | null> {
    const known = opts.known?.id === id && opts.known.status !== to ? opts.known : undefined;
    const before = known ?? (await this.repository.peek(id));
    if (!before) return null;
    // A duplicate (a retried callback): statuses only move forward, so a row already there stays.
    if (before.status === to && !opts.patch) return { outcome: 'unchanged', transaction: before, from: to };
    const sources = movableFrom(before.kind, to, source);
    if (!sources.includes(before.status)) return null;
    const now = new Date();
    const failureReason = typeof opts.patch?.failureReason === 'string' ? opts.patch.failureReason : null;
    const final = FINAL_STATUSES.includes(to);
    const after: Transaction = {
      ...withAnswer(before, opts.patch),
      status: to,
      updatedAt: now,
      completedAt: final ? now : before.completedAt,
      failureReason: failureReason ?? before.failureReason,
    };
    const body = opts.answer ? answerOrNothing(opts.answer, after) : undefined;
    const moved = await this.repository.moveOnce(
      id,
      sources,
      to,
      {
        now,
        final,
        failureReason,
        entry: { source, payload: opts.payload, actorId: opts.actorId },
        patch: opts.patch,
        also: body === undefined ? null : idempotentAnswer(body, MOVED),
        effects: opts.effects,
      },
      this.outbox.ledgerEvent(after),
    );
    if (!moved) return null;
    const result: TransitionResult = { outcome: 'applied', transaction: moved.row, from: moved.from };
    if (!moved.alsoDone || !opts.answer) return result;
    // The answer was built from the row as predicted; the row as stored decides what is answered.
    const stored = opts.answer(moved.row);
    if (!isDeepStrictEqual(stored, body)) return result; // IdempotencyService stores the right one over it.
    answeredWith(body);
    return { ...result, answered: body };
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
   * 8601: the row's creation (a held payout's approval) + SETTLEMENT_DEADLINE, by when reconciliation has settled it; see
   * ReconciliationService). The client should not start the movement again before then. A row held
   * for review names itself the same way (`transactionStatus: 'needs_review'`, no `settlesBy`: a
   * person decides). A row that had already moved elsewhere (a callback during the call) stays where
   * it is, and a 502/504 still names it: `transactionId` and `settlesBy`, without `transactionStatus`.
   * An `error` of the database (`isDatabaseUnavailable`: the provider's answer could not be written,
   * or the database went away before the call) says nothing of the provider: nothing is written
   * here (the answer's move is kept by `transition`; a row the provider never saw is released by the
   * Idempotency-Key's recovery, IdempotencyService) and `unknown` is returned.
   */
  async recordProviderFailure(id: string, error: unknown, tx?: Tx): Promise<TransactionStatus> {
    if (isDatabaseUnavailable(error)) return 'unknown';
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
    return this.repository.findByProviderIdOrReference(kind, providerId, reference);
  }

  // ---- Card movements (ledger rows with a card id), for src/cards (CardLedgerService and friends) ----

  /**
   * The ledger row of a movement the provider reports for card `cardId`: the row with the
   * provider's id `providerId` (whatever its card or kind: the id is unique), else the row with
   * `reference` when that row is this card's and of `kind`. Null when neither.
   */
  findCardMovement(
    cardId: string,
    kind: TransactionKind,
    providerId: string,
    reference: string | null,
  ): Promise<Transaction | null> {
    return this.repository.findCardMovement(cardId, kind, providerId, reference);
  }

  /**
   * Card `cardId`'s movement (a spend being reversed) with the provider's id, else the one with
   * `reference`. Null when neither matches or neither is given.
   */
  findCardSpend(cardId: string, providerId: string | null, reference: string | null): Promise<Transaction | null> {
    return this.repository.findCardSpend(cardId, providerId, reference);
  }

  /** Whether any ledger row (of any kind) already has `reference`. */
  referenceTaken(reference: string): Promise<boolean> {
    return this.repository.referenceTaken(reference);
  }

  /**
   * Sets the provider's id on ledger row `id` when it has none (the first answer or callback
   * naming it), inside `tx` when given. Conditional: an id already there stays; an id another row
   * already has is left off. Returns whether it was set.
   */
  attachProviderId(id: string, providerId: string, tx?: Tx): Promise<boolean> {
    return this.repository.attachProviderId(id, providerId, tx);
  }

  /**
   * One page of card `cardId`'s movements (`limit + 1` rows, newest first, after `cursor`) and the
   * card's owner, in one statement; `card` null when no card has that id.
   * @throws ValidationError (400) on a malformed cursor.
   */
  cardMovementsPage(
    cardId: string,
    cursor: string | undefined,
    limit: number,
  ): Promise<{ card: { createdBy: string | null } | null; rows: CardMovementRow[] }> {
    return this.repository.cardMovementsPage(cardId, cursor, limit);
  }

  /** Card `cardId`'s ledger rows still open (`created`, `unknown`, `pending`): their references and provider ids. */
  openCardMovements(cardId: string): Promise<Array<{ reference: string; providerId: string | null }>> {
    return this.repository.openCardMovements(cardId);
  }

  /** @throws NotFoundError (404). */
  async get(id: string): Promise<Transaction> {
    return this.requireRow(id);
  }

  /**
   * Runs `run` in one database transaction, for a caller that moves a row and follows up in the
   * same transaction (the manual resolution and its owner's effect).
   */
  withTransaction<T>(run: (tx: Tx) => Promise<T>): Promise<T> {
    return this.repository.withTransaction(run);
  }

  /** Row `id` (inside `db` when given). @throws NotFoundError (404). */
  private async requireRow(id: string, db?: Tx): Promise<Transaction> {
    const row = await this.repository.find(id, db);
    if (!row) throw new NotFoundError('Transaction', id);
    return row;
  }

  // ---- Many rows at once: provider callbacks applied in batches (WebhooksService) ----

  /**
   * `findByProviderIdOrReference` for many events in one statement: for each `{providerId,
   * reference}` of `keys`, in order, the row of `kind` it names (the provider id wins), or null.
   * Rows are read without a lock and without `providerPayload`.
   */
  findManyByProviderIdOrReference(
    kind: TransactionKind,
    keys: Array<{ providerId: string | null; reference: string | null }>,
  ): Promise<Array<LedgerRow | null>> {
    return this.repository.findManyByProviderIdOrReference(kind, keys);
  }

  /**
   * Many `transition`s at once, each deciding as the one-statement move does (no caller
   * transaction; the only field set besides the status is `failureReason`): `moves[i].before` is
   * the row as just read without a lock (`findManyByProviderIdOrReference`), from which the gateway
   * event is built. Returns, per move in order: `applied` (moved, with its history entry and outbox
   * messages, all moves in ONE SQL statement: LedgerRepository.moveManyIfFrom), `unchanged` (already
   * at `to` and no `failureReason` to set: a duplicate, nothing written), or null when this path
   * cannot decide — a move the state machine refuses from the status read, a row whose status
   * changed before its lock, a duplicate with a `failureReason`, a second move of a row already in
   * the list, or a `manual` source: the caller then calls `transition` for it, which says which.
   * @throws whatever the statement throws (nothing was moved then).
   */
  async transitionMany(
    moves: Array<{
      before: LedgerRow;
      to: TransactionStatus;
      failureReason?: string;
      payload?: Prisma.InputJsonValue;
    }>,
    source: StatusChangeSource,
  ): Promise<Array<'applied' | 'unchanged' | null>> {
    const results: Array<'applied' | 'unchanged' | null> = moves.map(() => null);
    if (source === 'manual') return results;
    const now = new Date();
    const actorId = apiActor(source);
    const seen = new Set<string>();
    const planned: Array<{ index: number; id: string }> = [];
    const statement: Parameters<LedgerRepository['moveManyIfFrom']>[0] = [];
    moves.forEach(({ before, to, failureReason, payload }, index) => {
      if (seen.has(before.id)) return;
      seen.add(before.id);
      if (before.status === to) {
        if (failureReason === undefined) results[index] = 'unchanged';
        return;
      }
      const from = movableFrom(before.kind, to, source);
      if (!from.includes(before.status)) return;
      const final = FINAL_STATUSES.includes(to);
      const after: LedgerRow = {
        ...before,
        status: to,
        updatedAt: now,
        completedAt: final ? now : before.completedAt,
        failureReason: failureReason ?? before.failureReason,
      };
      planned.push({ index, id: before.id });
      statement.push({
        id: before.id,
        from,
        to,
        final,
        failureReason: failureReason ?? null,
        payload,
        event: this.outbox.ledgerEvent(after),
      });
    });
    const moved = await this.repository.moveManyIfFrom(statement, { now, source, actorId });
    for (const { index, id } of planned) if (moved.has(id)) results[index] = 'applied';
    return results;
  }
}
