import { Injectable } from '@nestjs/common';
import { recordAuditedChange } from '../audit/audit-chain';
import { afterCursor } from '../common/pagination';
import { PrismaService } from '../database/prisma.service';
import {
  Prisma,
  type ReconciliationItem,
  type ReconciliationRun,
  type TransactionKind,
  type TransactionStatus,
} from '../generated/prisma/client';

type Tx = Prisma.TransactionClient;

/** Statuses of a run that still holds its period (at most one per period: 409 for another). */
export const ACTIVE_RUN_STATUSES = ['queued', 'running'];

/** What a run compares of one ledger row. Amounts in minor units of `currency`. */
export interface ComparedRow {
  id: string;
  kind: TransactionKind;
  status: TransactionStatus;
  amount: bigint;
  fee: bigint;
  currency: string;
  providerId: string;
  createdAt: Date;
}

/** One item to write (ReconciliationItem without its run, id and timestamp). */
export type NewReconciliationItem = Omit<Prisma.ReconciliationItemCreateManyInput, 'runId' | 'id' | 'createdAt'>;

/**
 * Database access of reconciliation reports (tables reconciliation_runs and reconciliation_items),
 * and the reads they make of the ledger (transactions) and the inbox (webhook_events). Never writes
 * to either: a report moves no money and no status.
 */
