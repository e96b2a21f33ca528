import { randomUUID } from 'node:crypto';
import { waitFor } from './support/child-gateway';
import { customerWithBeneficiary } from './support/fixtures';
import type { Harness } from './support/harness';
import { type OwnDatabaseWorld, startOwnDatabaseWorld } from './support/own-database';

/** One answer the traffic got: what was sent, its status, problem code and Retry-After, and when. */
interface Answer {
  what: 'read' | 'payout';
  status: number;
  code?: string;
  retryAfter: string | null;
  contentType: string | null;
  at: number;
}

/**
 * The gateway's own database restarting under traffic (issue 38): a gateway process on a
 * PostgreSQL server of this file's own, with reads and payout creates flowing, while that server
 * stops and starts again. Nothing answers 500; the outage answers 503 `database_unavailable`
 * problem+json with Retry-After; /health/ready is 503 while the server is down and 200 after; the
 * gateway serves again on its own.
 */
describe('database restart under traffic (e2e, own PostgreSQL)', () => {
  let world: OwnDatabaseWorld;
  let to: { customerId: string; beneficiaryId: string };

  beforeAll(async () => {
    world = await startOwnDatabaseWorld({ DATABASE_POOL_TIMEOUT_MS: '2000' });
    const http = world.gateway.http;
    to = await customerWithBeneficiary({ http } as unknown as Harness, world.auth, 'outage@example.com');
  }, 180_000);
  afterAll(async () => {
    await world?.close();
  });

  it('answers 503 database_unavailable (never 500) while PostgreSQL is down, and recovers on its own', async () => {
    const answers: Answer[] = [];
    const ready: Array<{ status: number; at: number }> = [];
    let on = true;
    const record = async (what: Answer['what'], res: Response) => {
      const text = await res.text();
      let code: string | undefined;
      try {
        code = (JSON.parse(text) as { code?: string }).code;
      } catch {
        code = undefined;
      }
      answers.push({
        what,
        status: res.status,
        code,
        retryAfter: res.headers.get('retry-after'),
        contentType: res.headers.get('content-type'),
        at: Date.now(),
      });
    };
    const get = (path: string) => fetch(`${world.gateway.url}${path}`, { headers: world.auth });
    const reader = async (path: string) => {
      while (on) await record('read', await get(path));
    };
    const payer = async () => {
      while (on) {
        const res = await fetch(`${world.gateway.url}/v1/payouts`, {
          method: 'POST',
          headers: { ...world.auth, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
          body: JSON.stringify({ ...to, amount: 1000, description: 'outage traffic' }),
        });
        await record('payout', res);
      }
    };
    const prober = async () => {
      while (on) {
        const res = await fetch(`${world.gateway.url}/health/ready`);
        await res.arrayBuffer();
        ready.push({ status: res.status, at: Date.now() });
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const traffic = Promise.all([
      reader(`/v1/customers/${to.customerId}`),
      reader('/v1/transactions?limit=5'),
      payer(),
      payer(),
      prober(),
    ]);
    try {
      await waitFor('traffic before the restart', async () =>
        answers.filter((a) => a.status < 300).length >= 10 ? true : undefined,
      );
      const stoppedAt = Date.now();
      await world.server.stop();
      // While it is down: readiness fails and requests are refused as retryable.
      await waitFor('ready 503', async () =>
        ready.some((r) => r.at > stoppedAt && r.status === 503) ? true : undefined,
      );
      await waitFor('503 answers for reads and payouts', async () =>
        ['read', 'payout'].every((what) => answers.some((a) => a.what === what && a.at > stoppedAt && a.status === 503))
          ? true
          : undefined,
      );
      await new Promise((r) => setTimeout(r, 1500));
      const restartedAt = Date.now();
      await world.server.start();
      // Back: ready again, and both reads and payout creates succeed again without any help.
      await waitFor(
        'ready 200 after the restart',
        async () => (ready.some((r) => r.at > restartedAt && r.status === 200) ? true : undefined),
        30_000,
      );
      await waitFor(
        'reads and payouts served after the restart',
        async () =>
          ['read', 'payout'].every((what) =>
            answers.some((a) => a.what === what && a.at > restartedAt && a.status < 300),
          )
            ? true
            : undefined,
        30_000,
      );
    } finally {
      on = false;
      await traffic;
    }

    const failures = answers.filter((a) => a.status >= 300);
    expect(answers.filter((a) => a.status >= 500 && a.status !== 503)).toEqual([]);
    // Every refusal was the database's: 503 problem+json `database_unavailable` with Retry-After.
    expect(failures.length).toBeGreaterThan(0);
    for (const failure of failures) {
      expect(failure).toMatchObject({ status: 503, code: 'database_unavailable' });
      expect(failure.contentType).toMatch(/^application\/problem\+json/);
      expect(Number(failure.retryAfter)).toBeGreaterThan(0);
    }
    expect(ready.filter((r) => r.status !== 200 && r.status !== 503)).toEqual([]);
  }, 180_000);
});
