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
    // Each payout is sent with its key until it is answered otherwise than 503 (as a client following
    // Retry-After would, faster): every key must end with its one payout.
    const finals = new Map<string, { status: number; id?: string; state?: string }>();
    const payer = async () => {
      while (on) {
        const key = randomUUID();
        for (let attempt = 0; attempt < 200; attempt++) {
          const res = await fetch(`${world.gateway.url}/v1/payouts`, {
            method: 'POST',
            headers: { ...world.auth, 'content-type': 'application/json', 'idempotency-key': key },
            body: JSON.stringify({ ...to, amount: 1000, description: 'outage traffic' }),
          });
          if (res.status === 201) {
            const payout = (await res.clone().json()) as { id: string; status: string };
            finals.set(key, { status: 201, id: payout.id, state: payout.status });
          } else finals.set(key, { status: res.status });
          await record('payout', res);
          if (res.status !== 503) break;
          await new Promise((r) => setTimeout(r, 200));
        }
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

    // Nothing half-done: every key got its payout, initiated, and no row is left created or unknown.
    expect([...finals.values()].filter((f) => f.status !== 201 || f.state !== 'initiated')).toEqual([]);
    const left = await waitFor(
      'no payout left created or unknown',
      async () => {
        const rows = await world.query("SELECT id FROM transactions WHERE status IN ('created', 'unknown')");
        return rows.length === 0 ? rows : undefined;
      },
      30_000,
    );
    expect(left).toEqual([]);
    // No lost or doubled movement: one provider initialize per payout row, one row per key.
    const rows = await world.query<{ id: string; reference: string }>(
      "SELECT id, reference FROM transactions WHERE kind = 'payout' AND description = 'outage traffic' AND status = 'initiated'",
    );
    expect(new Set([...finals.values()].map((f) => f.id)).size).toBe(finals.size);
    for (const f of finals.values()) expect(rows.map((r) => r.id)).toContain(f.id);
    const calls = await world.sim.calls('initializePayout');
    const byReference = new Map<string, number>();
    for (const c of calls) {
      const reference = (c.body as { reference: string }).reference;
      byReference.set(reference, (byReference.get(reference) ?? 0) + 1);
    }
    for (const r of rows) expect(byReference.get(r.reference)).toBe(1);
  }, 180_000);

  it('finishes a payout whose provider answer came while PostgreSQL was down: the retry gets it, one provider call', async () => {
    const key = randomUUID();
    const body = { ...to, amount: 2500, description: 'answer during the outage' };
    const send = () =>
      fetch(`${world.gateway.url}/v1/payouts`, {
        method: 'POST',
        headers: { ...world.auth, 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify(body),
      });
    const callsBefore = (await world.sim.calls('initializePayout')).length;
    // The provider holds the initialize 3 s: the database stops while it is in flight, its answer comes meanwhile.
    await world.sim.setFault('initializePayout', { latencyMs: 3000, times: 1 });
    const first = send();
    await waitFor('the initialize in flight', async () =>
      (await world.sim.calls('initializePayout')).length > callsBefore ? true : undefined,
    );
    const [row] = await world.query<{ id: string; status: string }>(
      "SELECT id, status FROM transactions WHERE kind = 'payout' AND description = $1",
      [body.description],
    );
    expect(row.status).toBe('created'); // written ahead, before the provider call
    await world.server.stop();
    let restarted = false;
    try {
      const cut = await first;
      expect(cut.status).toBe(503);
      expect(cut.headers.get('retry-after')).toBeTruthy();
      expect(((await cut.json()) as { code: string }).code).toBe('database_unavailable');
      // A retry while the database is still down: 503 again, nothing sent.
      expect((await send()).status).toBe(503);
      await world.server.start();
      restarted = true;
    } finally {
      if (!restarted) await world.server.start();
    }
    // The retry with the same key gets the one outcome: the payout initiated with the provider's answer.
    const retried = await waitFor(
      'the retry answered',
      async () => {
        const res = await send();
        return res.status === 503
          ? undefined
          : { status: res.status, body: (await res.json()) as Record<string, unknown> };
      },
      30_000,
    );
    expect(retried).toMatchObject({ status: 201, body: { id: row.id, status: 'initiated' } });
    const [stored] = await world.query<{ status: string; provider_id: string | null; reference: string }>(
      'SELECT status, provider_id, reference FROM transactions WHERE id = $1',
      [row.id],
    );
    expect(stored.status).toBe('initiated');
    expect(stored.provider_id).toBeTruthy();
    // One provider call for it, however many retries.
    const calls = (await world.sim.calls('initializePayout')).filter(
      (c) => (c.body as { reference?: string }).reference === stored.reference,
    );
    expect(calls).toHaveLength(1);
    expect(
      await world.query('SELECT id FROM transactions WHERE description = $1 AND id <> $2', [body.description, row.id]),
    ).toEqual([]);
  }, 120_000);
});
