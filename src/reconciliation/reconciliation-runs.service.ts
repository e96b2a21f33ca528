import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { stringify } from 'csv-stringify';
import { ConflictError, ErrorCode, NotFoundError, ProviderError, ValidationError } from '../common/errors';
import { minorToJson } from '../common/money';
import { MAX_PAGE_SIZE, type Page, toPage } from '../common/pagination';
import type { Env } from '../config/env';
import type { ReconciliationItem, ReconciliationRun } from '../generated/prisma/client';
import { OutboxService } from '../outbound/outbox.service';
import { ProviderClient } from '../provider';
import { neutraliseFormula } from '../transactions/transactions-csv';
import {
  MAX_RUN_DAYS,
  type CreateReconciliationRunDto,
  type ListReconciliationItemsQueryDto,
  RECONCILED_KINDS,
  type ReconciliationClass,
  RECONCILIATION_CLASSES,
  type ReconciliationItemDto,
  type ReconciliationRunDto,
  type ReconciliationTotalsDto,
} from './reconciliation-run.dto';
import {
  type ComparedRow,
  type NewReconciliationItem,
  ReconciliationRunsRepository,
} from './reconciliation-runs.repository';

/** Longest period one run covers (a month and a day). */
const MAX_PERIOD_MS = MAX_RUN_DAYS * 24 * 3_600_000;
/** Ledger rows read per query while a run goes through its period. */
const BATCH = 100;
/** Attempts of one provider lookup that fails with anything but 404 before the run is marked `failed`. */
const LOOKUP_ATTEMPTS = 3;

/** Columns of the CSV export, in order. Amounts are minor units (integers). */
export const RECONCILIATION_CSV_COLUMNS = [
  'class',
  'transaction_id',
  'provider_id',
  'kind',
  'local_status',
  'provider_status',
  'currency',
  'local_amount_minor',
  'provider_currency',
  'provider_amount_minor',
  'local_fee_minor',
  'provider_fee_minor',
  'differences',
] as const;

/** What POST /v1/reconciliation-runs hands the job queue: a function that enqueues one run. */
export type RunQueue = (runId: string) => Promise<void>;

/** The item of one ledger row against the provider's record: its class and both sides' values. */
export function compareWithProvider(
  row: ComparedRow,
  upstream: { status: string; amountMinor: bigint; feeMinor: bigint; currency: string } | null,
): NewReconciliationItem & { class: ReconciliationClass } {
  const local = {
    transactionId: row.id,
    providerId: row.providerId,
    kind: row.kind,
    localStatus: row.status,
    localAmount: row.amount,
    localFee: row.fee,
    currency: row.currency,
  };
  if (!upstream) return { ...local, class: 'missing_at_provider', details: { providerAnswer: 'not found (404)' } };
  const providerStatus = upstream.status.toLowerCase();
  const differences = [
    ...(upstream.amountMinor !== row.amount ? ['amount'] : []),
    ...(upstream.feeMinor !== row.fee ? ['fee'] : []),
    ...(upstream.currency.toUpperCase() !== row.currency.toUpperCase() ? ['currency'] : []),
    ...(providerStatus !== row.status ? ['status'] : []),
  ];
  const cls: ReconciliationClass = differences.some((d) => d !== 'status')
    ? 'amount_mismatch'
    : differences.length > 0
      ? 'status_mismatch'
      : 'matched';
  return {
    ...local,
    class: cls,
    providerStatus,
    providerAmount: upstream.amountMinor,
    providerFee: upstream.feeMinor,
    providerCurrency: upstream.currency.toUpperCase(),
    details: differences.length > 0 ? { differences } : undefined,
  };
}

