import { AsyncLocalStorage } from 'node:async_hooks';
import type { Prisma, Transaction } from '../../generated/prisma/client';
import { ConflictError, ErrorCode } from '../errors';
import { IdempotencyRepository, type RawSql } from './idempotency.repository';

/**
 * The Idempotency-Key claim the current request holds: set by IdempotencyService.run around the
 * work, read by the code that writes ahead of a provider call (LedgerService.record, a payout's
 * confirm claim, a card's creation) to record on the claim which resource it wrote.
 */
export interface IdempotencyClaim {
  /** The API client (its id) that sent the request. */
  clientId: string;
  key: string;
  /** The claim's lease as this request set it: the token that says the claim is still ours. */
  leaseExpiresAt: Date;
  /**
   * Set when the work stored its own answer in the statement of its last write
   * (`idempotentAnswer` then `answeredWith`): IdempotencyService.run then stores nothing more when the
   * work returns that very body.
   */
  answered?: { body: unknown };
  /**
   * Set while the claim is deferred (IdempotencyService.run with `deferClaim`): its record is not
   * inserted yet. The work's first write inserts it in its own statement (`idempotentClaimSql`, then
   * `idempotentClaimSettled`), or the work calls `holdIdempotencyClaim()` before anything else it
   * writes or sends. Cleared once the record is the request's.
   */
  deferred?: DeferredClaim;
  /**
   * Set when the request sent a call to the provider (ProviderClient, `noteProviderCall`): from then
   * on a row it wrote ahead may have moved money, so a database outage never releases it.
   */
  providerCalled?: boolean;
}

/** What a deferred claim's record will hold, and how to insert it on its own. */
export interface DeferredClaim {
  fingerprint: string;
  /** The claim's time (created_at). */
  now: Date;
  expiresAt: Date;
  /** Inserts the record alone (one statement): true when the key is now the request's. */
  insert: () => Promise<boolean>;
}

/**
 * Thrown by the work of a request whose deferred claim found its Idempotency-Key taken (another
 * request holds it, or held it and has an answer): nothing was written and nothing sent.
 * IdempotencyService.run catches it and answers as for a key found taken before the work
 * (replay, 409 `idempotency_key_reused`, wait, or take a lapsed claim over).
 */
export class IdempotencyKeyTaken extends Error {
  constructor() {
    super('The Idempotency-Key is taken by another request.');
  }
}

/** The HTTP status of an idempotent route's success (its answer stored and replayed with it). */
export const IDEMPOTENT_SUCCESS_STATUS = 201;

const storage = new AsyncLocalStorage<IdempotencyClaim>();

/**
 * The deferred claim's record insert (IdempotencyRepository.insertInProgressSql: `INSERT … RETURNING
 * 1`, one row when the key is now the request's), to run as a CTE of the request's first write;
 * the record notes resource `type` `id` where `onlyIf` holds. Null when there is nothing to insert
 * (the claim is held already, or no idempotent request): use `idempotentResourceNote` then. After
 * the statement, call `idempotentClaimSettled` with whether its row came back.
 */
export function idempotentClaimSql(type: string, id: string, onlyIf: Prisma.Sql): Prisma.Sql | null {
  const claim = storage.getStore();
  const deferred = claim?.deferred;
  if (!claim || !deferred) return null;
  return IdempotencyRepository.insertInProgressSql(
    {
      clientId: claim.clientId,
      key: claim.key,
      fingerprint: deferred.fingerprint,
      expiresAt: deferred.expiresAt,
      leaseExpiresAt: claim.leaseExpiresAt,
      now: deferred.now,
    },
    { type, id, onlyIf },
  );
}

/**
 * The Idempotency-Key's part of a statement that writes a resource ahead of a provider call: the
 * deferred claim's record insert (`claim`, idempotentClaimSql), or, for a claim held already, its
 * note of the resource (`note`, idempotentResourceNote); both null outside an idempotent request.
 */
export interface ResourceKeySql {
  claim: Prisma.Sql | null;
  note: Prisma.Sql | null;
}

/** The column a statement built on `idempotencyKeyCtes` selects: whether `key` inserted the claim. */
export const KEY_HELD = IdempotencyRepository.KEY_HELD;

/**
 * The CTEs `key` and `note` of a statement that writes a resource under an Idempotency-Key (a
 * payout's confirm claim, a swap, a card movement, a guarded ledger row): IdempotencyRepository.keyCtes.
 */
export function idempotencyKeyCtes(sql: ResourceKeySql): Prisma.Sql {
  return IdempotencyRepository.keyCtes(sql);
}

/**
 * The Idempotency-Key's SQL for the one statement that writes resource `type` `id` where `onlyIf`
 * holds (idempotencyKeyCtes): the deferred claim's insert when the claim is deferred,
 * else the held claim's note (both null outside an idempotent request). After the statement, call
 * `settled` with its KEY_HELD: it makes a deferred claim the request's, or throws IdempotencyKeyTaken.
 */
export function idempotentWriteSql(
  type: string,
  id: string,
  onlyIf: Prisma.Sql,
): ResourceKeySql & { settled: (keyHeld: boolean) => void } {
  const claim = idempotentClaimSql(type, id, onlyIf);
  return {
    claim,
    note: claim ? null : idempotentResourceNote(type, id, onlyIf),
    settled: (keyHeld) => {
      if (claim) idempotentClaimSettled(keyHeld);
    },
  };
}

/**
 * After the statement that ran `idempotentClaimSql`: `held` (its row came back) makes the claim the
 * request's; otherwise the key is taken, and this throws IdempotencyKeyTaken (the statement wrote
 * nothing that depends on the claim). No-op when the claim was not deferred.
 * @throws IdempotencyKeyTaken when the deferred claim was not won.
 */
