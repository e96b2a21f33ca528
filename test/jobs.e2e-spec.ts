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
    ]);
    const queues = await h.db.query<{ name: string }>(
      "SELECT name FROM pgboss.queue WHERE name IN ('expire', 'inbox-recovery', 'reconcile') ORDER BY name",
    );
    expect(queues.map((q) => q.name)).toEqual(['expire', 'inbox-recovery', 'reconcile']);
  });
});
