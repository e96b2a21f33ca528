import { Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Pool, type PoolClient, type QueryResultRow } from 'pg';
import type { Env } from '../config/env';
import { ShutdownService } from '../lifecycle/shutdown.service';
import { DEFAULT_POOL_TIMEOUT_MS, readPoolConfig, type SqlStatement } from './sql';

/** Connections of a pool: open (`total`), of which `idle`, and queries `waiting` for one. */
export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}

/**
 * The read pool: a node-postgres pool of its own (READ_POOL_SIZE connections) for the hot reads
 * of every module (customer, card, payout, beneficiary by id; the customers and card movements
 * pages) and the finance reads (lists, detail, summary, CSV export), each a typed SQL statement in
 * its module's repository. Never used for writes: those go through Prisma (PrismaService), whose
 * transactions, history rows and audit events stay in one place.
 *
 * Why not Prisma for these reads: Prisma 7's per-query cost (query compilation, the adapter's row
 * conversion) is most of a 1–2 ms read (issue 16: a customer by id at 0.15–0.28 of a raw Fastify +
 * pg server). Here each read is one round trip of a server-side prepared statement (`name`,
 * prepared once per connection), and rows come back as the types Prisma hands out (sql.ts
 * READ_POOL_TYPES: bigint, Decimal, Date, parsed JSON), aliased to the model's camelCase fields.
 * PG_NAMED_STATEMENTS=false sends the same statements unnamed (PgBouncer in transaction mode
 * before 1.21). Closed in the last shutdown stage (`pools`), before Prisma's.
 */
@Injectable()
export class ReadPool {
  private readonly logger = new Logger('ReadPool');
  private readonly pool: Pool;
  /** PG_NAMED_STATEMENTS: prepare each statement once per connection under its name, or send it unnamed. */
  private readonly named: boolean;

  constructor(config: ConfigService<Env, true>, shutdown: ShutdownService) {
    this.pool = new Pool(
      readPoolConfig(
        config.get('DATABASE_URL', { infer: true }),
        config.get('READ_POOL_SIZE', { infer: true }) ?? 10,
        config.get('DATABASE_POOL_TIMEOUT_MS', { infer: true }) ?? DEFAULT_POOL_TIMEOUT_MS,
      ),
    );
    this.named = config.get('PG_NAMED_STATEMENTS', { infer: true }) ?? true;
    // An idle client losing its connection must not crash the process; the pool replaces it.
    this.pool.on('error', (error) => this.logger.warn({ error: error.message }, 'idle read-pool connection failed'));
    // Closed in the last shutdown stage, after the HTTP server's requests have finished.
    shutdown.register('pools', 'read pool', () => this.pool.end());
  }

  /** The rows `statement` reads, typed as `R` (the caller's SQL aliases the columns to R's fields). */
  async rows<R extends QueryResultRow>(statement: SqlStatement): Promise<R[]> {
    return (await this.pool.query<R>(this.named ? statement : { text: statement.text, values: statement.values })).rows;
  }

  /** The first row `statement` reads, or undefined when it reads none. */
  async one<R extends QueryResultRow>(statement: SqlStatement): Promise<R | undefined> {
    return (await this.rows<R>(statement))[0];
  }

  /**
   * A connection of its own, for a caller that streams through a cursor (the CSV export); the
   * caller must `release()` it (with an error when the cursor was left open mid-way).
   */
  connect(): Promise<PoolClient> {
    return this.pool.connect();
  }

  /** Closes every connection (a CLI command without the Nest application; the app's shutdown does it otherwise). */
  end(): Promise<void> {
    return this.pool.end();
  }

  /** Connections of the pool now (for /metrics, health checks and tests). */
  stats(): PoolStats {
    return { total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.pool.waitingCount };
  }
}
