import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Client } from 'pg';
import PgBoss from 'pg-boss';
import type { Env } from '../config/env';
import { ShutdownService } from '../lifecycle/shutdown.service';
import { ExpiryService } from '../reconciliation/expiry.service';
import { ReconciliationRunsService } from '../reconciliation/reconciliation-runs.service';
import { ReconciliationService } from '../reconciliation/reconciliation.service';
import { WebhooksService } from '../webhooks/webhooks.service';

/** The queue of reconciliation reports: one job per run (`{runId}`), retried after a crash or an expired lease. */
const RECONCILIATION_RUN_QUEUE = 'reconciliation-run';

/**
 * The advisory lock (`hashtext` of this text) that instances take, one at a time, while they create
 * pg-boss's queues and schedules. pg-boss 10's `create_queue` inserts the queue's row and creates
 * and attaches its partition table; two instances doing it at once on a database that has no queues
 * yet (several instances started together: a first deploy) deadlock, and the loser fails to start.
 */
export const QUEUE_SETUP_LOCK = 'wallet-gateway:pg-boss queue setup';

/** A recurring job: a pg-boss queue with a cron schedule (UTC, minute resolution). */
interface RecurringJob {
  name: string;
  cron: string;
  run: () => Promise<unknown>;
}

/**
 * Background jobs on pg-boss (a PostgreSQL-backed queue): every instance registers the same
 * schedules and workers, and pg-boss creates one job per cron slot for all of them, so with
 * several gateway instances each pass runs once. Off with JOBS_ENABLED=false (tests run passes
 * directly). Jobs: `reconcile` every 2 minutes, `expire` every minute, `inbox-recovery` every
 * minute (drains the due inbox events back to back: WebhooksService.retryDue), `reconciliation-nightly`
 * on RECONCILIATION_CRON (a reconciliation report of the previous UTC day). Reconciliation reports run
 * as jobs of the `reconciliation-run` queue (one per run; a run resumes from its cursor when its job is
 * retried, and unfinished runs are enqueued again at start). At start each
 * instance also runs an inbox recovery pass at once, in the background, so callbacks a stopped
 * process stored but did not apply are taken up without waiting for the schedule.
 */
@Injectable()
export class JobsService implements OnApplicationBootstrap {
  private readonly logger = new Logger('Jobs');
  private boss?: PgBoss;

  constructor(
    private readonly config: ConfigService<Env, true>,
    private readonly reconciliation: ReconciliationService,
    private readonly expiry: ExpiryService,
    private readonly webhooks: WebhooksService,
    private readonly reconciliationRuns: ReconciliationRunsService,
    shutdown: ShutdownService,
  ) {
    // After the webhook queue and the outbox pass, before the pools: running jobs finish first.
    shutdown.register('jobs', 'pg-boss', async () => this.boss?.stop({ graceful: true, timeout: 5_000 }));
  }

  get jobs(): RecurringJob[] {
    return [
      { name: 'reconcile', cron: '*/2 * * * *', run: () => this.reconciliation.run() },
      { name: 'expire', cron: '* * * * *', run: () => this.expiry.run() },
      { name: 'inbox-recovery', cron: '* * * * *', run: () => this.webhooks.retryDue() },
      {
        name: 'reconciliation-nightly',
        cron: this.config.get('RECONCILIATION_CRON', { infer: true }),
        run: () => this.reconciliationRuns.startNightly(),
      },
    ];
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.get('JOBS_ENABLED', { infer: true })) return;
    const url = new URL(this.config.get('DATABASE_URL', { infer: true }));
    url.searchParams.delete('schema');
    this.boss = new PgBoss({
      connectionString: url.toString(),
      max: this.config.get('JOBS_POOL_SIZE', { infer: true }),
      application_name: 'wallet-gateway-jobs',
    });
    // The error's message and code only: a pg error carries its whole client (connection state, type
    // tables), which would otherwise fill a log line.
    this.boss.on('error', (error: Error & { code?: string }) =>
      this.logger.error({ error: error.message, code: error.code }, 'job queue error'),
    );
    await this.boss.start();
    await this.setUpQueues(url.toString(), this.boss);
    for (const job of this.jobs) {
      await this.boss.work(job.name, async () => {
        const report = await job.run();
        this.logger.log({ job: job.name, report }, 'job done');
      });
    }
    await this.startReconciliationRuns(this.boss);
    void this.webhooks.retryDue().then(
      (report) => this.logger.log({ job: 'inbox-recovery', report }, 'start-up inbox recovery done'),
      (error: unknown) => this.logger.error({ err: error }, 'start-up inbox recovery failed'),
    );
  }

  /**
   * Creates every queue and recurring job's schedule (both idempotent), holding QUEUE_SETUP_LOCK on a
   * connection of its own, which ending releases (as it would a crashed instance's).
   */
  private async setUpQueues(connectionString: string, boss: PgBoss): Promise<void> {
    const lock = new Client({ connectionString, application_name: 'wallet-gateway-jobs-setup' });
    await lock.connect();
    try {
      await lock.query('SELECT pg_advisory_lock(hashtext($1))', [QUEUE_SETUP_LOCK]);
      for (const job of this.jobs) {
        await boss.createQueue(job.name);
        await boss.schedule(job.name, job.cron);
      }
      await boss.createQueue(RECONCILIATION_RUN_QUEUE);
    } finally {
      await lock.end();
    }
  }

  /** The `reconciliation-run` queue: its worker, the enqueueing hook, and the runs left unfinished. */
  private async startReconciliationRuns(boss: PgBoss): Promise<void> {
    await boss.work<{ runId: string }>(RECONCILIATION_RUN_QUEUE, async ([job]) => {
      const report = await this.reconciliationRuns.process(job.data.runId);
      this.logger.log({ job: RECONCILIATION_RUN_QUEUE, runId: job.data.runId, report }, 'job done');
    });
    this.reconciliationRuns.useQueue(async (runId) => {
      await boss.send(RECONCILIATION_RUN_QUEUE, { runId }, { singletonKey: runId, retryLimit: 5, retryDelay: 60 });
    });
    const resumed = await this.reconciliationRuns.resumeUnfinished();
    if (resumed > 0) this.logger.log({ resumed }, 'unfinished reconciliation runs enqueued again');
  }
}
