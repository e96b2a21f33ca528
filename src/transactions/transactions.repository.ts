import type { Readable } from 'node:stream';
import { Injectable } from '@nestjs/common';
import type { PoolClient } from 'pg';
import QueryStream from 'pg-query-stream';
import type { CreatedAtCursor } from '../common/pagination';
import { ReadPool } from '../database/read-pool';
import { READ_POOL_TYPES } from '../database/sql';
import type { StatusChangeSource, TransactionStatus } from '../generated/prisma/enums';
import type { LedgerPageRow, LedgerRow } from './ledger-row';
import {
  exportStatement,
  getWithHistoryStatement,
  listStatement,
  netStatement,
  SortOrder,
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
    /** The payload's `decision` (maker-checker: `approved`, `rejected`), else null. */
    decision: string | null;
    /** The payload's `reason` (a decision's reason, an expiry's or a reconciliation's), else null. */
    reason: string | null;
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

/** A row of the net per currency (netStatement): sums of succeeded rows as exact integer strings. */
export interface NetRow {
  currency: string;
  moneyIn: string;
  moneyOut: string;
  fees: string;
}

/**
 * Read-only database access for the finance API: lists, detail, summary and export of the ledger,
 * as typed SQL on the ReadPool (src/database/read-pool.ts: named prepared statements, rows typed
 * as Prisma types them). The export needs a real database cursor (pg-query-stream) with
 * backpressure, which Prisma does not offer. Writes never happen here: LedgerService (Prisma) is
 * the only code that moves a transaction. See `npm run bench:finance` for the numbers.
 */
@Injectable()
export class TransactionsRepository {
  constructor(private readonly pool: ReadPool) {}

  /** `limit + 1` rows after `after` in `order` (the caller trims and builds the cursor), instants as `isoTime` text. */
  async list(
    filter: TransactionFilter,
    order: SortOrder,
    after: CreatedAtCursor | undefined,
    limit: number,
  ): Promise<LedgerPageRow[]> {
    return this.pool.rows<LedgerPageRow>(listStatement(filter, order, after, limit));
  }

  /**
   * The transaction with its history, or undefined; with `createdBy` (OWNERSHIP=client), undefined
   * too when another client created it.
   */
  async getWithHistory(id: string, createdBy?: string): Promise<TransactionWithHistoryRow | undefined> {
    return this.pool.one<TransactionWithHistoryRow>(getWithHistoryStatement(id, createdBy));
  }

  /** Totals per (currency, kind, status), ordered by them. */
  async summary(filter: TransactionFilter): Promise<SummaryRow[]> {
    return this.pool.rows<SummaryRow>(summaryStatement(filter));
  }

  /** Money in, money out and fees of the succeeded rows per currency (a swap's target as money in), ordered by currency. */
  async net(filter: TransactionFilter): Promise<NetRow[]> {
    return this.pool.rows<NetRow>(netStatement(filter));
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
    const stream = client.query(
      new QueryStream(text, values, { batchSize, highWaterMark: batchSize, types: READ_POOL_TYPES }),
    );
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
