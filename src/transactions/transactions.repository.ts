import type { Readable } from 'node:stream';
import { Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Pool, PoolClient, types as pgTypes } from 'pg';
import QueryStream from 'pg-query-stream';
import type { Env } from '../config/env';
import { Prisma } from '../generated/prisma/client';
import type { StatusChangeSource, TransactionStatus } from '../generated/prisma/enums';
import { ShutdownService } from '../lifecycle/shutdown.service';
import type { LedgerRow } from './ledger-row';
import {
  exportStatement,
  getWithHistoryStatement,
  KeysetPosition,
  listStatement,
  SortOrder,
  type SqlStatement,
  summaryStatement,
  TransactionFilter,
} from './transaction-query';

/** A row of GET_WITH_HISTORY: the ledger row and its moves (timestamps as PostgreSQL renders them in JSON). */
export type TransactionWithHistoryRow = LedgerRow & {
  statusHistory: Array<{
    from: TransactionStatus | null;
    to: TransactionStatus;
    source: StatusChangeSource;
    at: string;
    actorId: string | null;
  }>;
};

/** A row of the summary: sums are exact integer strings (PostgreSQL numeric). */
export interface SummaryRow {
  currency: string;
  kind: LedgerRow['kind'];
  status: LedgerRow['status'];
  count: number;
  amount: string;
  fee: string;
}

/**
 * Column types as Prisma reads them, so that a finance row is the one LedgerRow type: int8 →
 * bigint (exact), numeric → Prisma's Decimal (exact; aggregates are cast to text in the SQL);
 * every other type as node-postgres parses it.
 */
const INT8_OID = 20;
const NUMERIC_OID = 1700;
const TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID
      ? (value: string) => BigInt(value)
      : oid === NUMERIC_OID
        ? (value: string) => new Prisma.Decimal(value)
        : (pgTypes.getTypeParser(oid, format) as (value: string) => unknown)) as typeof pgTypes.getTypeParser,
};

/** Pool options from DATABASE_URL; `?schema=NAME` becomes the search_path (as createPgAdapter does for Prisma). */
export function financePoolConfig(connectionString: string, max: number) {
  const url = new URL(connectionString);
  const schema = url.searchParams.get('schema');
  url.searchParams.delete('schema');
  return {
    connectionString: url.toString(),
    max,
    types: TYPES,
    application_name: 'wallet-gateway-finance',
    ...(schema ? { options: `-c search_path="${schema.replace(/"/g, '""')}"` } : {}),
  };
}

/**
 * Read-only database access for the finance API: lists, detail, summary and export of the ledger.
 *
 * Why raw node-postgres and not Prisma here: these are the hot read paths (a finance page
 * polls lists; the export reads a million rows). Prisma 7's per-query cost (query compilation,
 * the adapter's row conversion) is a large share of a 1–2 ms read; a small pool of its own with
 * server-side prepared statements (`name`, prepared once per connection) keeps each read to one
 * round trip, and the export needs a real database cursor (pg-query-stream) with backpressure,
 * which Prisma does not offer. Writes never happen here: LedgerService (Prisma) is the only code
 * that moves a transaction. See `npm run bench:finance` for the numbers.
 */
@Injectable()
export class TransactionsRepository {
  private readonly logger = new Logger('TransactionsRepository');
  private readonly pool: Pool;
  /** PG_NAMED_STATEMENTS: prepare each statement once per connection under its name, or send it unnamed. */
  private readonly named: boolean;

  constructor(config: ConfigService<Env, true>, shutdown: ShutdownService) {
    this.pool = new Pool(
      financePoolConfig(
        config.get('DATABASE_URL', { infer: true }),
        config.get('FINANCE_POOL_SIZE', { infer: true }) ?? 10,
      ),
    );
    this.named = config.get('PG_NAMED_STATEMENTS', { infer: true }) ?? true;
    // An idle client losing its connection must not crash the process; the pool replaces it.
    this.pool.on('error', (error) => this.logger.warn({ error: error.message }, 'idle finance connection failed'));
    // Closed in the last shutdown stage, after the HTTP server's requests have finished.
    shutdown.register('pools', 'finance pool', () => this.pool.end());
  }

  /** The statement as sent: named (prepared once per connection) or, with PG_NAMED_STATEMENTS=false, unnamed. */
  private statement(statement: SqlStatement): { name?: string; text: string; values: unknown[] } {
    return this.named ? statement : { text: statement.text, values: statement.values };
  }

  /** Connections of the finance pool: total, idle, and requests waiting for one (for health checks and tests). */
  poolStats(): { total: number; idle: number; waiting: number } {
    return { total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.pool.waitingCount };
  }

  /** `limit + 1` rows after `after` in `order` (the caller trims and builds the cursor). */
  async list(
    filter: TransactionFilter,
    order: SortOrder,
    after: KeysetPosition | undefined,
    limit: number,
  ): Promise<LedgerRow[]> {
    return (await this.pool.query<LedgerRow>(this.statement(listStatement(filter, order, after, limit)))).rows;
  }

  /**
   * The transaction with its history, or undefined; with `createdBy` (OWNERSHIP=client), undefined
   * too when another client created it.
   */
  async getWithHistory(id: string, createdBy?: string): Promise<TransactionWithHistoryRow | undefined> {
    const { rows } = await this.pool.query<TransactionWithHistoryRow>(
      this.statement(getWithHistoryStatement(id, createdBy)),
    );
    return rows[0];
  }

  /** Totals per (currency, kind, status), ordered by them. */
  async summary(filter: TransactionFilter): Promise<SummaryRow[]> {
    return (await this.pool.query<SummaryRow>(this.statement(summaryStatement(filter)))).rows;
  }

  /**
   * Every matching row as an object stream read through a server-side cursor (`batchSize` rows
   * per fetch; the next fetch happens only when the consumer has read the previous rows), on a
   * connection of its own that goes back to the pool when the stream ends, fails or is destroyed
   * (a client that hangs up). Memory stays constant whatever the row count. Small batches keep
   * rows short-lived (measured: 500 rows per fetch and no read-ahead keeps the gateway's RSS flat
   * over repeated 100k-row exports, where 1000 rows with 4000 buffered let it climb until a full GC).
   */
  async streamRows(filter: TransactionFilter, order: SortOrder, batchSize = 500): Promise<Readable> {
    const { text, values } = exportStatement(filter, order);
    const client: PoolClient = await this.pool.connect();
    const stream = client.query(new QueryStream(text, values, { batchSize, highWaterMark: batchSize, types: TYPES }));
    let released = false;
    const release = (error?: Error) => {
      if (released) return;
      released = true;
      // A cursor left open mid-way (error or early close) leaves the connection busy: drop it.
      client.release(error ?? (stream.readableEnded ? undefined : new Error('export stream closed early')));
    };
    stream.once('error', release);
    stream.once('close', () => release());
    return stream;
  }
}