/**
 * Reconciliation reports (issue 15 item 2): for a period [from, to), every ledger row with a
 * provider id (kinds payout, collection, swap) is looked up at the provider (GET /transactions/{id},
 * at most RECONCILIATION_RATE per second) and compared on status, amount, fee and currency in minor
 * units; provider callbacks of the period the gateway could not match are added as `unknown_locally`.
 * A run is a job on the queue (src/jobs): it keeps a keyset cursor (createdAt, id) written with each
 * item, so after a crash it resumes after the last row written, never writing an item twice. At most
 * one run per period is queued or running (409 `reconciliation_run_in_progress`). A run reports: it
 * never moves money or a status. On completion `reconciliation.completed` is announced with the
 * totals. Separate from ReconciliationService, which settles stuck rows.
 */
@Injectable()
export class ReconciliationRunsService {
  private readonly logger = new Logger('ReconciliationRuns');
  private queue?: RunQueue;
  /** Earliest moment (epoch ms) of this instance's next provider lookup (RECONCILIATION_RATE). */
  private nextLookupAt = 0;

  constructor(
    private readonly repository: ReconciliationRunsRepository,
    private readonly provider: ProviderClient,
    private readonly outbox: OutboxService,
    private readonly config: ConfigService<Env, true>,
  ) {}

  /**
   * Called by the jobs module when the queue runs (JOBS_ENABLED): new runs are enqueued through it.
   * Without a queue a run stays `queued` until `process` is called (tests, one-off scripts).
   */
  useQueue(queue: RunQueue): void {
    this.queue = queue;
  }

  /**
   * Starts a run for [from, to) (`kinds` default: payout, collection, swap), asked by API client
   * `requestedBy` (null: the nightly schedule), and enqueues it.
   * @throws ValidationError (400) when `to` is not after `from` or the period exceeds MAX_RUN_DAYS (32) days;
   * ConflictError (409 `reconciliation_run_in_progress`, with `runId`) when a run of that exact period is queued or running.
   */
  async start(input: CreateReconciliationRunDto, requestedBy: string | null): Promise<ReconciliationRunDto> {
    const from = new Date(input.from);
    const to = new Date(input.to);
    if (to <= from) throw new ValidationError([{ field: 'to', message: 'to must be after from' }]);
    if (to.getTime() - from.getTime() > MAX_PERIOD_MS) {
      throw new ValidationError([{ field: 'to', message: `a run covers at most ${MAX_RUN_DAYS} days` }]);
    }
    const kinds = [...(input.kinds ?? RECONCILED_KINDS)].sort();
    const result = await this.repository.createUnlessActive({ from, to, kinds, requestedBy });
    if ('active' in result) {
      throw new ConflictError(
        `A reconciliation run for this period is already ${result.active.status}.`,
        ErrorCode.ReconciliationRunInProgress,
        { runId: result.active.id },
      );
    }
    await this.queue?.(result.created.id);
    return this.toDto(result.created);
  }

  /**
   * The nightly run: the previous UTC day of `now` ([yesterday 00:00, today 00:00) UTC). A run of
   * that period already queued or running is left to finish (null).
   */
  async startNightly(now = new Date()): Promise<ReconciliationRunDto | null> {
    const to = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
    const from = new Date(to.getTime() - 86_400_000);
    try {
      return await this.start({ from: from.toISOString(), to: to.toISOString() }, null);
    } catch (error) {
      if (error instanceof ConflictError && error.code === ErrorCode.ReconciliationRunInProgress) return null;
      throw error;
    }
  }

  /** Enqueues every run still queued or running (after a restart: a crashed run resumes from its cursor). */
  async resumeUnfinished(): Promise<number> {
    const runs = await this.repository.unfinishedRuns();
    for (const run of runs) await this.queue?.(run.id);
    return runs.length;
  }

