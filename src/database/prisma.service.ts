import { Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { PrismaPg } from '@prisma/adapter-pg';
import { Pool, type QueryConfig, type QueryResultRow } from 'pg';
import type { Env } from '../config/env';
import { type Prisma, PrismaClient } from '../generated/prisma/client';
import { ShutdownService } from '../lifecycle/shutdown.service';
import { runTracked } from './after-commit';
import type { PoolStats } from './read-pool';
import { DEFAULT_POOL_TIMEOUT_MS, sqlStatement } from './sql';
export { isUniqueViolation } from './unique-violation';

/**
 * The node-postgres pool Prisma runs on, for a connection string: at most `poolSize` connections,
 * a query waiting at most `timeoutMs` for one (DATABASE_POOL_TIMEOUT_MS; past it the query fails
 * and the request answers 503 `database_unavailable`); `?schema=NAME` selects a PostgreSQL schema
 * (the adapter needs it passed separately; Prisma 7 + adapter-pg), returned apart.
 */
function prismaPool(
  connectionString: string,
  poolSize: number,
  timeoutMs = DEFAULT_POOL_TIMEOUT_MS,
): { pool: Pool; schema?: string } {
  const url = new URL(connectionString);
  const schema = url.searchParams.get('schema') ?? undefined;
  url.searchParams.delete('schema');
  const pool = new Pool({
    connectionString: url.toString(),
    max: poolSize,
    connectionTimeoutMillis: timeoutMs,
    // Statements sent on the pool itself (PrismaService.sql) name tables unqualified: they find them in the schema too.
    ...(schema ? { options: `-c search_path="${schema.replace(/"/g, '""')}"` } : {}),
  });
  return { pool, schema };
}

/** The adapter over `pool`, which it ends on `$disconnect()` (`disposeExternalPool`), as a pool of its own. */
function adapterOn(pool: Pool, schema: string | undefined): PrismaPg {
  return new PrismaPg(pool, { disposeExternalPool: true, ...(schema ? { schema } : {}) });
}

/** Builds the adapter for a connection string, over a pool of at most `poolSize` connections (see `prismaPool`). */
export function createPgAdapter(connectionString: string, poolSize = 10): PrismaPg {
  const { pool, schema } = prismaPool(connectionString, poolSize);
  return adapterOn(pool, schema);
}

/**
 * Longest wait of an interactive transaction for a connection of Prisma's pool, ms, unless
 * DATABASE_POOL_TIMEOUT_MS says otherwise (then that: one bound for every wait for a connection).
 */
export const TRANSACTION_MAX_WAIT_MS = DEFAULT_POOL_TIMEOUT_MS;
/** Longest run of an interactive transaction before Prisma rolls it back, ms (it holds row locks meanwhile). */
export const TRANSACTION_TIMEOUT_MS = 15_000;

/**
 * The generated Prisma client over node-postgres (@prisma/adapter-pg), with at most
 * DATABASE_POOL_SIZE connections: every write (the hottest as node-postgres statements on `pool`)
 * and the reads that are not hot (the hot ones go through the ReadPool, read-pool.ts). Disconnected in the last shutdown stage (`pools`,
 * registered first so it closes after the pools registered later), after the HTTP server and the
 * workers have finished.
 */
@Injectable()
export class PrismaService extends PrismaClient {
  /**
   * The node-postgres pool under the client (the same DATABASE_POOL_SIZE connections, closed with
   * it), for the few hot-path statements a repository runs without Prisma: a raw Prisma query costs
   * the gateway about 450 µs of CPU against about 50 µs for the same statement sent by node-postgres
   * (measured; its parameters are serialised and parsed again, its rows converted field by field).
   * Rows come back as node-postgres parses them (int8 and numeric as strings unless the query names
   * its own `types`). Ended in the `pools` shutdown stage, after the client has disconnected.
   */
  readonly pool: Pool;
  /** PG_NAMED_STATEMENTS: whether `sql(…, prepared)` prepares its statement under a name. */
  private readonly named: boolean;

  constructor(config: ConfigService<Env, true>, shutdown: ShutdownService) {
    const poolTimeoutMs = config.get('DATABASE_POOL_TIMEOUT_MS', { infer: true }) ?? TRANSACTION_MAX_WAIT_MS;
    const { pool, schema } = prismaPool(
      config.get('DATABASE_URL', { infer: true }),
      config.get('DATABASE_POOL_SIZE', { infer: true }) ?? 10,
      poolTimeoutMs,
    );
    super({
      adapter: new PrismaPg(pool, schema ? { schema } : undefined),
      // Prisma's defaults (2 s to get a pool connection, 5 s to run) made a busy instance answer 500
      // `internal_error` ("Unable to start a transaction in the given time", "expired transaction"),
      // an answer the idempotency record keeps: seen in bench:cluster while one instance of three
      // restarts and the other two take its share on a saturated machine.
      // A wait past DATABASE_POOL_TIMEOUT_MS answers 503 `database_unavailable` (src/database/unavailable.ts).
      transactionOptions: { maxWait: poolTimeoutMs, timeout: TRANSACTION_TIMEOUT_MS },
    });
    this.pool = pool;
    this.named = config.get('PG_NAMED_STATEMENTS', { infer: true }) ?? true;
    // Every interactive transaction runs what afterCommit (after-commit.ts) registered on its
    // client once it has committed, and drops it on a rollback; the batch form is left as it is.
    const begin = this.$transaction.bind(this) as (arg: unknown, options?: unknown) => Promise<unknown>;
    const tracked = (arg: unknown, options?: unknown): Promise<unknown> =>
      typeof arg === 'function'
        ? runTracked((body) => begin(body, options), arg as (tx: object) => Promise<unknown>)
        : begin(arg, options);
    this.$transaction = tracked as PrismaClient['$transaction'];
    // An idle connection lost (a restarted database) must not crash the process; the pool replaces it.
    pool.on('error', (error) => new Logger('PrismaService').warn({ error: error.message }, 'idle connection failed'));
    shutdown.register(
      'pools',
      'prisma pool',
      async () => {
        await this.$disconnect();
        // Statements sent by sql() use the pool even when Prisma never connected (and so never ends it).
        if (!pool.ended) await pool.end();
      },
      { last: true },
    );
  }

  /**
   * Runs a `Prisma.sql` statement through `pool` (see there): its rows. With `prepared` (a name
   * prefix), the statement is prepared once per connection under a name derived from its text
   * (`prefix_` + hash, sql.ts `sqlStatement`) and then only bound and executed: PostgreSQL parses
   * and plans it once per connection instead of at every call. For hot statements whose text takes
   * a handful of shapes (never one built from a list of varying length). PG_NAMED_STATEMENTS=false
   * sends them unnamed, as the read pool does.
   */
  async sql<T>(statement: Prisma.Sql, types?: QueryConfig['types'], prepared?: string): Promise<T[]> {
    const { text, values } = statement;
    const name = prepared && this.named ? sqlStatement(prepared, text, values).name : undefined;
    return (await this.pool.query<T & QueryResultRow>({ text, values, types, ...(name ? { name } : {}) })).rows;
  }

  /** Connections of Prisma's pool now: open, idle, and queries waiting for one (for /metrics). */
  poolStats(): PoolStats {
    return { total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.pool.waitingCount };
  }
}
