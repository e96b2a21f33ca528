import { Injectable } from '@nestjs/common';
import { PrismaService } from '../../database/prisma.service';
import { type IdempotencyRecord, Prisma } from '../../generated/prisma/client';
import type { IdempotencyClaim, ResourceKeySql } from './idempotency-context';

/** Anything that can run raw SQL: the Prisma client or an interactive transaction of it. */
export interface RawSql {
  $executeRaw(query: TemplateStringsArray | Prisma.Sql, ...values: unknown[]): Promise<number>;
}

/** An in-progress record to insert: the claim of `key` by API client `clientId`, with its lease. */
export interface InProgressRecord {
  clientId: string;
  key: string;
  /** requestFingerprint of the request. */
  fingerprint: string;
  /** When the record (and the answer it will keep) expires: the key may then be claimed anew. */
  expiresAt: Date;
  /** The claim's lease (its token: see IdempotencyClaim). */
  leaseExpiresAt: Date;
  /** The claim's time (created_at; a record that expired before it is replaced). Default: now. */
  now?: Date;
}

/** Database access for idempotency records (one per API client and Idempotency-Key). */
@Injectable()
export class IdempotencyRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Sets resource `type` `id` on `claim`'s record, inside `db` (the caller's database transaction,
   * the one writing the resource), when the record is still in progress under the claim's lease;
   * a resource already set stays (the first one wins). Returns whether the claim is still ours
   * (false: its lease lapsed and a retry took it over, or the record is gone).
   * Static: it runs on the caller's transaction client alone, so that code writing a resource in
   * any module records it without this repository injected (noteIdempotentResource).
   */
  static async noteResource(db: RawSql, claim: IdempotencyClaim, type: string, id: string): Promise<boolean> {
    return (await db.$executeRaw(IdempotencyRepository.noteResourceSql(claim, type, id))) > 0;
  }

  /** The column a statement built on `keyCtes` selects: whether its `key` CTE inserted the claim. */
  static readonly KEY_HELD = Prisma.sql`EXISTS (SELECT 1 FROM key) AS "keyHeld"`;

  /**
   * The CTEs `key` and `note` of a statement that writes a resource under an Idempotency-Key (a
   * payout's confirm claim, a swap, a card movement, a guarded ledger row): `key` runs the deferred
   * claim's insert (`claim`, or nothing); `note` has one row when the key is the request's: the claim
   * just inserted, the held claim's note (`note`) found it still ours, or there is no idempotent
   * request. The statement writes only where `EXISTS (SELECT 1 FROM note)` (and its own condition)
   * holds, and selects KEY_HELD so that its caller can tell a deferred claim that found the key taken.
   */
  static keyCtes({ claim, note }: ResourceKeySql): Prisma.Sql {
    return Prisma.sql`key AS (${claim ?? Prisma.sql`SELECT 1 WHERE false`}),
      note AS (${note ?? (claim ? Prisma.sql`SELECT 1 FROM key` : Prisma.sql`SELECT 1`)})`;
  }

  /**
   * noteResource's statement, for a repository that writes the resource and notes it in ONE SQL
   * statement (a data-modifying CTE, e.g. the ledger's write-ahead insert): `UPDATE … RETURNING 1`,
   * one row when the claim is still ours, none otherwise. With `onlyIf` (an SQL condition, e.g.
   * `EXISTS (SELECT 1 FROM won)`), it changes nothing unless that holds.
   */
  static noteResourceSql(claim: IdempotencyClaim, type: string, id: string, onlyIf?: Prisma.Sql): Prisma.Sql {
    return Prisma.sql`
      UPDATE idempotency_records
      SET resource_type = COALESCE(resource_type, ${type}), resource_id = COALESCE(resource_id, ${id})
      WHERE client_id = ${claim.clientId}::uuid AND key = ${claim.key} AND state = 'in_progress'
        AND lease_expires_at = ${claim.leaseExpiresAt}${onlyIf ? Prisma.sql` AND ${onlyIf}` : Prisma.empty}
      RETURNING 1`;
  }

  /** Deletes the record of `clientId`/`key` if it expired before `now` (so the key may be claimed anew). */
  async deleteIfExpired(clientId: string, key: string, now: Date): Promise<void> {
    await this.prisma.idempotencyRecord.deleteMany({ where: { clientId, key, expiresAt: { lt: now } } });
  }

  /**
   * Inserts the in-progress record with its lease, in ONE statement that also replaces a record of
   * the same (client, key) which expired before `now` (its 24 h are over: the key may be claimed
   * anew). False when the key is taken by a record that has not expired. Sent through
   * node-postgres (PrismaService.sql: every money-moving request runs it; a raw Prisma query costs
   * the gateway ~450 µs of CPU against ~50 µs).
   */
  async insertInProgress(data: InProgressRecord): Promise<boolean> {
    return (await this.prisma.sql(IdempotencyRepository.insertInProgressSql(data))).length > 0;
  }

  /**
   * insertInProgress's statement (`INSERT … ON CONFLICT … RETURNING 1`: one row when the key is now
   * the caller's), for a repository that claims the key in the statement of the request's first
   * write (a data-modifying CTE: a deferred claim, IdempotencyService.run with `deferClaim`). With
   * `resource`, the record notes resource `type` `id` as it is inserted, but only where `onlyIf`
   * (an SQL condition, e.g. that the resource is written in the same statement) holds: a sibling
   * CTE's UPDATE could not see the row this statement inserts.
   */
  static insertInProgressSql(
    data: InProgressRecord,
    resource?: { type: string; id: string; onlyIf: Prisma.Sql },
  ): Prisma.Sql {
    const now = data.now ?? new Date();
    const type = resource ? Prisma.sql`CASE WHEN ${resource.onlyIf} THEN ${resource.type}::text END` : Prisma.sql`NULL`;
    const id = resource ? Prisma.sql`CASE WHEN ${resource.onlyIf} THEN ${resource.id}::text END` : Prisma.sql`NULL`;
    return Prisma.sql`
      INSERT INTO idempotency_records AS r (id, client_id, key, fingerprint, state, lease_expires_at, created_at, expires_at,
                                            resource_type, resource_id)
      SELECT gen_random_uuid(), ${data.clientId}::uuid, ${data.key}::text, ${data.fingerprint}::text, 'in_progress',
             ${data.leaseExpiresAt}::timestamptz, ${now}::timestamptz, ${data.expiresAt}::timestamptz, ${type}, ${id}
      ON CONFLICT (client_id, key) DO UPDATE
      SET fingerprint = EXCLUDED.fingerprint, state = 'in_progress', response_status = NULL, response_body = NULL,
          lease_expires_at = EXCLUDED.lease_expires_at, resource_type = EXCLUDED.resource_type,
          resource_id = EXCLUDED.resource_id, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
      WHERE r.expires_at < ${now}::timestamptz
      RETURNING 1`;
  }

  /** Deletes the claim's record while it is still in progress under the claim's lease. */
  async releaseClaim(claim: IdempotencyClaim): Promise<void> {
    await this.prisma.idempotencyRecord.deleteMany({
      where: { clientId: claim.clientId, key: claim.key, state: 'in_progress', leaseExpiresAt: claim.leaseExpiresAt },
    });
  }

  /**
   * Stores the answer as `completed`, only while the record is the claim's (in progress under its
   * lease, or already completed under it: an answer the request's own last write stored, which the
   * answer it actually gave replaces). One statement, through node-postgres (PrismaService.sql).
   */
  async storeResponse(claim: IdempotencyClaim, status: number, body: Prisma.InputJsonValue): Promise<void> {
    await this.prisma.sql(IdempotencyRepository.storeResponseSql(claim, status, body));
  }

  /**
   * storeResponse's statement (`UPDATE … RETURNING 1`: one row when stored), for a repository that
   * stores the answer in the statement of the request's last write (a data-modifying CTE); with
   * `onlyIf` (an SQL condition, e.g. that the write happened), it changes nothing unless that holds.
   */
  static storeResponseSql(claim: IdempotencyClaim, status: number, body: unknown, onlyIf?: Prisma.Sql): Prisma.Sql {
    return Prisma.sql`
      UPDATE idempotency_records
      SET state = 'completed', response_status = ${status},
          response_body = ${body === undefined ? null : JSON.stringify(body)}::jsonb
      WHERE client_id = ${claim.clientId}::uuid AND key = ${claim.key} AND state IN ('in_progress', 'completed')
        AND lease_expires_at = ${claim.leaseExpiresAt}${onlyIf ? Prisma.sql` AND ${onlyIf}` : Prisma.empty}
      RETURNING 1`;
  }

  /**
   * Lets the claim's lease lapse now (while the record is still in progress under it), for a retry
   * of the key to be answered without waiting: from the resource noted on it, or, with
   * `forgetResource` (its resource was released: the provider never saw it), by running the
   * request anew (the retry takes the claim over). Returns whether the record was the claim's.
   */
  async lapseClaim(claim: IdempotencyClaim, forgetResource: boolean): Promise<boolean> {
    const lapsed = await this.prisma.idempotencyRecord.updateMany({
      where: { clientId: claim.clientId, key: claim.key, state: 'in_progress', leaseExpiresAt: claim.leaseExpiresAt },
      data: { leaseExpiresAt: new Date(), ...(forgetResource ? { resourceType: null, resourceId: null } : {}) },
    });
    return lapsed.count === 1;
  }

  find(clientId: string, key: string): Promise<IdempotencyRecord | null> {
    return this.prisma.idempotencyRecord.findUnique({ where: { clientId_key: { clientId, key } } });
  }

  /**
   * Takes over record `id` whose lease `lapsedLease` has lapsed and which wrote no resource, with the
   * new lease `takenOver`; true to the one caller that took it.
   */
  async takeOverLapsed(id: string, lapsedLease: Date | null, takenOver: Date): Promise<boolean> {
    const taken = await this.prisma.idempotencyRecord.updateMany({
      where: { id, state: 'in_progress', resourceId: null, leaseExpiresAt: lapsedLease },
      data: { leaseExpiresAt: takenOver },
    });
    return taken.count === 1;
  }
}