  /**
   * The job handler: takes run `runId` on from its cursor, comparing up to `limit` more ledger rows
   * (all by default), then, when none is left, adds the unmatched callbacks, completes it and
   * announces `reconciliation.completed` in the same database transaction. A completed or failed run
   * is left as it is. A lookup failing LOOKUP_ATTEMPTS times (not a 404) marks the run `failed` with
   * the error; a new run of the period may then be started.
   * Answers how many rows this call compared and whether the run is finished.
   */
  async process(runId: string, opts: { limit?: number } = {}): Promise<{ compared: number; done: boolean }> {
    let run = await this.repository.findRun(runId);
    if (!run) throw new NotFoundError('Reconciliation run', runId);
    if (run.status === 'completed' || run.status === 'failed') return { compared: 0, done: true };
    run = await this.repository.startRun(runId);
    const limit = opts.limit ?? Number.POSITIVE_INFINITY;
    let compared = 0;
    while (compared < limit) {
      const rows = await this.repository.nextRows(run, Math.min(BATCH, limit - compared));
      if (rows.length === 0) {
        await this.complete(run);
        return { compared, done: true };
      }
      for (const row of rows) {
        let item: NewReconciliationItem;
        try {
          item = compareWithProvider(row, await this.lookUp(row.providerId));
        } catch (error) {
          const message = `lookup of ${row.providerId} failed: ${(error as Error).message}`;
          this.logger.warn(
            { runId, transactionId: row.id, error: (error as Error).message },
            'reconciliation run failed',
          );
          await this.repository.failRun(runId, message);
          return { compared, done: true };
        }
        await this.repository.recordItem(runId, row, item);
        compared += 1;
      }
      run = { ...run, cursorAt: rows[rows.length - 1].createdAt, cursorId: rows[rows.length - 1].id };
    }
    return { compared, done: false };
  }

  /** The provider's record (null on 404), throttled to RECONCILIATION_RATE; other failures retried, then thrown. */
  private async lookUp(providerId: string) {
    for (let attempt = 1; ; attempt += 1) {
      await this.throttle();
      try {
        return await this.provider.getTransaction(providerId);
      } catch (error) {
        if (error instanceof ProviderError && error.providerStatus === 404) return null;
        if (attempt >= LOOKUP_ATTEMPTS) throw error;
        await sleep(250 * 2 ** attempt);
      }
    }
  }

  /** Waits until this instance may make its next lookup (1 / RECONCILIATION_RATE seconds apart). */
  private async throttle(): Promise<void> {
    const interval = 1000 / this.config.get('RECONCILIATION_RATE', { infer: true });
    const now = Date.now();
    const at = Math.max(now, this.nextLookupAt);
    this.nextLookupAt = at + interval;
    if (at > now) await sleep(at - now);
  }

  /** Adds the unknown_locally items, stores the totals, marks it completed and announces it, atomically. */
  private async complete(run: ReconciliationRun): Promise<void> {
    const completed = await this.repository.withTransaction(async (tx) => {
      await this.repository.addUnknownLocally(tx, run);
      const done = await this.repository.completeRun(tx, run.id, await this.repository.classTotals(run.id, tx));
      await this.outbox.publish(
        'reconciliation.completed',
        {
          runId: done.id,
          from: done.from.toISOString(),
          to: done.to.toISOString(),
          kinds: done.kinds,
          total: done.total,
          totals: this.totalsOf(done.totals as Record<string, number>),
        },
        tx,
      );
      return done;
    });
    this.logger.log({ runId: completed.id, totals: completed.totals }, 'reconciliation run completed');
  }

  /** @throws NotFoundError (404). */
  async get(id: string): Promise<ReconciliationRunDto> {
    const run = await this.repository.findRun(id);
    if (!run) throw new NotFoundError('Reconciliation run', id);
    return this.toDto(run, run.status === 'completed' ? undefined : await this.repository.classTotals(id));
  }

  /** Runs, newest first, keyset pages. @throws ValidationError (400) on a bad cursor. */
  async list(cursor: string | undefined, limit = 20): Promise<Page<ReconciliationRunDto>> {
    const rows = await this.repository.listRuns(cursor, Math.min(limit, MAX_PAGE_SIZE) + 1);
    return toPage(rows, Math.min(limit, MAX_PAGE_SIZE), (row) => this.toDto(row));
  }

