import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { OutboxDeliveryService } from '../src/outbound/outbox-delivery.service';
import { OutboxService } from '../src/outbound/outbox.service';
import { confirmedPayout, customerWithBeneficiary } from './support/fixtures';
import { type Harness, startHarness, startPeer } from './support/harness';

/** One request the test receiver got. */
interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** What the receiver answers on a path: a status per request number (0-based), and an optional delay. */
type Behaviour = (n: number) => { status: number; delayMs?: number };

/** A local HTTP receiver standing in for an internal app (loopback only). */
class Receiver {
  readonly received: Received[] = [];
  private readonly behaviours = new Map<string, Behaviour>();
  private readonly server: Server;
  origin = '';

  constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = req.url ?? '/';
        const n = this.on(path).length;
        this.received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        const behaviour: Behaviour = this.behaviours.get(path) ?? (() => ({ status: 204 }));
        const { status, delayMs = 0 } = behaviour(n);
        setTimeout(() => {
          if (!res.destroyed) res.writeHead(status, { 'content-type': 'text/plain' }).end(`answer ${status}`);
        }, delayMs);
      });
    });
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.origin = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  url(path: string): string {
    return `${this.origin}${path}`;
  }

  behave(path: string, behaviour: Behaviour): void {
    this.behaviours.set(path, behaviour);
  }

  on(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Polls `check` until it returns a value other than undefined/false, or fails after `timeoutMs`. */
async function eventually<T>(
  check: () => Promise<T | undefined | false>,
  what: string,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Verifies a delivery with the Standard Webhooks reference verifier; returns the parsed event. */
function verified(secret: string, r: Received): any {
  return new Webhook(secret).verify(r.body, {
    'webhook-id': String(r.headers['webhook-id']),
    'webhook-timestamp': String(r.headers['webhook-timestamp']),
    'webhook-signature': String(r.headers['webhook-signature']),
  });
}

describe('outbound gateway events (e2e): subscriptions, signed deliveries, retries', () => {
  let h: Harness;
  let receiver: Receiver;
  let auth: Record<string, string>;
  let otherAuth: Record<string, string>;
  let delivery: OutboxDeliveryService;
  let outbox: OutboxService;
  let to: { customerId: string; beneficiaryId: string };

  const subscribe = async (body: Record<string, unknown>, as = auth) => {
    const res = await h.http().post('/v1/webhook-subscriptions').set(as).send(body);
    if (res.status !== 201) throw new Error(`subscribe: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as { id: string; secret: string; url: string; eventTypes: string[] };
  };
  const messages = async (subscriptionId: string, query = '') =>
    (await h.http().get(`/v1/webhook-subscriptions/${subscriptionId}/messages${query}`).set(auth)).body.data as any[];
  const unsubscribe = (id: string) => h.http().delete(`/v1/webhook-subscriptions/${id}`).set(auth);
  const transactionStatus = async (id: string) =>
    (await h.db.query<{ status: string }>('SELECT status FROM transactions WHERE id = $1', [id]))[0]?.status;
  const secondsFromNow = (s: number) => new Date(Date.now() + s * 1000);

  beforeAll(async () => {
    receiver = new Receiver();
    await receiver.start();
    h = await startHarness({ listen: true, env: { OUTBOX_MAX_ATTEMPTS: '3', OUTBOX_TIMEOUT_MS: '1000' } });
    auth = { Authorization: `Bearer ${await h.key()}` };
    otherAuth = { Authorization: `Bearer ${await h.key()}` };
    delivery = h.app.get(OutboxDeliveryService);
    outbox = h.app.get(OutboxService);
    to = await customerWithBeneficiary(h, auth, 'outbound@example.com');
  });
  afterAll(async () => {
    await h?.close();
    await receiver?.close();
  });

  it('creates a subscription and shows its secret once', async () => {
    const res = await h
      .http()
      .post('/v1/webhook-subscriptions')
      .set(auth)
      .send({ url: receiver.url('/created'), eventTypes: ['payout.failed', 'payout.succeeded'], description: 'app' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      url: receiver.url('/created'),
      eventTypes: ['payout.failed', 'payout.succeeded'],
      description: 'app',
      active: true,
      disabledAt: null,
    });
    expect(res.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(res.body.secret.slice(6), 'base64').length).toBeGreaterThanOrEqual(24);

    const got = await h.http().get(`/v1/webhook-subscriptions/${res.body.id}`).set(auth);
    expect(got.status).toBe(200);
    expect(got.body).not.toHaveProperty('secret');
    expect(JSON.stringify(got.body)).not.toContain(res.body.secret.slice(6));
    const list = await h.http().get('/v1/webhook-subscriptions').set(auth);
    expect(list.status).toBe(200);
    expect(list.body.data.map((s: { id: string }) => s.id)).toContain(res.body.id);
    expect(JSON.stringify(list.body)).not.toContain(res.body.secret.slice(6));
    expect((await unsubscribe(res.body.id)).status).toBe(200);
  });

  it('refuses bad URLs, unknown event types and unknown fields with 400', async () => {
    const post = (body: unknown) =>
      h
        .http()
        .post('/v1/webhook-subscriptions')
        .set(auth)
        .send(body as object);
    const cases: Array<[unknown, string]> = [
      [{ url: 'http://example.com/hooks' }, 'url'],
      [{ url: 'ftp://127.0.0.1/hooks' }, 'url'],
      [{ url: 'not a url' }, 'url'],
      [{ url: 'https://user:secret@example.com/hooks' }, 'url'],
      [{}, 'url'],
      [{ url: receiver.url('/x'), eventTypes: ['payout.exploded'] }, 'eventTypes'],
      [{ url: receiver.url('/x'), eventTypes: 'payout.succeeded' }, 'eventTypes'],
      [{ url: receiver.url('/x'), eventTypes: ['payout.failed', 'payout.failed'] }, 'eventTypes'],
      [{ url: receiver.url('/x'), secret: 'whsec_mine' }, 'secret'],
    ];
    for (const [body, field] of cases) {
      const res = await post(body);
      expect([JSON.stringify(body), res.status, res.body.code]).toEqual([
        JSON.stringify(body),
        400,
        'validation_failed',
      ]);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    }
    expect(await h.db.query('SELECT id FROM webhook_subscriptions WHERE url LIKE $1', ['%/x'])).toHaveLength(0);
  });

  it('needs the webhook-subscriptions:write scope', async () => {
    const reader = { Authorization: `Bearer ${await h.key(['payouts:read', 'transactions:read'])}` };
    const sub = await subscribe({ url: receiver.url('/scoped') });
    expect(
      (
        await h
          .http()
          .post('/v1/webhook-subscriptions')
          .send({ url: receiver.url('/s') })
      ).status,
    ).toBe(401);
    const forbidden = await h
      .http()
      .post('/v1/webhook-subscriptions')
      .set(reader)
      .send({ url: receiver.url('/s') });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.code).toBe('forbidden');
    expect((await h.http().get('/v1/webhook-subscriptions').set(reader)).status).toBe(403);
    expect((await h.http().get(`/v1/webhook-subscriptions/${sub.id}`).set(reader)).status).toBe(403);
    expect((await h.http().delete(`/v1/webhook-subscriptions/${sub.id}`).set(reader)).status).toBe(403);
    expect((await h.http().get(`/v1/webhook-subscriptions/${sub.id}/messages`).set(reader)).status).toBe(403);
    expect((await unsubscribe(sub.id)).status).toBe(200);
  });

  it("answers 404 for another client's subscription, on every route", async () => {
    const sub = await subscribe({ url: receiver.url('/mine') });
    await outbox.publish('card.created', { id: 'card-404' });
    const [message] = await messages(sub.id);
    const base = `/v1/webhook-subscriptions/${sub.id}`;
    const answers = [
      await h.http().get(base).set(otherAuth),
      await h.http().delete(base).set(otherAuth),
      await h.http().get(`${base}/messages`).set(otherAuth),
      await h.http().post(`${base}/messages/${message.id}/retry`).set(otherAuth),
    ];
    expect(answers.map((r) => [r.status, r.body.code])).toEqual(Array(4).fill([404, 'not_found']));
    const theirs = await h.http().get('/v1/webhook-subscriptions').set(otherAuth);
    expect(theirs.body.data).toEqual([]);
    expect((await h.http().get(base).set(auth)).body.active).toBe(true);
    expect((await unsubscribe(sub.id)).status).toBe(200);
  });

  it('delivers a correctly signed payout.succeeded after the provider completes a payout, filtered by event type', async () => {
    const all = await subscribe({ url: receiver.url('/all') });
    const failedOnly = await subscribe({ url: receiver.url('/failed-only'), eventTypes: ['payout.failed'] });
    const payout = await confirmedPayout(h, auth, to, 10000);
    const done = await h.sim.admin('POST', `/payouts/${payout.providerId}/complete`, { status: 'success' });
    expect(done.status).toBe(200);
    await eventually(async () => (await transactionStatus(payout.id)) === 'success', 'the payout to succeed');

    // Written with the ledger move, before any delivery: one message, for the subscription that takes it.
    const [queued] = await messages(all.id);
    expect(queued).toMatchObject({ eventType: 'payout.succeeded', status: 'pending', attempts: 0 });
    expect(await messages(failedOnly.id)).toEqual([]);

    const report = await delivery.deliverDue();
    expect(report).toMatchObject({ attempted: 1, delivered: 1 });
    const [request] = receiver.on('/all');
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['webhook-id']).toBe(queued.id);
    // The message id is also the delivery's request id (the receiver's logs can quote it).
    expect(request.headers['x-request-id']).toBe(queued.id);
    expect(Math.abs(Number(request.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
    expect(request.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    const event = verified(all.secret, request);
    expect(event).toEqual({
      type: 'payout.succeeded',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      data: expect.objectContaining({
        id: payout.id,
        kind: 'payout',
        status: 'success',
        amount: 10000,
        currency: 'USD',
        reference: payout.reference,
        customerId: to.customerId,
        beneficiaryId: to.beneficiaryId,
        cardId: null,
        completedAt: expect.any(String),
      }),
    });
    // A signature made with another secret, or over another body, does not verify.
    expect(() => verified(failedOnly.secret, request)).toThrow();
    expect(() => verified(all.secret, { ...request, body: request.body.replace('10000', '99999') })).toThrow();
    expect(receiver.on('/failed-only')).toEqual([]);
    const [sent] = await messages(all.id);
    expect(sent).toMatchObject({
      id: queued.id,
      status: 'delivered',
      attempts: 1,
      lastStatusCode: 204,
      lastError: null,
    });
    expect(sent.deliveredAt).not.toBeNull();

    // A failed payout reaches both: the one taking every event and the one taking payout.failed.
    const second = await confirmedPayout(h, auth, to, 20000);
    await h.sim.admin('POST', `/payouts/${second.providerId}/complete`, { status: 'failed' });
    await eventually(async () => (await transactionStatus(second.id)) === 'failed', 'the payout to fail');
    expect(await delivery.deliverDue()).toMatchObject({ attempted: 2, delivered: 2 });
    const failedEvent = verified(failedOnly.secret, receiver.on('/failed-only')[0]);
    expect(failedEvent).toMatchObject({
      type: 'payout.failed',
      data: { id: second.id, status: 'failed', amount: 20000 },
    });
    expect(verified(all.secret, receiver.on('/all')[1])).toMatchObject({ type: 'payout.failed' });
    await unsubscribe(all.id);
    await unsubscribe(failedOnly.id);
  });

  it('retries after a 500 with backoff, with the same webhook-id, until the receiver takes it', async () => {
    receiver.behave('/flaky', (n) => ({ status: n === 0 ? 500 : 200 }));
    const sub = await subscribe({ url: receiver.url('/flaky') });
    expect(await outbox.publish('card.created', { id: 'card-1', last4: '4242' })).toBe(1);

    const before = Date.now();
    expect(await delivery.deliverDue()).toMatchObject({ attempted: 1, retrying: 1 });
    const [waiting] = await messages(sub.id);
    expect(waiting).toMatchObject({ status: 'pending', attempts: 1, lastStatusCode: 500 });
    // The class of failure only (issue 14): never the receiver's answer ("answer 500") nor its address.
    expect(waiting.lastError).toBe('http_500');
    expect(waiting.lastError).not.toContain(receiver.origin);
    const wait = new Date(waiting.nextAttemptAt).getTime() - before;
    expect(wait).toBeGreaterThanOrEqual(4_000 - 50); // 5 s ± 20 %
    expect(wait).toBeLessThanOrEqual(6_000 + 2_000);

    expect(await delivery.deliverDue()).toMatchObject({ attempted: 0 }); // not due yet
    expect(await delivery.deliverDue({ now: secondsFromNow(7) })).toMatchObject({ attempted: 1, delivered: 1 });
    const [first, second] = receiver.on('/flaky');
    expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
    expect(second.headers['x-request-id']).toBe(first.headers['webhook-id']);
    expect(first.headers['x-request-id']).toBe(first.headers['webhook-id']);
    expect(second.body).toBe(first.body);
    expect(verified(sub.secret, first)).toEqual(verified(sub.secret, second));
    expect((await messages(sub.id))[0]).toMatchObject({ status: 'delivered', attempts: 2, lastStatusCode: 200 });
    const metrics = (await h.http().get('/metrics')).text;
    expect(metrics).toMatch(/outbound_delivery_attempts_total\{outcome="retrying"\} [1-9]/);
    expect(metrics).toMatch(/outbound_delivery_attempts_total\{outcome="delivered"\} [1-9]/);
    await unsubscribe(sub.id);
  });

  it('gives up after the last attempt (failed, visible), and the retry route sends it again', async () => {
    let up = false;
    receiver.behave('/down', () => ({ status: up ? 200 : 503 }));
    receiver.behave('/slow', () => ({ status: 200, delayMs: 3_000 }));
    const down = await subscribe({ url: receiver.url('/down') });
    const slow = await subscribe({ url: receiver.url('/slow') });
    await outbox.publish('card.creation_failed', { id: 'card-2', reason: 'declined' });

    let at = Date.now();
    expect(await delivery.deliverDue({ now: new Date(at) })).toMatchObject({ attempted: 2, retrying: 2 });
    at += 7_000;
    expect(await delivery.deliverDue({ now: new Date(at) })).toMatchObject({ attempted: 2, retrying: 2 });
    at += 37_000;
    expect(await delivery.deliverDue({ now: new Date(at) })).toMatchObject({ attempted: 2, failed: 2 });
    at += 24 * 3600_000;
    expect(await delivery.deliverDue({ now: new Date(at) })).toMatchObject({ attempted: 0 });
    expect(receiver.on('/down')).toHaveLength(3);

    const [failed] = await messages(down.id, '?status=failed');
    expect(failed).toMatchObject({ status: 'failed', attempts: 3, lastStatusCode: 503, nextAttemptAt: null });
    expect(failed.lastError).toBe('http_503');
    expect(failed.payload).toMatchObject({ type: 'card.creation_failed', data: { id: 'card-2' } });
    const [timedOut] = await messages(slow.id);
    expect(timedOut).toMatchObject({ status: 'failed', attempts: 3, lastStatusCode: null });
    expect(timedOut.lastError).toBe('timeout');
    expect(await messages(down.id, '?status=pending')).toEqual([]);

    up = true;
    const retried = await h.http().post(`/v1/webhook-subscriptions/${down.id}/messages/${failed.id}/retry`).set(auth);
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ id: failed.id, status: 'pending', attempts: 0 });
    expect(await delivery.deliverDue()).toMatchObject({ attempted: 1, delivered: 1 });
    const last = receiver.on('/down').at(-1) as Received;
    expect(last.headers['webhook-id']).toBe(failed.id);
    expect(verified(down.secret, last)).toMatchObject({ type: 'card.creation_failed' });
    const again = await h.http().post(`/v1/webhook-subscriptions/${down.id}/messages/${failed.id}/retry`).set(auth);
    expect([again.status, again.body.code]).toEqual([409, 'invalid_state_transition']);
    const unknown = await h.http().post(`/v1/webhook-subscriptions/${down.id}/messages/${timedOut.id}/retry`).set(auth);
    expect(unknown.status).toBe(404);
    await unsubscribe(down.id);
    await unsubscribe(slow.id);
  });

  it('delivers each message once when two gateway instances run passes at the same time', async () => {
    receiver.behave('/count', () => ({ status: 200, delayMs: 20 }));
    const sub = await subscribe({ url: receiver.url('/count'), eventTypes: ['card.created'] });
    for (let i = 0; i < 30; i++) await outbox.publish('card.created', { id: `card-c${i}` });
    const peer = await startPeer(h);
    try {
      const drain = async (service: OutboxDeliveryService) => {
        let attempted = 0;
        for (;;) {
          const report = await service.deliverDue({ limit: 4 });
          if (report.attempted === 0) return attempted;
          attempted += report.attempted;
        }
      };
      const counts = await Promise.all([
        drain(delivery),
        drain(peer.app.get(OutboxDeliveryService)),
        drain(delivery),
        drain(peer.app.get(OutboxDeliveryService)),
      ]);
      expect(counts.reduce((a, b) => a + b, 0)).toBe(30);
      expect(counts.filter((c) => c > 0).length).toBeGreaterThan(1); // both took part
    } finally {
      await peer.close();
    }
    const ids = receiver.on('/count').map((r) => r.headers['webhook-id']);
    expect(ids).toHaveLength(30);
    expect(new Set(ids).size).toBe(30);
    const rows = await h.db.query<{ status: string; attempts: number; n: string }>(
      'SELECT status, attempts, count(*) AS n FROM outbox_messages WHERE subscription_id = $1 GROUP BY 1, 2',
      [sub.id],
    );
    expect(rows).toEqual([{ status: 'delivered', attempts: 1, n: '30' }]);
    await unsubscribe(sub.id);
  });

  it('delivers nothing to a deleted subscription', async () => {
    const sub = await subscribe({ url: receiver.url('/deleted') });
    await outbox.publish('card.created', { id: 'card-d1' });
    const deleted = await unsubscribe(sub.id);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ id: sub.id, active: false, disabledAt: expect.any(String) });
    const [stopped] = await messages(sub.id);
    expect(stopped).toMatchObject({ status: 'failed', lastError: 'subscription deleted before delivery' });

    await outbox.publish('card.created', { id: 'card-d2' });
    await delivery.deliverDue({ now: secondsFromNow(3600) });
    expect(receiver.on('/deleted')).toEqual([]);
    expect(await messages(sub.id)).toHaveLength(1);
    const retry = await h.http().post(`/v1/webhook-subscriptions/${sub.id}/messages/${stopped.id}/retry`).set(auth);
    expect([retry.status, retry.body.code]).toEqual([409, 'conflict']);

    const twice = await unsubscribe(sub.id);
    expect(twice.body.disabledAt).toBe(deleted.body.disabledAt);
    const active = await h.http().get('/v1/webhook-subscriptions').set(auth);
    expect(active.body.data.map((s: { id: string }) => s.id)).not.toContain(sub.id);
    const everything = await h.http().get('/v1/webhook-subscriptions?includeDisabled=true').set(auth);
    expect(everything.body.data.map((s: { id: string }) => s.id)).toContain(sub.id);
  });

  it('pages through the messages of a subscription, newest first', async () => {
    const sub = await subscribe({ url: receiver.url('/paged') });
    for (let i = 0; i < 5; i++) await outbox.publish('card.created', { id: `card-p${i}` });
    const first = await h.http().get(`/v1/webhook-subscriptions/${sub.id}/messages?limit=3`).set(auth);
    expect(first.body.data).toHaveLength(3);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const rest = await h
      .http()
      .get(`/v1/webhook-subscriptions/${sub.id}/messages?limit=3&cursor=${first.body.nextCursor}`)
      .set(auth);
    expect(rest.body.data).toHaveLength(2);
    expect(rest.body.nextCursor).toBeNull();
    const seen = [...first.body.data, ...rest.body.data].map((m: any) => m.payload.data.id);
    expect(new Set(seen).size).toBe(5);
    expect((await h.http().get(`/v1/webhook-subscriptions/${sub.id}/messages?status=lost`).set(auth)).status).toBe(400);
    await unsubscribe(sub.id);
  });

  it('delivers on its own, every OUTBOX_POLL_MS, in an instance running the jobs', async () => {
    const sub = await subscribe({ url: receiver.url('/polled') });
    const saved = { JOBS_ENABLED: process.env.JOBS_ENABLED, OUTBOX_POLL_MS: process.env.OUTBOX_POLL_MS };
    Object.assign(process.env, { JOBS_ENABLED: 'true', OUTBOX_POLL_MS: '100' });
    let peer: Awaited<ReturnType<typeof startPeer>>;
    try {
      peer = await startPeer(h);
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
    try {
      await outbox.publish('card.created', { id: 'card-polled' });
      const [request] = await eventually(async () => {
        const got = receiver.on('/polled');
        return got.length > 0 && got;
      }, 'the poller to deliver');
      expect(verified(sub.secret, request)).toMatchObject({ type: 'card.created', data: { id: 'card-polled' } });
      await eventually(async () => (await messages(sub.id))[0]?.status === 'delivered', 'the delivery to be recorded');
    } finally {
      await peer.close();
    }
    await unsubscribe(sub.id);
  });
});
