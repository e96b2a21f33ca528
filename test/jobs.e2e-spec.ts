import { Client } from 'pg';
import { QUEUE_SETUP_LOCK } from '../src/jobs/jobs.service';
import { waitFor } from './support/child-gateway';
import { type Harness, startHarness, startPeer } from './support/harness';

describe('background jobs (e2e, pg-boss)', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({ env: { JOBS_ENABLED: 'true' } });
  });
  afterAll(() => h.close());

  it('registers the reconcile, expire and inbox-recovery schedules in PostgreSQL at start', async () => {
    const rows = await h.db.query<{ name: string; cron: string }>(
      'SELECT name, cron FROM pgboss.schedule ORDER BY name',
    );
    expect(rows).toEqual([
      { name: 'expire', cron: '* * * * *' },
      { name: 'inbox-recovery', cron: '* * * * *' },
      { name: 'reconcile', cron: '*/2 * * * *' },
      { name: 'reconciliation-nightly', cron: '30 1 * * *' },
    ]);
    const queues = await h.db.query<{ name: string }>(
      "SELECT name FROM pgboss.queue WHERE name IN ('expire', 'inbox-recovery', 'reconcile') ORDER BY name",
    );
    expect(queues.map((q) => q.name)).toEqual(['expire', 'inbox-recovery', 'reconcile']);
  });

  it('runs a reconciliation report on the reconciliation-run queue until it completes', async () => {
    const auth = { Authorization: `Bearer ${await h.key()}` };
    const started = await h
      .http()
      .post('/v1/reconciliation-runs')
      .set(auth)
      .send({ from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z' });
    expect(started.status).toBe(202);
    let run = started.body;
    for (let i = 0; i < 60 && run.status !== 'completed'; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      run = (await h.http().get(`/v1/reconciliation-runs/${started.body.id}`).set(auth)).body;
    }
    expect(run).toMatchObject({ status: 'completed', total: 0, processed: 0 });
  });
});

describe('pg-boss queue setup, several instances starting at once on a new database (e2e)', () => {
  let h: Harness;

  // Jobs off in the harness's own app: the database has no pg-boss schema and no queues yet.
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    process.env.JOBS_ENABLED = 'false';
    await h.close();
  });

  it('creates the queues one instance at a time under QUEUE_SETUP_LOCK, and every instance starts', async () => {
    // pg-boss 10's create_queue run by several instances at once deadlocked one of them (seen in
    // bench:cluster), which then failed to start. Here the test holds the lock: all three must wait
    // for it, then start one after the other, with each queue created once.
    const holder = new Client({ connectionString: h.db.url });
    await holder.connect();
    await holder.query('SELECT pg_advisory_lock(hashtext($1))', [QUEUE_SETUP_LOCK]);
    let released = false;
    const release = async () => {
      if (!released) await holder.end();
      released = true;
    };
    process.env.JOBS_ENABLED = 'true';
    const peers = [startPeer(h), startPeer(h), startPeer(h)];
    // Queues other than pg-boss's own (`__pgboss__…`, created by its start).
    const ourQueues = async () =>
      (
        await h.db.query<{ name: string }>(
          "SELECT name FROM pgboss.queue WHERE name NOT LIKE '\\_\\_pgboss%' ORDER BY name",
        )
      ).map((q) => q.name);
    try {
      await waitFor('three instances waiting for the queue setup lock', async () => {
        const [waiting] = await h.db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND application_name = 'wallet-gateway-jobs-setup'
              AND wait_event_type = 'Lock'`,
        );
        return waiting.n === 3 ? true : undefined;
      });
      expect(await ourQueues()).toEqual([]);
      await release();
      await Promise.all(peers);
      expect(await ourQueues()).toEqual([
        'expire',
        'inbox-recovery',
        'reconcile',
        'reconciliation-nightly',
        'reconciliation-run',
      ]);
      const schedules = await h.db.query<{ name: string }>('SELECT name FROM pgboss.schedule ORDER BY name');
      expect(schedules.map((q) => q.name)).toEqual(['expire', 'inbox-recovery', 'reconcile', 'reconciliation-nightly']);
      // The lock's connections are gone: nothing holds it once the instances have started.
      const [held] = await h.db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
      );
      expect(held.n).toBe(0);
    } finally {
      await release();
      const settled = await Promise.allSettled(peers);
      for (const peer of settled) if (peer.status === 'fulfilled') await peer.value.close();
    }
  });
});
