import { randomUUID } from 'node:crypto';
import { PrismaService } from '../src/database/prisma.service';
import { ReconciliationService } from '../src/reconciliation/reconciliation.service';
import { LedgerService } from '../src/transactions/ledger.service';
import { WebhookHandlerRegistry } from '../src/webhooks/webhook-handlers';
import { dedupeKey, MAX_INBOX_ATTEMPTS, retryDelayMs, WebhooksService } from '../src/webhooks/webhooks.service';
import { confirmedPayout, customerWithBeneficiary, postCallback } from './support/fixtures';
import { type Harness, startHarness, startPeer } from './support/harness';

/**
 * The inbox never loses an event: failures are retried with backoff and end visible, events for
 * records not known yet are matched later, an event stored just before a crash is applied once
 * after the restart, and several gateway instances running the jobs at once do each thing once.
 */
describe('inbox recovery and several instances (e2e)', () => {
  let h: Harness;
  let auth: Record<string, string>;
  let to: { customerId: string; beneficiaryId: string };

  const deliver = (payload: unknown) => postCallback(h, payload);
  const inboxRow = async (providerId: string) =>
    (
      await h.db.query<{ outcome: string; attempts: number; error: string | null; next_attempt_at: Date | null }>(
        'SELECT outcome, attempts, error, next_attempt_at FROM webhook_events WHERE provider_id = $1',
        [providerId],
      )
    )[0];
  const changes = (transactionId: string) =>
    h.db.query<{ from: string | null; to: string; source: string }>(
      'SELECT "from", "to", source FROM transaction_status_changes WHERE transaction_id = $1 ORDER BY id',
      [transactionId],
    );
  const minutesFromNow = (m: number) => new Date(Date.now() + m * 60_000);

  beforeAll(async () => {
    h = await startHarness();
    auth = { Authorization: `Bearer ${await h.key()}` };
    to = await customerWithBeneficiary(h, auth, 'inbox@example.com');
  });
  afterAll(() => h.close());

  it('backs off exponentially with jitter, capped at an hour', () => {
    expect(retryDelayMs(1, () => 0.5)).toBe(30_000);
    expect(retryDelayMs(2, () => 0.5)).toBe(60_000);
    expect(retryDelayMs(4, () => 0.5)).toBe(240_000);
    expect(retryDelayMs(20, () => 0.5)).toBe(3_600_000);
    expect(retryDelayMs(1, () => 0)).toBe(24_000);
    expect(retryDelayMs(1, () => 1)).toBe(36_000);
  });

  it('retries a failing event with backoff until it applies', async () => {
    let calls = 0;
    h.app.get(WebhookHandlerRegistry).register(['test.flaky'], async () => {
      calls += 1;
      if (calls < 3) throw new Error(`flaky failure ${calls}`);
      return 'applied';
    });
    const res = await deliver({ event: 'test.flaky', data: { id: 'flaky-1', status: 'x' } });
    expect(res.status).toBe(200);
    expect(res.body.outcome).toBe('failed');
    const first = await inboxRow('flaky-1');
    expect(first).toMatchObject({ outcome: 'failed', attempts: 1, error: 'flaky failure 1' });
    const wait = (first.next_attempt_at as Date).getTime() - Date.now();
    expect(wait).toBeGreaterThan(20_000);
    expect(wait).toBeLessThanOrEqual(36_000);

    const webhooks = h.app.get(WebhooksService);
    expect(await webhooks.retryDue()).toEqual({ retried: 0, settled: 0 }); // not due yet
    expect(await webhooks.retryDue({ now: minutesFromNow(1) })).toEqual({ retried: 1, settled: 0 });
    const second = await inboxRow('flaky-1');
    expect(second).toMatchObject({ outcome: 'failed', attempts: 2, error: 'flaky failure 2' });
    expect(await webhooks.retryDue({ now: minutesFromNow(5) })).toEqual({ retried: 1, settled: 1 });
    expect(await inboxRow('flaky-1')).toMatchObject({
      outcome: 'applied',
      attempts: 3,
      error: null,
      next_attempt_at: null,
    });
    expect(await webhooks.retryDue({ now: minutesFromNow(600) })).toEqual({ retried: 0, settled: 0 });
    expect(calls).toBe(3);
  });

  it('gives up after the last attempt and leaves the event visible as failed', async () => {
    h.app.get(WebhookHandlerRegistry).register(['test.broken'], async () => {
      throw new Error('always broken');
    });
    await deliver({ event: 'test.broken', data: { id: 'broken-1', status: 'x' } });
    const webhooks = h.app.get(WebhooksService);
    for (let i = 1; i < MAX_INBOX_ATTEMPTS; i++) {
      expect((await webhooks.retryDue({ now: minutesFromNow(61 * i) })).retried).toBe(1);
    }
    expect(await inboxRow('broken-1')).toMatchObject({
      outcome: 'failed',
      attempts: MAX_INBOX_ATTEMPTS,
      error: 'always broken',
      next_attempt_at: null,
    });
    expect((await webhooks.retryDue({ now: minutesFromNow(60 * 24 * 30) })).retried).toBe(0);
  });

  it('matches an event that arrived before its record once reconciliation retries it', async () => {
    const providerId = `early-${randomUUID()}`;
    const early = await deliver({ event: 'payout.transfer.success', data: { id: providerId, status: 'success' } });
    expect(early.body.outcome).toBe('unmatched');
    // The gateway's own record of the payout lands afterwards.
    const row = await h.app.get(LedgerService).record({
      kind: 'payout',
      direction: 'debit',
      status: 'pending',
      amount: 12_300n,
      currency: 'USD',
      customerId: to.customerId,
      beneficiaryId: to.beneficiaryId,
      providerId,
      reference: `ref-${randomUUID()}`,
    });
    const report = await h.app.get(ReconciliationService).run({ olderThanMs: 60 * 60_000, now: minutesFromNow(1) });
    expect(report).toMatchObject({ inboxRetried: 1, inboxMatched: 1 });
    expect(await inboxRow(providerId)).toMatchObject({ outcome: 'applied', attempts: 2, next_attempt_at: null });
    expect(await changes(row.id)).toEqual([
      { from: null, to: 'pending', source: 'api' },
      { from: 'pending', to: 'success', source: 'webhook' },
    ]);
  });

  it('moves a row in one statement with the same result as the general path, outbox included', async () => {
    const ledger = h.app.get(LedgerService);
    const row = await ledger.record({
      kind: 'payout',
      direction: 'debit',
      status: 'pending',
      amount: 9_007_199_254_740_993n,
      currency: 'USD',
      exchangeRate: '1.234567891234',
      customerId: to.customerId,
      providerId: `one-${randomUUID()}`,
      reference: `ref-${randomUUID()}`,
    });
    await h.db.query(
      `INSERT INTO webhook_subscriptions (id, client_id, url, secret, event_types, updated_at)
       VALUES ($1, $1, 'http://127.0.0.1:9/hook', 'whsec_x', '{payout.failed}', now())`,
      [randomUUID()],
    );
    const moved = await ledger.transition(row.id, 'failed', 'webhook', {
      patch: { failureReason: 'insufficient funds' },
      payload: { event: 'payout.transfer.failed' },
    });
    expect(moved.outcome).toBe('applied');
    const stored = await h.app.get(PrismaService).transaction.findUniqueOrThrow({ where: { id: row.id } });
    expect(moved.transaction).toEqual(stored);
    expect(typeof moved.transaction.amount).toBe('bigint');
    expect(moved.transaction).toMatchObject({ status: 'failed', failureReason: 'insufficient funds' });
    expect(moved.transaction.completedAt).toBeInstanceOf(Date);
    expect(await changes(row.id)).toEqual([
      { from: null, to: 'pending', source: 'api' },
      { from: 'pending', to: 'failed', source: 'webhook' },
    ]);
    const [message] = await h.db.query<{
      event_type: string;
      payload: { type: string; data: Record<string, unknown> };
    }>(`SELECT event_type, payload FROM outbox_messages WHERE payload->'data'->>'id' = $1`, [row.id]);
    expect(message.event_type).toBe('payout.failed');
    expect(message.payload.data).toMatchObject({
      id: row.id,
      status: 'failed',
      amount: '9007199254740993',
      failureReason: 'insufficient funds',
      completedAt: stored.completedAt?.toISOString(),
    });
    // A second, identical move goes through the general path and changes nothing.
    expect((await ledger.transition(row.id, 'failed', 'webhook')).outcome).toBe('unchanged');
    expect((await ledger.transition(row.id, 'success', 'webhook')).outcome).toBe('refused');
  });

  it('applies an event stored just before a crash exactly once after the restart', async () => {
    const payout = await confirmedPayout(h, auth, to, 20_000);
    const event = {
      event: 'payout.transfer.success',
      data: { id: payout.providerId, reference: payout.reference, status: 'success', amount: '200.00' },
    };
    const raw = JSON.stringify(event);
    // What WebhooksService.receive had written when the process died: the row, outcome pending.
    await h.db.query(
      `INSERT INTO webhook_events (id, dedupe_key, event, provider_id, reference, raw_body, payload, signature_header, received_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, 'x-brails-signature', now() - interval '5 minutes')`,
      [randomUUID(), dedupeKey(event), event.event, payout.providerId, payout.reference, raw, raw],
    );

    // The provider retries while the gateway is down or restarting: a duplicate, nothing applied.
    const retried = await deliver(event);
    expect(retried.body).toMatchObject({ duplicate: true });
    expect((await changes(payout.id)).map((c) => c.to)).not.toContain('success');

    // Two instances come back up and both run the recovery pass at once.
    const peers = await Promise.all([startPeer(h), startPeer(h)]);
    try {
      const results = await Promise.all(peers.map((p) => p.app.get(WebhooksService).retryDue()));
      expect(results.reduce((n, r) => n + r.retried, 0)).toBe(1);
      expect(results.reduce((n, r) => n + r.settled, 0)).toBe(1);
    } finally {
      await Promise.all(peers.map((p) => p.close()));
    }
    expect(await inboxRow(payout.providerId)).toMatchObject({ outcome: 'applied', attempts: 1 });
    expect((await changes(payout.id)).filter((c) => c.to === 'success')).toEqual([
      { from: 'pending', to: 'success', source: 'webhook' },
    ]);
    expect((await h.app.get(WebhooksService).retryDue({ now: minutesFromNow(600) })).retried).toBe(0);
  });

  it('two instances reconciling at once look each stuck payout up once and move it once', async () => {
    const payouts = [];
    for (const amount of [31_000, 32_000, 33_000, 34_000, 35_000, 36_000]) {
      const p = await confirmedPayout(h, auth, to, amount);
      // Completed at the provider; its callback cannot reach this gateway (it is not listening).
      await h.sim.admin('POST', `/payouts/${p.providerId}/complete`, { status: 'success' });
      payouts.push(p);
    }
    await h.sim.admin('DELETE', '/calls');
    const peer = await startPeer(h);
    try {
      const reports = await Promise.all([
        h.app.get(ReconciliationService).run({ olderThanMs: 0 }),
        peer.app.get(ReconciliationService).run({ olderThanMs: 0 }),
      ]);
      expect(reports[0].checked + reports[1].checked).toBe(payouts.length);
      expect(reports[0].moved + reports[1].moved).toBe(payouts.length);
    } finally {
      await peer.close();
    }
    const lookups = (await h.sim.calls('getTransaction')).map((c) => c.path);
    for (const p of payouts) {
      expect(lookups.filter((path) => path.endsWith(`/${p.providerId}`))).toHaveLength(1);
      expect((await changes(p.id)).filter((c) => c.source === 'reconciliation')).toEqual([
        { from: 'pending', to: 'success', source: 'reconciliation' },
      ]);
    }
  });
});
