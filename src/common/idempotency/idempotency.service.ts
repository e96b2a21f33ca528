import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Env } from '../../config/env';
import { PendingWrites } from '../../database/pending-writes';
import { isDatabaseUnavailable } from '../../database/unavailable';
import type { Prisma } from '../../generated/prisma/client';
import { ConflictError, DomainError, ErrorCode, HTTP_STATUS_BY_CODE } from '../errors';
import {
  IDEMPOTENT_SUCCESS_STATUS,
  type IdempotencyClaim,
  IdempotencyKeyTaken,
  runWithIdempotencyClaim,
} from './idempotency-context';
import { IdempotencyRepository } from './idempotency.repository';

/** Answers not kept for a key: the key is released, so that a retry with it runs the work again. */
const RELEASED_CODES: ReadonlySet<ErrorCode> = new Set([ErrorCode.ValidationFailed, ErrorCode.ProviderRetryLater]);

/** The errors `run` throws as a key's stored answer (a replay), as opposed to its work's own failures. */
const REPLAYED_ERRORS = new WeakSet<Error>();

/**
 * Whether `error` is a key's stored error answer replayed by IdempotencyService.run (answered with
 * `idempotent-replayed: true`, as a replayed success is), rather than the failure of a request that ran.
 */
export function isReplayedAnswer(error: unknown): boolean {
  return error instanceof Error && REPLAYED_ERRORS.has(error);
}

/** How long a key's first response is kept and replayed (docs/design.md#idempotency: 24 h). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** How long a second request with the same key waits for the first one to finish before 409. */
export const IN_PROGRESS_WAIT_MS = 10_000;
const POLL_MS = 50;

/** A response to store and replay. */
export interface StoredResponse {
  status: number;
  body: unknown;
}