  /**
   * Items of a run in the order written, optionally of one class; `nextCursor` pages on.
   * @throws NotFoundError (404); ValidationError (400) on a bad cursor.
   */
  async items(id: string, query: ListReconciliationItemsQueryDto): Promise<Page<ReconciliationItemDto>> {
    await this.get(id);
    const limit = query.limit ?? 20;
    const rows = await this.repository.items(id, {
      class: query.class,
      afterId: query.cursor ? decodeItemCursor(query.cursor) : undefined,
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    return {
      data: page.map(toItemDto),
      nextCursor: rows.length > limit ? Buffer.from(String(page[page.length - 1].id)).toString('base64url') : null,
    };
  }

  /**
   * The run's items as CSV (csv-stringify, RFC 4180, CRLF, header row), read in pages of 500.
   * @throws NotFoundError (404).
   */
  async export(id: string): Promise<{ filename: string; body: Readable }> {
    const run = await this.get(id);
    const repository = this.repository;
    async function* records() {
      let afterId: bigint | undefined;
      for (;;) {
        const rows = await repository.items(id, { afterId, limit: 500 });
        for (const item of rows) yield csvRecord(item);
        if (rows.length < 500) return;
        afterId = rows[rows.length - 1].id;
      }
    }
    const body = Readable.from(records()).pipe(
      stringify({ header: true, columns: [...RECONCILIATION_CSV_COLUMNS], record_delimiter: 'windows' }),
    );
    return { filename: `reconciliation-${run.from.slice(0, 10)}-${run.id}.csv`, body };
  }

  private totalsOf(counts: Record<string, number>): ReconciliationTotalsDto {
    return Object.fromEntries(
      RECONCILIATION_CLASSES.map((cls) => [cls, counts[cls] ?? 0]),
    ) as unknown as ReconciliationTotalsDto;
  }

  private toDto(run: ReconciliationRun, liveTotals?: Record<string, number>): ReconciliationRunDto {
    return {
      id: run.id,
      from: run.from.toISOString(),
      to: run.to.toISOString(),
      kinds: run.kinds,
      status: run.status,
      requestedBy: run.requestedBy,
      total: run.total,
      processed: run.processed,
      totals: this.totalsOf(liveTotals ?? (run.totals as Record<string, number>)),
      error: run.error,
      createdAt: run.createdAt.toISOString(),
      startedAt: run.startedAt?.toISOString() ?? null,
      completedAt: run.completedAt?.toISOString() ?? null,
    };
  }
}

/** @throws ValidationError (400) on a token that is not an items cursor. */
function decodeItemCursor(token: string): bigint {
  const text = Buffer.from(token, 'base64url').toString('utf8');
  if (!/^\d{1,19}$/.test(text))
    throw new ValidationError([{ field: 'cursor', message: 'cursor is not a valid page cursor' }]);
  return BigInt(text);
}

const json = (value: bigint | null) => (value === null ? null : minorToJson(value));

function toItemDto(item: ReconciliationItem): ReconciliationItemDto {
  return {
    id: String(item.id),
    class: item.class,
    transactionId: item.transactionId,
    providerId: item.providerId,
    kind: item.kind,
    localStatus: item.localStatus,
    providerStatus: item.providerStatus,
    localAmount: json(item.localAmount),
    providerAmount: json(item.providerAmount),
    localFee: json(item.localFee),
    providerFee: json(item.providerFee),
    currency: item.currency,
    providerCurrency: item.providerCurrency,
    details: item.details as Record<string, unknown> | null,
    createdAt: item.createdAt.toISOString(),
  };
}

const text = (value: bigint | string | null) => (value === null ? '' : String(value));

/** One CSV record of an item, in RECONCILIATION_CSV_COLUMNS order (the provider's id formula-neutralised). */
function csvRecord(item: ReconciliationItem): string[] {
  const differences = (item.details as { differences?: string[] } | null)?.differences ?? [];
  return [
    item.class,
    text(item.transactionId),
    neutraliseFormula(item.providerId),
    text(item.kind),
    text(item.localStatus),
    text(item.providerStatus),
    text(item.currency),
    text(item.localAmount),
    text(item.providerCurrency),
    text(item.providerAmount),
    text(item.localFee),
    text(item.providerFee),
    differences.join(' '),
  ];
}
