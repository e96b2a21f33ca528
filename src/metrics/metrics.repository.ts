import { Injectable } from '@nestjs/common';
import { PrismaService } from '../database/prisma.service';
import { ReadPool } from '../database/read-pool';
import type { DatabaseBacklog, PoolReading } from './metrics.service';

/**
 * The database reads behind the backlog gauges of /metrics: one statement, four index-only
 * counts (webhook_events by outcome, outbox_messages by status, transactions by status), read at
 * each scrape. Counts cover every instance (they share the database).
 */
@Injectable()
export class MetricsRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly reads: ReadPool,
  ) {}

  /** This instance's connection pools now, read from the pools themselves (no query): Prisma's and the read pool. */
  pools(): PoolReading[] {
    return [
      { pool: 'prisma', ...this.prisma.poolStats() },
      { pool: 'reads', ...this.reads.stats() },
    ];
  }

  /** Inbox callbacks pending and the oldest one's age (s), outbox messages pending, ledger rows `unknown`. */
  async backlog(): Promise<DatabaseBacklog> {
    const [row] = await this.prisma.$queryRaw<
      Array<{ inbox: number; oldest: number | null; outbox: number; unknown: number }>
    >`
      SELECT
        (SELECT count(*)::int FROM webhook_events WHERE outcome = 'pending') AS inbox,
        (SELECT extract(epoch FROM now() - min(received_at))::float8 FROM webhook_events WHERE outcome = 'pending') AS oldest,
        (SELECT count(*)::int FROM outbox_messages WHERE status = 'pending') AS outbox,
        (SELECT count(*)::int FROM transactions WHERE status = 'unknown') AS unknown`;
    return {
      inboxPending: row.inbox,
      inboxOldestPendingSeconds: Math.max(0, row.oldest ?? 0),
      outboxPending: row.outbox,
      ledgerUnknown: row.unknown,
    };
  }
}