@Injectable()
export class ReconciliationRunsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Runs `work` in one database transaction. */
  withTransaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(work);
  }

  /**
   * Creates a `queued` run for [from, to) unless one for exactly that period is queued or running;
   * then answers that one as `active` instead. Decided under a transaction-scoped advisory lock on
   * the period, so two requests at once never both create one. A created run's request audit event
   * (`reconciliation_run.create`) is written in the same transaction.
   */
  createUnlessActive(data: {
    from: Date;
    to: Date;
    kinds: string[];
    requestedBy: string | null;
  }): Promise<{ created: ReconciliationRun } | { active: ReconciliationRun }> {
    return this.prisma.$transaction(async (tx) => {
      const lockKey = `reconciliation-run:${data.from.toISOString()}:${data.to.toISOString()}`;
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${lockKey}))`;
      const active = await tx.reconciliationRun.findFirst({
        where: { from: data.from, to: data.to, status: { in: ACTIVE_RUN_STATUSES } },
      });
      if (active) return { active };
      const created = await tx.reconciliationRun.create({ data });
      await recordAuditedChange(tx, created.id);
      return { created };
    });
  }

  findRun(id: string): Promise<ReconciliationRun | null> {
    return this.prisma.reconciliationRun.findUnique({ where: { id } });
  }

  /** Up to `limit` runs after the cursor, newest first (createdAt DESC, id DESC). */
  listRuns(cursor: string | undefined, limit: number): Promise<ReconciliationRun[]> {
    return this.prisma.reconciliationRun.findMany({
      where: afterCursor(cursor),
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: limit,
    });
  }

  /** Runs still `queued` or `running` (to take up again after a restart). */
  unfinishedRuns(): Promise<ReconciliationRun[]> {
    return this.prisma.reconciliationRun.findMany({ where: { status: { in: ACTIVE_RUN_STATUSES } } });
  }

  /** The `Prisma.sql` condition selecting a run's ledger rows (period, kinds, with a provider id). */
  private periodRows(run: ReconciliationRun): Prisma.Sql {
    return Prisma.sql`t.created_at >= ${run.from} AND t.created_at < ${run.to} AND t.provider_id IS NOT NULL
      AND t.kind::text = ANY(${run.kinds}::text[])`;
  }

  /**
   * Marks a `queued` run `running` with its `total` (the ledger rows it will compare, counted now);
   * a run already running is left as it is. Answers the run as it then is.
   */
  async startRun(id: string): Promise<ReconciliationRun> {
    const run = await this.prisma.reconciliationRun.findUniqueOrThrow({ where: { id } });
    if (run.status !== 'queued') return run;
    const [{ total }] = await this.prisma.$queryRaw<Array<{ total: number }>>`
      SELECT count(*)::int AS total FROM transactions t WHERE ${this.periodRows(run)}`;
    await this.prisma.reconciliationRun.updateMany({
      where: { id, status: 'queued' },
      data: { status: 'running', total, startedAt: new Date() },
    });
    return this.prisma.reconciliationRun.findUniqueOrThrow({ where: { id } });
  }

  /** The next `limit` ledger rows of the run after its cursor, in (createdAt, id) order. */
  nextRows(run: ReconciliationRun, limit: number): Promise<ComparedRow[]> {
    const after =
      run.cursorAt && run.cursorId
        ? Prisma.sql`AND (t.created_at, t.id) > (${run.cursorAt}, ${run.cursorId}::uuid)`
        : Prisma.empty;
    return this.prisma.$queryRaw<ComparedRow[]>`
      SELECT t.id, t.kind, t.status, t.amount, t.fee, t.currency, t.provider_id AS "providerId",
             t.created_at AS "createdAt"
      FROM transactions t
      WHERE ${this.periodRows(run)} ${after}
      ORDER BY t.created_at, t.id
      LIMIT ${limit}`;
  }

  /**
   * Writes the item of one compared row and moves the run's cursor past it, atomically: after a
   * crash the run resumes after the last row written, and a row written twice (two workers) is kept
   * once (unique run + transaction) and counted once.
   */
  async recordItem(runId: string, row: ComparedRow, item: NewReconciliationItem): Promise<void> {
    await this.prisma.$transaction(async (tx) => {
      const { count } = await tx.reconciliationItem.createMany({
        data: [{ ...item, runId }],
        skipDuplicates: true,
      });
      await tx.reconciliationRun.update({
        where: { id: runId },
        data: { cursorAt: row.createdAt, cursorId: row.id, processed: { increment: count } },
      });
    });
  }

  /**
   * Adds, inside `tx`, one `unknown_locally` item per provider callback of the run's period that the
   * gateway could not match to a ledger row (inbox outcome `unmatched`), one per provider id.
   */
  async addUnknownLocally(tx: Tx, run: ReconciliationRun): Promise<number> {
    return tx.$executeRaw`
      INSERT INTO reconciliation_items (run_id, class, provider_id, provider_status, details)
      SELECT DISTINCT ON (COALESCE(e.provider_id, e.id::text))
             ${run.id}::uuid, 'unknown_locally', e.provider_id, lower(e.payload->'data'->>'status'),
             jsonb_build_object('webhookEventId', e.id, 'event', e.event, 'reference', e.reference,
                                'receivedAt', e.received_at)
      FROM webhook_events e
      WHERE e.outcome = 'unmatched' AND e.received_at >= ${run.from} AND e.received_at < ${run.to}
      ORDER BY COALESCE(e.provider_id, e.id::text), e.received_at
      ON CONFLICT DO NOTHING`;
  }

  /** Items per class of a run, e.g. `{matched: 3, status_mismatch: 1}` (classes without items absent). */
  async classTotals(runId: string, tx: Tx | PrismaService = this.prisma): Promise<Record<string, number>> {
    const groups = await tx.reconciliationItem.groupBy({
      by: ['class'],
      where: { runId },
      _count: { _all: true },
    });
    return Object.fromEntries(groups.map((g) => [g.class, g._count._all]));
  }

  /** Marks the run `completed` with its totals, inside `tx`; answers it. */
  completeRun(tx: Tx, id: string, totals: Record<string, number>): Promise<ReconciliationRun> {
    return tx.reconciliationRun.update({
      where: { id },
      data: { status: 'completed', totals, completedAt: new Date(), error: null },
    });
  }

  /** Marks the run `failed` with `error` (the period is free again for a new run). */
  async failRun(id: string, error: string): Promise<void> {
    await this.prisma.reconciliationRun.update({
      where: { id },
      data: { status: 'failed', error: error.slice(0, 1000), completedAt: new Date() },
    });
  }

  /** Up to `limit` items of a run with id greater than `afterId`, optionally of one class, in id order. */
  items(runId: string, opts: { class?: string; afterId?: bigint; limit: number }): Promise<ReconciliationItem[]> {
    return this.prisma.reconciliationItem.findMany({
      where: {
        runId,
        ...(opts.class ? { class: opts.class } : {}),
        ...(opts.afterId !== undefined ? { id: { gt: opts.afterId } } : {}),
      },
      orderBy: { id: 'asc' },
      take: opts.limit,
    });
  }
}
