import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { customerWithBeneficiary } from './support/fixtures';
import { type Harness, startHarness, startPeer } from './support/harness';

const customer = (email: string) => ({
  email,
  firstName: 'B',
  lastName: 'R',
  phone: '8012345678',
  countryCode: '+234',
});

describe('provider resilience: circuit breaker, bulkhead, 429 (e2e)', () => {
  let h: Harness;
  let key: string;
  const auth = () => ({ Authorization: `Bearer ${key}` });
  const metricsText = async () => (await h.http().get('/metrics')).text;

  beforeAll(async () => {
    h = await startHarness({ env: { PROVIDER_BREAKER_FAILURES: '3', PROVIDER_BREAKER_HALF_OPEN_MS: '1000' } });
    key = await h.key();
  });
  afterAll(() => h.close());
  beforeEach(async () => {
    await h.sim.admin('DELETE', '/faults');
  });

  it('opens after N failures, fails fast without calling the provider, and closes again after a half-open probe', async () => {
    await h.sim.setFault('createCustomer', { status: 503 });
    await h.sim.admin('DELETE', '/calls');
    for (let i = 0; i < 3; i++) {
      const res = await h
        .http()
        .post('/v1/customers')
        .set(auth())
        .send(customer(`b${i}@example.com`));
      expect(res.status).toBe(502);
      expect(res.body.code).toBe('provider_unavailable');
    }
    const fast = await h.http().post('/v1/customers').set(auth()).send(customer('b3@example.com'));
    expect(fast.status).toBe(503);
    expect(fast.body.code).toBe('provider_retry_later');
    expect(Number(fast.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(fast.body.retryAfter).toBe(Number(fast.headers['retry-after']));
    expect(await h.sim.calls('createCustomer')).toHaveLength(3);
    const ready = await h.http().get('/health/ready');
    expect(ready.status).toBe(200);
    expect(ready.body.details.provider).toEqual({ status: 'up', breaker: 'open' });
    const text = await metricsText();
    expect(text).toMatch(/^provider_breaker_state 2$/m);
    expect(text).toMatch(/^provider_fast_failures_total\{reason="breaker_open"\} 1$/m);
    expect(text).toMatch(/^provider_breaker_opens_total 1$/m);

    await h.sim.admin('DELETE', '/faults');
    await new Promise((r) => setTimeout(r, 1100));
    const probe = await h.http().post('/v1/customers').set(auth()).send(customer('b4@example.com'));
    expect(probe.status).toBe(201);
    expect((await h.http().get('/health/ready')).body.details.provider.breaker).toBe('closed');
    expect(await metricsText()).toMatch(/^provider_breaker_state 0$/m);
  });

  it('a payout refused by the provider with 429 ends failed (never unknown), answers 503 with its Retry-After, and a retry with the same key runs again', async () => {
    const to = await customerWithBeneficiary(h, auth(), 'payout429@example.com');
    await h.sim.setFault('initializePayout', { status: 429, retryAfter: 7, times: 1 });
    const idem = randomUUID();
    const body = { ...to, amount: 150000, description: 'rate limited' };
    const refused = await h.http().post('/v1/payouts').set(auth()).set('Idempotency-Key', idem).send(body);
    expect(refused.status).toBe(503);
    expect(refused.body.code).toBe('provider_retry_later');
    expect(refused.headers['retry-after']).toBe('7');
    const rows = await h.db.query<{ status: string }>(
      "SELECT status FROM transactions WHERE kind = 'payout' AND customer_id = $1",
      [to.customerId],
    );
    expect(rows.map((r) => r.status)).toEqual(['failed']);
    const retried = await h.http().post('/v1/payouts').set(auth()).set('Idempotency-Key', idem).send(body);
    expect(retried.status).toBe(201);
    expect(retried.body.status).toBe('initiated');
  });

  it('a 429 without Retry-After answers the default wait, never 422 provider_rejected', async () => {
    await h.sim.setFault('createCustomer', { status: 429, times: 1 });
    const res = await h.http().post('/v1/customers').set(auth()).send(customer('nora@example.com'));
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('provider_retry_later');
    expect(res.headers['retry-after']).toBe('5');
  });

  it('a full bulkhead refuses at once with 503, and the refused call never reaches the provider', async () => {
    Object.assign(process.env, { PROVIDER_BULKHEAD_LIMIT: '1', PROVIDER_BULKHEAD_QUEUE: '1' });
    const peer = await startPeer(h);
    const peerMetrics = async () => (await request(peer.app.getHttpServer()).get('/metrics')).text;
    try {
      await h.sim.setFault('createCustomer', { latencyMs: 550 });
      await h.sim.admin('DELETE', '/calls');
      const answers = Promise.all(
        ['bulk1@example.com', 'bulk2@example.com', 'bulk3@example.com'].map((email) =>
          request(peer.app.getHttpServer()).post('/v1/customers').set(auth()).send(customer(email)),
        ),
      );
      // While the first call is at the provider (550 ms; the tests' provider timeout is 800): one call
      // holds the slot and, once the second request has reached the bulkhead (on a busy machine it
      // may still be reading the database when the first call arrives), one waits; the third is refused.
      while ((await h.sim.calls('createCustomer')).length === 0) await new Promise((r) => setTimeout(r, 20));
      const queued = /^provider_bulkhead_calls\{state="queued"\} 1$/m;
      const until = Date.now() + 400;
      let during = await peerMetrics();
      while (!queued.test(during) && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 10));
        during = await peerMetrics();
      }
      expect(during).toMatch(/^provider_bulkhead_calls\{state="in_flight"\} 1$/m);
      expect(during).toMatch(/^provider_bulkhead_calls\{state="queued"\} 1$/m);
      const statuses = (await answers).map((r) => r.status);
      expect([...statuses].sort()).toEqual([201, 201, 503]);
      expect((await answers).find((r) => r.status === 503)!.body.code).toBe('provider_retry_later');
      expect(await h.sim.calls('createCustomer')).toHaveLength(2);
      const text = await peerMetrics();
      expect(text).toMatch(/^provider_fast_failures_total\{reason="bulkhead_full"\} 1$/m);
      expect(text).toMatch(/^provider_bulkhead_calls\{state="in_flight"\} 0$/m);
      expect(text).toMatch(/^provider_bulkhead_calls\{state="queued"\} 0$/m);
    } finally {
      await peer.close();
      delete process.env.PROVIDER_BULKHEAD_LIMIT;
      delete process.env.PROVIDER_BULKHEAD_QUEUE;
    }
  });

  it('sends the caller’s request id upstream as x-request-id', async () => {
    await h.sim.admin('DELETE', '/calls');
    const res = await h
      .http()
      .post('/v1/customers')
      .set(auth())
      .set('x-request-id', 'caller-req-42')
      .send(customer('rid@example.com'));
    expect(res.status).toBe(201);
    expect((await h.sim.calls('createCustomer')).map((c) => (c as { requestId?: string }).requestId)).toEqual([
      'caller-req-42',
    ]);
  });

  it('/metrics requires the bearer token when METRICS_TOKEN is set, and not otherwise', async () => {
    expect((await h.http().get('/metrics')).status).toBe(200);
    process.env.METRICS_TOKEN = 'scrape-secret';
    const peer = await startPeer(h);
    try {
      const server = peer.app.getHttpServer();
      expect((await request(server).get('/metrics')).status).toBe(401);
      expect((await request(server).get('/metrics').set('Authorization', 'Bearer wrong')).status).toBe(401);
      const ok = await request(server).get('/metrics').set('Authorization', 'Bearer scrape-secret');
      expect(ok.status).toBe(200);
      expect(ok.text).toMatch(/^ledger_unknown_transactions \d+$/m);
      expect(ok.text).toMatch(/^webhook_inbox_backlog \d+$/m);
      expect(ok.text).toMatch(/^outbox_backlog \d+$/m);
    } finally {
      await peer.close();
      delete process.env.METRICS_TOKEN;
    }
  });
});
