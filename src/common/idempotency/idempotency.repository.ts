import { Injectable } from '@nestjs/common';
import { isUniqueViolation, PrismaService } from '../../database/prisma.service';
import type { IdempotencyRecord, Prisma } from '../../generated/prisma/client';
import type { IdempotencyClaim } from './idempotency-context';

/** Anything that can run raw SQL: the Prisma client or an interactive transaction of it. */
export interface RawSql {
  $executeRaw(query: TemplateStringsArray, ...values: unknown[]): Promise<number>;
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
    const owned = await db.$executeRaw`
      UPDATE idempotency_records
      SET resource_type = COALESCE(resource_type, ${type}), resource_id = COALESCE(resource_id, ${id})
      WHERE client_id = ${claim.clientId}::uuid AND key = ${claim.key} AND state = 'in_progress'
        AND lease_expires_at = ${claim.leaseExpiresAt}`;
    return owned > 0;
  }

  /** Deletes the record of `clientId`/`key` if it expired before `now` (so the key may be claimed anew). */
  async deleteIfExpired(clientId: string, key: string, now: Date): Promise<void> {
    await this.prisma.idempotencyRecord.deleteMany({ where: { clientId, key, expiresAt: { lt: now } } });
  }

  /** Inserts the in-progress record with its lease; false when the key is already taken. */
  async insertInProgress(data: {
    clientId: string;
    key: string;
    fingerprint: string;
    expiresAt: Date;
    leaseExpiresAt: Date;
  }): Promise<boolean> {
    try {
      await this.prisma.idempotencyRecord.create({ data });
      return true;
    } catch (error) {
      if (isUniqueViolation(error)) return false;
      throw error;
    }
  }

  /** Deletes the claim's record while it is still in progress under the claim's lease. */
  async releaseClaim(claim: IdempotencyClaim): Promise<void> {
    await this.prisma.idempotencyRecord.deleteMany({
      where: { clientId: claim.clientId, key: claim.key, state: 'in_progress', leaseExpiresAt: claim.leaseExpiresAt },
    });
  }

  /** Stores the answer as `completed`, only while the record is in progress under the claim's lease. */
  async storeResponse(claim: IdempotencyClaim, status: number, body: Prisma.InputJsonValue): Promise<void> {
    await this.prisma.idempotencyRecord.updateMany({
      where: { clientId: claim.clientId, key: claim.key, state: 'in_progress', leaseExpiresAt: claim.leaseExpiresAt },
      data: { state: 'completed', responseStatus: status, responseBody: body },
    });
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
