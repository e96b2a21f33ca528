/**
 * Whether an error says that the database cannot be used for now (lost or refused connection, a
 * server shutting down or starting up, a failover in progress, a pool that gave no connection
 * within DATABASE_POOL_TIMEOUT_MS), as opposed to an error of the statement itself. Such an error
 * answers 503 `database_unavailable` with `Retry-After` (never 500): the request may be sent again
 * with the same Idempotency-Key. No I/O here.
 */

import { DomainError, ErrorCode } from '../common/errors';

/** Seconds a client is asked to wait (`Retry-After`) before sending again a request refused for the database. */
export const DATABASE_RETRY_AFTER_SECONDS = 2;

/**
 * PostgreSQL SQLSTATEs of a server going away or not there yet: class 08 (connection exception) is
 * matched by its prefix; 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now
 * (starting up, shutting down, in recovery), 53300 too_many_connections, 25006
 * read_only_sql_transaction (a write sent to a standby: the old primary during a failover), 58030
 * io_error.
 */
const UNAVAILABLE_SQLSTATES: ReadonlySet<string> = new Set(['57P01', '57P02', '57P03', '53300', '25006', '58030']);

/** Node's socket error codes of a connection refused, reset, cut or timed out. */
const SOCKET_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ECONNABORTED',
]);

/**
 * Prisma's codes for the same: P1001 cannot reach the server, P1002 timed out reaching it, P1008
 * operation timed out, P1017 server closed the connection, P2024 timed out fetching a connection
 * from the pool, P2037 too many connections.
 */
const PRISMA_CODES: ReadonlySet<string> = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024', 'P2037']);

/** Kinds of @prisma/driver-adapter-utils' DriverAdapterError cause that mean the same. */
const ADAPTER_KINDS: ReadonlySet<string> = new Set([
  'DatabaseNotReachable',
  'ConnectionClosed',
  'SocketTimeout',
  'TooManyConnections',
]);

/**
 * Messages of node-postgres (pg, pg-pool) and Prisma that carry no code: a connection cut under a
 * query, a client used after its connection failed, the pool's wait bound
 * (`connectionTimeoutMillis`), and Prisma's interactive transaction that found no connection
 * within its `maxWait`.
 */
const UNAVAILABLE_MESSAGES =
  /Connection terminated|connection error and is not queryable|Client was closed and is not queryable|timeout exceeded when trying to connect|Unable to start a transaction in the given time|Can't reach database server|Server has closed the connection|terminating connection due to/i;

/** Whether `value`'s own fields (code, kind, message) say the database is unavailable. */
function saysUnavailable(value: Record<string, unknown>): boolean {
  for (const field of ['code', 'originalCode', 'errorCode']) {
    const code = value[field];
    if (typeof code !== 'string') continue;
    if (UNAVAILABLE_SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code)) return true;
    if (SOCKET_CODES.has(code) || PRISMA_CODES.has(code)) return true;
  }
  if (typeof value.kind === 'string' && ADAPTER_KINDS.has(value.kind)) return true;
  return typeof value.message === 'string' && UNAVAILABLE_MESSAGES.test(value.message);
}

/**
 * Whether `error` (a node-postgres error, a Prisma error with its driver adapter's cause, or one
 * wrapping either as `cause`) says the database is unavailable for now (see the file comment).
 * A statement's own failure (a constraint, a syntax error, a serialization failure) is not.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  // The gateway's own errors say what they are (a provider's connection refused is not the database's).
  if (error instanceof DomainError) return error.code === ErrorCode.DatabaseUnavailable;
  const seen = new Set<unknown>();
  const queue: unknown[] = [error];
  while (queue.length > 0) {
    const value = queue.shift();
    if (typeof value !== 'object' || value === null || seen.has(value)) continue;
    seen.add(value);
    const record = value as Record<string, unknown>;
    if (saysUnavailable(record)) return true;
    const meta = record.meta as Record<string, unknown> | undefined;
    queue.push(record.cause, meta?.driverAdapterError);
    if (Array.isArray(record.errors)) queue.push(...(record.errors as unknown[])); // AggregateError (several hosts)
  }
  return false;
}

/**
 * 503 `database_unavailable` with `retryAfter` (DATABASE_RETRY_AFTER_SECONDS, also sent as
 * `Retry-After`): the database could not be used for this request (`isDatabaseUnavailable`).
 */
export class DatabaseUnavailableError extends DomainError {
  constructor() {
    super(
      ErrorCode.DatabaseUnavailable,
      'The database is unavailable for now; send the request again (with the same Idempotency-Key) after Retry-After.',
      { retryAfter: DATABASE_RETRY_AFTER_SECONDS },
    );
  }
}