export function idempotentClaimSettled(held: boolean): void {
  const claim = storage.getStore();
  if (!claim?.deferred) return;
  if (!held) throw new IdempotencyKeyTaken();
  claim.deferred = undefined;
}

/**
 * Makes a deferred claim the request's (its record inserted alone) before the work writes or sends
 * anything that does not claim the key itself. No-op when the claim is held already or there is none.
 * @throws IdempotencyKeyTaken when the key is taken.
 */
export async function holdIdempotencyClaim(): Promise<void> {
  const claim = storage.getStore();
  if (claim?.deferred) idempotentClaimSettled(await claim.deferred.insert());
}

/**
 * Whether the current request runs under a deferred claim not yet made (its key not yet the
 * request's): nothing may be written or sent to the provider then.
 */
export function idempotencyClaimPending(): boolean {
  return storage.getStore()?.deferred !== undefined;
}

/**
 * Notes on the current request's claim that a call is being sent to the provider (ProviderClient,
 * before it sends anything). No-op outside an idempotent request.
 */
export function noteProviderCall(): void {
  const claim = storage.getStore();
  if (claim) claim.providerCalled = true;
}

/** Runs `work` holding `claim` (everything it awaits sees it). */
export function runWithIdempotencyClaim<T>(claim: IdempotencyClaim, work: () => Promise<T>): Promise<T> {
  return storage.run(claim, work);
}

/** The claim of the current request, if it runs under an Idempotency-Key. */
export function currentIdempotencyClaim(): IdempotencyClaim | undefined {
  return storage.getStore();
}

/**
 * Records on the current request's claim that it wrote resource `type` `id` ahead of its provider
 * call (the first resource written wins; later ones leave it). Run it in the database transaction
 * that writes the resource, so that both commit together. A retry that finds the claim's process
 * dead is then answered from this resource (IdempotencyService) instead of running the work again.
 * No-op outside an idempotent request. The SQL is IdempotencyRepository.noteResource's.
 * @throws ConflictError (409 `request_in_progress`) when the claim is no longer ours (its lease
 * lapsed and a retry took it over): the caller must not go on to the provider — the transaction
 * it runs in rolls back, so nothing is written and nothing is sent twice.
 */
export async function noteIdempotentResource(db: RawSql, type: string, id: string): Promise<void> {
  const claim = storage.getStore();
  if (!claim) return;
  assertHeld(claim);
  if (!(await IdempotencyRepository.noteResource(db, claim, type, id))) throw lostClaim();
}

/**
 * noteIdempotentResource as an SQL statement to run inside the statement that writes the resource
 * (a data-modifying CTE, `UPDATE … RETURNING 1`: one row while the claim is ours), or null outside
 * an idempotent request. The caller checks the row came back and, if not, throws `lostClaim()`
 * inside its database transaction, so that the resource is rolled back and the provider never called.
 * `onlyIf`: an SQL condition the note also needs (e.g. that the resource was written).
 */
export function idempotentResourceNote(type: string, id: string, onlyIf?: Prisma.Sql): Prisma.Sql | null {
  const claim = storage.getStore();
  if (claim) assertHeld(claim);
  return claim ? IdempotencyRepository.noteResourceSql(claim, type, id, onlyIf) : null;
}

/**
 * What a statement built on `idempotencyKeyCtes` that claims one resource answers (its one row:
 * the written row's columns, null when nothing was written, `claimable` (the resource could be
 * claimed) and KEY_HELD): `row` is the written row, else `lost` when the resource was claimable but
 * the key's claim or note was not the request's (nothing written: `lostClaim`, 409), else null (not
 * claimable: nothing written but the key's record). Call `settled(keyHeld)` before reading `row`.
 */
export function claimedRow(result: Transaction & { claimable: boolean; keyHeld: boolean }): {
  row: Transaction | 'lost' | null;
  keyHeld: boolean;
} {
  const { claimable, keyHeld, ...row } = result;
  return { row: row.id ? row : claimable ? 'lost' : null, keyHeld };
}

/** The 409 `request_in_progress` of a request that lost its Idempotency-Key claim to a retry. */
export function lostClaim(): ConflictError {
  return new ConflictError(
    'This request lost its Idempotency-Key claim to a retry of the same key; nothing was sent.',
    ErrorCode.RequestInProgress,
  );
}

/**
 * The statement storing `body` as the current request's answer (status IDEMPOTENT_SUCCESS_STATUS,
 * as IdempotencyService.run would once the work returns it), to run inside the work's last write (a
 * data-modifying CTE, `UPDATE … RETURNING 1`), only if `onlyIf` holds (e.g. the move was made); null
 * outside an idempotent request. Once that statement has stored it, call `answeredWith(body)` and
 * return exactly `body`: the request then answers what a retry replays, with one statement less.
 */
export function idempotentAnswer(body: unknown, onlyIf: Prisma.Sql): Prisma.Sql | null {
  const claim = storage.getStore();
  if (claim) assertHeld(claim);
  return claim ? IdempotencyRepository.storeResponseSql(claim, IDEMPOTENT_SUCCESS_STATUS, body, onlyIf) : null;
}

/** Records that the current request's answer `body` is stored (see idempotentAnswer). No-op outside one. */
export function answeredWith(body: unknown): void {
  const claim = storage.getStore();
  if (claim) claim.answered = { body };
}

/**
 * @throws Error when `claim` is still deferred: a note or an answer needs the record inserted
 * (idempotentClaimSql in the same statement, or holdIdempotencyClaim first). A bug, never a client's fault.
 */
function assertHeld(claim: IdempotencyClaim): void {
  if (claim.deferred) throw new Error('the deferred Idempotency-Key claim is not held yet');
}
