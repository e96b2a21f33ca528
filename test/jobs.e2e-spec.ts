import { type Harness, startHarness } from './support/harness';

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