/** JSON with object keys sorted, so that the same body always fingerprints the same. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** SHA-256 of the method, the route with its parameters, and the canonical body. */
export function requestFingerprint(method: string, path: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method} ${path}\n${canonicalJson(body ?? null)}`)
    .digest('hex');
}

/**
 * Renders the current state of a resource a request wrote ahead of its provider call (e.g. a payout
 * → its PayoutDto), for a retry whose first request died. `clientId` is the retrying client (a
 * renderer must not show another client's resource). @throws NotFoundError when it is gone.
 */
export type ResourceRenderer = (id: string, clientId: string) => Promise<unknown>;

/**
 * Releases a resource a request wrote ahead of a provider call it never made (the database went
 * away in between): e.g. a payout row `created` → `failed`, so that a retry of the key runs anew.
 * Must change nothing when the resource is no longer in the state the request left it in.
 */
export type ResourceReleaser = (id: string) => Promise<void>;

/** What a retry of a taken key found: an answer, or the claim itself (taken over: run the work). */
type Found = { response: StoredResponse } | { takenOver: Date };

/**
 * Idempotency keys (docs/design.md#idempotency), decided in PostgreSQL so that it holds across
 * several gateway instances: a unique (client, key) row is claimed before the work runs, with a
 * lease (`lease_expires_at` = now + IDEMPOTENCY_LEASE_MS).
 * - same client + key + same request → the first response is replayed; the work does not run again;
 * - same key + another request → 409 `idempotency_key_reused`;
 * - a second request while the first runs → waits up to IN_PROGRESS_WAIT_MS for its result, then
 *   409 `request_in_progress`;
 * - a retry that finds the claim in progress with its lease lapsed (its process died): when the
 *   work had written its resource ahead of the provider call (noteIdempotentResource, e.g. the
 *   payout's ledger row), the retry is answered from that resource's current state (a renderer each
 *   module registers; header `idempotent-replayed: true`) and the work does NOT run again; when no
 *   resource was written, nothing was sent to the provider (write-ahead precedes every provider
 *   call), so the retry takes the claim over atomically (new lease) and runs the work. The lease is
 *   the claim's token: the first request, should it still be alive, finds it changed when it tries
 *   to write its resource and stops before the provider (idempotency-context.ts).
 * A `validation_failed` answer is not kept (nothing happened; the client may correct and resend),
 * nor is a `provider_retry_later` one (503: the provider call was never sent, or the provider
 * refused it for its rate limit; the ledger row written ahead of it ended `failed`): a retry with
 * the same key after `Retry-After` runs the work again, as a new movement.
 * Every other answer, errors included, is kept: after a provider timeout the money movement's
 * outcome is unknown, and replaying the answer is what prevents a second payout.
 */
@Injectable()
export class IdempotencyService {
  private readonly renderers = new Map<string, ResourceRenderer>();
  private readonly releasers = new Map<string, ResourceReleaser>();

  constructor(
    private readonly repository: IdempotencyRepository,
    private readonly config: ConfigService<Env, true>,
    private readonly pending: PendingWrites,
  ) {}

  /**
   * Registers how to release a resource of `type` written ahead of a provider call the request never
   * made (see ResourceReleaser; used after a database outage, `recoverAfterOutage`).
   * @throws Error when the type already has a releaser.
   */
  registerRelease(type: string, release: ResourceReleaser): void {
    if (this.releasers.has(type)) throw new Error(`idempotent resource ${type} already has a releaser`);
    this.releasers.set(type, release);
  }

  /**
   * Registers how to answer a retry from a resource of `type` (the type given to
   * noteIdempotentResource: a ledger kind such as `payout`, or `card`).
   * @throws Error when the type already has a renderer (two owners would be a bug).
   */
  registerResource(type: string, render: ResourceRenderer): void {
    if (this.renderers.has(type)) throw new Error(`idempotent resource ${type} already has a renderer`);
    this.renderers.set(type, render);
  }

  /**
   * Runs `work` (the route's handler) under the Idempotency-Key `key` of API client `clientId` for
   * the request `fingerprint` (requestFingerprint), as the class comment says; resolves to the
   * answer (`replayed` when it is a stored one). With `deferClaim`, the key's record is not inserted
   * before the work: the work claims it in its first write's own statement (idempotentClaimSql) or
   * alone before anything else (holdIdempotencyClaim), and throws IdempotencyKeyTaken when the key
   * was taken, having written nothing; the request is then answered as one that found the key taken
   * (one statement and one commit less per request).
   */
  async run(
    clientId: string,
    key: string,
    fingerprint: string,
    work: () => Promise<StoredResponse>,
    options: { deferClaim?: boolean } = {},
  ): Promise<StoredResponse & { replayed: boolean }> {
    const claim = options.deferClaim
      ? this.deferredClaim(clientId, key, fingerprint)
      : await this.claim(clientId, key, fingerprint);
    if (claim) {
      try {
        return { ...(await this.runHolding(claim, work)), replayed: false };
      } catch (error) {
        if (!(error instanceof IdempotencyKeyTaken)) throw error;
      }
    }
    const found = await this.awaitStored(clientId, key, fingerprint);
    if ('response' in found) return { ...found.response, replayed: true };
    const takenOver: IdempotencyClaim = { clientId, key, leaseExpiresAt: found.takenOver };
    return { ...(await this.runHolding(takenOver, work)), replayed: false };
  }

  /**
   * Runs `work` under `claim` and keeps its answer on the key (see run). A deferred claim the work
   * never made its own stores nothing (no record: nothing was written); a work that succeeded without
   * making it claims the key before its answer is stored.
   * @throws IdempotencyKeyTaken when a deferred claim found the key taken (nothing stored).
   */
  private async runHolding(claim: IdempotencyClaim, work: () => Promise<StoredResponse>): Promise<StoredResponse> {
    let response: StoredResponse;
    try {
      response = await runWithIdempotencyClaim(claim, work);
    } catch (error) {
      // The database went away mid-request (503 database_unavailable): no answer is kept; the claim
      // is settled as soon as the database is back, so that a retry with the key gets the request's
      // real outcome (recoverAfterOutage).
      if (isDatabaseUnavailable(error)) {
        this.pending.keep(`idempotency key ${claim.key}`, () => this.recoverAfterOutage(claim));
        throw error;
      }
      if (error instanceof IdempotencyKeyTaken || claim.deferred) throw error;
      if (error instanceof DomainError && RELEASED_CODES.has(error.code)) {
        await this.repository.releaseClaim(claim);
        throw error;
      }
      // Any other failure may follow a provider call: keep the answer so a retry never moves money
      // twice. If even that cannot be written (database down), the row stays in progress until its
      // lease lapses; a retry is then answered from the resource written ahead of the call.
      const stored =
        error instanceof DomainError
          ? { code: error.code, message: error.message, extensions: error.extensions }
          : { code: ErrorCode.InternalError, message: 'An unexpected error occurred.', extensions: {} };
      await this.complete(claim, {
        status: HTTP_STATUS_BY_CODE[stored.code],
        body: { __error: true, ...stored },
      }).catch(() => undefined);
      throw error;
    }
    if (claim.deferred && !(await claim.deferred.insert())) throw new IdempotencyKeyTaken();
    claim.deferred = undefined;
    // Stored already when the work's last write stored this very answer (idempotentAnswer).
    if (claim.answered?.body !== response.body || response.status !== IDEMPOTENT_SUCCESS_STATUS) {
      await this.complete(claim, response).catch((error: unknown) => {
        // The work is done but its answer could not be kept: kept in memory until the database is back.
        if (isDatabaseUnavailable(error)) {
          this.pending.keep(`idempotency key ${claim.key} answer`, () => this.complete(claim, response));
        }
        throw error;
      });
    }
    return response;
  }

  /**
   * Settles the claim of a request cut by a database outage, once the database is back (run by
   * PendingWrites, after the writes the request kept before it: its provider answer's move, which
   * also stores the key's answer). A record already answered, gone, or no longer the claim's is left
   * alone. Otherwise, when the request never called the provider, the resource it wrote ahead (if
   * any, and if its type has a releaser) is released and the claim lapses without it: a retry of the
   * key runs the request anew. When it did call the provider (or its resource cannot be released),
   * the claim lapses with its resource: a retry is answered from the resource as it is now (as after
   * a crash), without waiting for IDEMPOTENCY_LEASE_MS.
   * @throws the database's error while it is still unavailable (PendingWrites tries again).
   */
  private async recoverAfterOutage(claim: IdempotencyClaim): Promise<void> {
    const row = await this.repository.find(claim.clientId, claim.key);
    if (!row || row.state !== 'in_progress' || row.leaseExpiresAt?.getTime() !== claim.leaseExpiresAt.getTime()) return;
    const release = row.resourceType ? this.releasers.get(row.resourceType) : undefined;
    if (claim.providerCalled || (row.resourceId && !release)) {
      await this.repository.lapseClaim(claim, false);
      return;
    }
    if (row.resourceId && release) await release(row.resourceId);
    await this.repository.lapseClaim(claim, true);
  }

  /** A deferred claim of `key` (nothing inserted yet): its lease and record as the work will insert them. */
  private deferredClaim(clientId: string, key: string, fingerprint: string): IdempotencyClaim {
    const now = Date.now();
    const claim: IdempotencyClaim = { clientId, key, leaseExpiresAt: new Date(now + this.leaseMs()) };
    const record = { clientId, key, fingerprint, leaseExpiresAt: claim.leaseExpiresAt };
    const expiresAt = new Date(now + IDEMPOTENCY_TTL_MS);
    claim.deferred = {
      fingerprint,
      now: new Date(now),
      expiresAt,
      insert: () => this.repository.insertInProgress({ ...record, expiresAt, now: new Date(now) }),
    };
    return claim;
  }

  private leaseMs(): number {
    return this.config.get('IDEMPOTENCY_LEASE_MS', { infer: true });
  }

  /** Inserts the in-progress row with its lease: the claim, or null if the key is taken (an expired row is replaced). */
  private async claim(clientId: string, key: string, fingerprint: string): Promise<IdempotencyClaim | null> {
    const now = Date.now();
    const expiresAt = new Date(now + IDEMPOTENCY_TTL_MS);
    const leaseExpiresAt = new Date(now + this.leaseMs());
    const claimed = await this.repository.insertInProgress({
      clientId,
      key,
      fingerprint,
      expiresAt,
      leaseExpiresAt,
      now: new Date(now),
    });
    return claimed ? { clientId, key, leaseExpiresAt } : null;
  }

  /** Stores the answer, if the claim is still ours (a retry may have taken a lapsed claim over). */
  private async complete(claim: IdempotencyClaim, response: StoredResponse): Promise<void> {
    await this.repository.storeResponse(claim, response.status, response.body as Prisma.InputJsonValue);
  }

  /**
   * The stored answer for a taken key, waiting while it is in progress; once its lease has lapsed,
   * the answer rendered from its resource, or the claim taken over when it wrote none.
   */
  private async awaitStored(clientId: string, key: string, fingerprint: string): Promise<Found> {
    const deadline = Date.now() + IN_PROGRESS_WAIT_MS;
    for (;;) {
      const row = await this.repository.find(clientId, key);
      if (!row)
        throw new ConflictError(
          'The request with this idempotency key failed validation; send it again.',
          ErrorCode.RequestInProgress,
        );
      if (row.fingerprint !== fingerprint) {
        throw new ConflictError(
          'This Idempotency-Key was used with a different request.',
          ErrorCode.IdempotencyKeyReused,
        );
      }
      if (row.state === 'completed') {
        const body = row.responseBody as Record<string, unknown> | null;
        if (body && body.__error === true) {
          const replayed = new DomainError(
            body.code as ErrorCode,
            String(body.message),
            body.extensions as Record<string, unknown>,
          );
          REPLAYED_ERRORS.add(replayed);
          throw replayed;
        }
        return { response: { status: row.responseStatus ?? 200, body } };
      }
      // A claim written before leases existed holds for one lease from its creation.
      const lease = row.leaseExpiresAt ?? new Date(row.createdAt.getTime() + this.leaseMs());
      if (lease.getTime() <= Date.now()) {
        if (row.resourceType && row.resourceId) {
          const render = this.renderers.get(row.resourceType);
          if (render) return { response: { status: 201, body: await render(row.resourceId, clientId) } };
        } else {
          const takenOver = new Date(Date.now() + this.leaseMs());
          if (await this.repository.takeOverLapsed(row.id, row.leaseExpiresAt, takenOver)) return { takenOver };
          continue; // Another retry took it, or the resource was just written: look again.
        }
      }
      if (Date.now() > deadline) {
        throw new ConflictError(
          'A request with this Idempotency-Key is still in progress.',
          ErrorCode.RequestInProgress,
        );
      }
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }
}
