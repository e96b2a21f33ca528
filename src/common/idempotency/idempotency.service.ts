import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { isUniqueViolation, PrismaService } from '../../database/prisma.service';
import { Prisma } from '../../generated/prisma/client';
import { ConflictError, DomainError, ErrorCode, HTTP_STATUS_BY_CODE } from '../errors';

/** How long a key's first response is kept and replayed (DESIGN.md: 24 h). */
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
 * Idempotency keys (DESIGN.md "Idempotency-Key"), decided in PostgreSQL so that it holds across
 * several gateway instances: a unique (client, key) row is claimed before the work runs.
 * - same client + key + same request → the first response is replayed; the work does not run again;
 * - same key + another request → 409 `idempotency_key_reused`;
 * - a second request while the first runs → waits up to IN_PROGRESS_WAIT_MS for its result, then
 *   409 `request_in_progress`.
 * A `validation_failed` answer is not kept (nothing happened; the client may correct and resend).
 * Every other answer, errors included, is kept: after a provider timeout the money movement's
 * outcome is unknown, and replaying the answer is what prevents a second payout. A stuck
 * in-progress row (the process died mid-request) blocks its key until it expires: safe, not lost.
 */
@Injectable()
export class IdempotencyService {
  constructor(private readonly prisma: PrismaService) {}

  async run(
    clientId: string,
    key: string,
    fingerprint: string,
    work: () => Promise<StoredResponse>,
  ): Promise<StoredResponse & { replayed: boolean }> {
    const claimed = await this.claim(clientId, key, fingerprint);
    if (!claimed) return { ...(await this.awaitStored(clientId, key, fingerprint)), replayed: true };
    let response: StoredResponse;
    try {
      response = await work();
    } catch (error) {
      if (error instanceof DomainError && error.code === ErrorCode.ValidationFailed) {
        await this.prisma.idempotencyRecord.deleteMany({ where: { clientId, key, state: 'in_progress' } });
        throw error;
      }
      // Any other failure may follow a provider call: keep the answer so a retry never moves money
      // twice. If even that cannot be written (database down), the row stays in progress, which
      // refuses retries with 409 rather than risking a second movement.
      const stored =
        error instanceof DomainError
          ? { code: error.code, message: error.message, extensions: error.extensions }
          : { code: ErrorCode.InternalError, message: 'An unexpected error occurred.', extensions: {} };
      await this.complete(clientId, key, {
        status: HTTP_STATUS_BY_CODE[stored.code],
        body: { __error: true, ...stored },
      }).catch(() => undefined);
      throw error;
    }
    await this.complete(clientId, key, response);
    return { ...response, replayed: false };
  }

  /** Inserts the in-progress row; false if the key is taken (an expired row is replaced). */
  private async claim(clientId: string, key: string, fingerprint: string): Promise<boolean> {
    const expiresAt = new Date(Date.now() + IDEMPOTENCY_TTL_MS);
    await this.prisma.idempotencyRecord.deleteMany({ where: { clientId, key, expiresAt: { lt: new Date() } } });
    try {
      await this.prisma.idempotencyRecord.create({ data: { clientId, key, fingerprint, expiresAt } });
      return true;
    } catch (error) {
      if (isUniqueViolation(error)) return false;
      throw error;
    }
  }

  private async complete(clientId: string, key: string, response: StoredResponse): Promise<void> {
    await this.prisma.idempotencyRecord.update({
      where: { clientId_key: { clientId, key } },
      data: {
        state: 'completed',
        responseStatus: response.status,
        responseBody: response.body as Prisma.InputJsonValue,
      },
    });
  }

  /** The stored answer for a taken key, waiting while it is in progress. */
  private async awaitStored(clientId: string, key: string, fingerprint: string): Promise<StoredResponse> {
    const deadline = Date.now() + IN_PROGRESS_WAIT_MS;
    for (;;) {
      const row = await this.prisma.idempotencyRecord.findUnique({ where: { clientId_key: { clientId, key } } });
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
          throw new DomainError(
            body.code as ErrorCode,
            String(body.message),
            body.extensions as Record<string, unknown>,
          );
        }
        return { status: row.responseStatus ?? 200, body };
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
