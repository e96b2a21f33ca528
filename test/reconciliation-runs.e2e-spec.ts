import { randomUUID } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import { ReconciliationRunsService } from '../src/reconciliation/reconciliation-runs.service';
import { type Harness, startHarness } from './support/harness';

/**
 * Reconciliation reports (issue 15 item 2): the ledger of a period against the simulator, whose
 * disagreement switch (PUT /__admin/transactions/{id}/disagree) makes records differ, so that every
 * class is produced; a run interrupted after some rows resumes without duplicate items; CSV export;
 * one run per period at a time.
 */
describe('reconciliation reports (e2e: gateway + simulator + PostgreSQL)', () => {
  let h: Harness;
  let auth: { Authorization: string };
  let runs: ReconciliationRunsService;
  const payouts: Array<{ id: string; providerId: string }> = [];
  let period: { from: string; to: string };
  let runId: string;

  const lookups = async () => (await h.sim.calls('getTransaction')).length;
  const items = async (id: string, query = '') =>
    (await h.http().get(`/v1/reconciliation-runs/${id}/items${query}`).set(auth)).body;

  beforeAll(async () => {
    h = await startHarness({ listen: true, env: { RECONCILIATION_RATE: '200' } });
    auth = { Authorization: `Bearer ${await h.key()}` };
    runs = h.app.get(ReconciliationRunsService);
    const customer = await h
      .http()
      .post('/v1/customers')
      .set(auth)
      .send({ email: 'recon@example.com', firstName: 'Ada', lastName: 'Obi', phone: '712345678', countryCode: '254' });
    const beneficiary = await h
      .http()
      .post('/v1/beneficiaries')
      .set(auth)
      .send({
        customerId: customer.body.id,
        country: 'KE',
        currency: 'KES',
        destination: { type: 'MOBILEMONEY', network: 'MPESA', accountNumber: '254712345678' },
      });
    const start = new Date(Date.now() - 1000);
    for (const amount of [10000, 20000, 30000, 40000, 50000]) {
      const res = await h
        .http()
        .post('/v1/payouts')
        .set(auth)
        .set('Idempotency-Key', randomUUID())
        .send({ customerId: customer.body.id, beneficiaryId: beneficiary.body.id, amount, description: 'Recon' });
      expect(res.status).toBe(201);
      payouts.push({ id: res.body.id, providerId: res.body.providerId });
    }
    // The fifth is paid: success on both sides still matches.
    await h.http().post(`/v1/payouts/${payouts[4].id}/confirm`).set(auth).set('Idempotency-Key', randomUUID()).send();
    await h.sim.admin('POST', `/payouts/${payouts[4].providerId}/complete`, { status: 'success' });
    // The switches: the provider says failed for #2, another amount for #3, and does not know #4.
    expect(
      (await h.sim.admin('PUT', `/transactions/${payouts[1].providerId}/disagree`, { status: 'failed' })).status,
    ).toBe(200);
    expect(
      (await h.sim.admin('PUT', `/transactions/${payouts[2].providerId}/disagree`, { amount: 30100 })).status,
    ).toBe(200);
    expect(
      (await h.sim.admin('PUT', `/transactions/${payouts[3].providerId}/disagree`, { missing: true })).status,
    ).toBe(200);
    // A callback the gateway cannot match (no such payout): kept in the inbox as unmatched.
    const sent = await h.sim.admin('POST', '/callbacks/send', {
      event: 'payout.transfer.success',
      data: {
        id: 'prov-unknown-1',
        reference: 'wg-payout-not-ours',
        status: 'success',
        amount: '12.00',
        currency: 'USD',
      },
    });
    expect(sent.status).toBe(200);
    const [inbox] = await h.db.query("SELECT outcome FROM webhook_events WHERE provider_id = 'prov-unknown-1'");
    expect(inbox).toEqual({ outcome: 'unmatched' });
    period = { from: start.toISOString(), to: new Date(Date.now() + 1000).toISOString() };
  });
  afterAll(() => h.close());

  it('starts a run (202 queued) and refuses a second one for the same period (409)', async () => {
    const res = await h.http().post('/v1/reconciliation-runs').set(auth).send(period);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({
      status: 'queued',
      from: period.from,
      to: period.to,
      kinds: ['collection', 'payout', 'swap'],
      processed: 0,
      totals: { matched: 0, status_mismatch: 0, amount_mismatch: 0, missing_at_provider: 0, unknown_locally: 0 },
    });
    runId = res.body.id;
    const again = await h.http().post('/v1/reconciliation-runs').set(auth).send(period);
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: 'reconciliation_run_in_progress', runId });
  });

  it('validates the period and the kinds', async () => {
    const backwards = await h
      .http()
      .post('/v1/reconciliation-runs')
      .set(auth)
      .send({ from: period.to, to: period.from });
    expect(backwards.status).toBe(400);
    const kinds = await h
      .http()
      .post('/v1/reconciliation-runs')
      .set(auth)
      .send({ ...period, kinds: ['card_spend'] });
    expect(kinds.status).toBe(400);
    expect(kinds.body.errors[0].field).toMatch(/^kinds/);
  });

  it('resumes after an interruption from its cursor, without duplicate items', async () => {
    const before = await lookups();
    expect(await runs.process(runId, { limit: 2 })).toEqual({ compared: 2, done: false });
    const mid = (await h.http().get(`/v1/reconciliation-runs/${runId}`).set(auth)).body;
    expect(mid).toMatchObject({ status: 'running', total: 5, processed: 2 });
    expect(await lookups()).toBe(before + 2);
    // As if the cursor's last write were lost: the rows are compared again, but written once.
    await h.db.query('UPDATE reconciliation_runs SET cursor_at = NULL, cursor_id = NULL WHERE id = $1', [runId]);
    expect(await runs.process(runId, { limit: 3 })).toEqual({ compared: 3, done: false });
    expect(
      (await h.db.query('SELECT count(*)::int AS n FROM reconciliation_items WHERE run_id = $1', [runId]))[0].n,
    ).toBe(3);
    expect(await runs.process(runId)).toEqual({ compared: 2, done: true });
    const transactionIds = (
      await h.db.query<{ transaction_id: string }>(
        'SELECT transaction_id FROM reconciliation_items WHERE run_id = $1 AND transaction_id IS NOT NULL',
        [runId],
      )
    ).map((r) => r.transaction_id);
    expect(transactionIds.sort()).toEqual(payouts.map((p) => p.id).sort());
    // A completed run is left alone.
    expect(await runs.process(runId)).toEqual({ compared: 0, done: true });
  });

  it('produces every class, with totals, and moves no status', async () => {
    const run = (await h.http().get(`/v1/reconciliation-runs/${runId}`).set(auth)).body;
    expect(run).toMatchObject({
      status: 'completed',
      total: 5,
      processed: 5,
      totals: { matched: 2, status_mismatch: 1, amount_mismatch: 1, missing_at_provider: 1, unknown_locally: 1 },
      completedAt: expect.any(String),
    });
    const page = await items(runId, '?limit=100');
    const byTransaction = new Map(page.data.map((i: any) => [i.transactionId, i]));
    expect(byTransaction.get(payouts[0].id)).toMatchObject({
      class: 'matched',
      localStatus: 'initiated',
      providerStatus: 'initiated',
    });
    expect(byTransaction.get(payouts[1].id)).toMatchObject({
      class: 'status_mismatch',
      localStatus: 'initiated',
      providerStatus: 'failed',
      details: { differences: ['status'] },
    });
    expect(byTransaction.get(payouts[2].id)).toMatchObject({
      class: 'amount_mismatch',
      localAmount: 30000,
      providerAmount: 30100,
      currency: 'USD',
      details: { differences: ['amount'] },
    });
    expect(byTransaction.get(payouts[3].id)).toMatchObject({ class: 'missing_at_provider', providerStatus: null });
    expect(byTransaction.get(payouts[4].id)).toMatchObject({ class: 'matched', localStatus: 'success' });
    expect(page.data.find((i: any) => i.class === 'unknown_locally')).toMatchObject({
      transactionId: null,
      providerId: 'prov-unknown-1',
      providerStatus: 'success',
      details: { event: 'payout.transfer.success', reference: 'wg-payout-not-ours' },
    });
    const statuses = await h.db.query<{ status: string }>(
      "SELECT status FROM transactions WHERE kind = 'payout' ORDER BY amount",
    );
    expect(statuses.map((s) => s.status)).toEqual(['initiated', 'initiated', 'initiated', 'initiated', 'success']);
    const events = await h.db.query(
      "SELECT count(*)::int AS n FROM outbox_messages WHERE event_type = 'reconciliation.completed'",
    );
    expect(events[0].n).toBe(0); // nobody subscribes in this file: announced to subscribers only
  });

  it('filters items by class and pages them with a cursor', async () => {
    const mismatched = await items(runId, '?class=status_mismatch');
    expect(mismatched.data.map((i: any) => i.transactionId)).toEqual([payouts[1].id]);
    const first = await items(runId, '?limit=4');
    expect(first.data).toHaveLength(4);
    const second = await items(runId, `?limit=4&cursor=${first.nextCursor}`);
    expect(second.data).toHaveLength(2);
    expect(second.nextCursor).toBeNull();
    expect(new Set([...first.data, ...second.data].map((i: any) => i.id)).size).toBe(6);
    const bad = await h.http().get(`/v1/reconciliation-runs/${runId}/items?cursor=nope`).set(auth);
    expect(bad.status).toBe(400);
  });

  it('exports the items as CSV', async () => {
    const res = await h.http().get(`/v1/reconciliation-runs/${runId}/export`).set(auth);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    expect(res.headers['content-disposition']).toMatch(/attachment; filename="reconciliation-.*\.csv"/);
    expect(res.text).toContain('\r\n');
    const records: Array<Record<string, string>> = parse(res.text, { columns: true });
    expect(records).toHaveLength(6);
    expect(records.find((r) => r.transaction_id === payouts[2].id)).toMatchObject({
      class: 'amount_mismatch',
      local_amount_minor: '30000',
      provider_amount_minor: '30100',
      currency: 'USD',
      differences: 'amount',
    });
    expect(records.filter((r) => r.class === 'matched')).toHaveLength(2);
  });

  it('lists runs, allows a new run of the period once the first completed, and announces completion', async () => {
    const subscription = await h
      .http()
      .post('/v1/webhook-subscriptions')
      .set(auth)
      .send({ url: 'http://127.0.0.1:9/hooks', eventTypes: ['reconciliation.completed'] });
    expect(subscription.status).toBe(201);
    const second = await h
      .http()
      .post('/v1/reconciliation-runs')
      .set(auth)
      .send({ ...period, kinds: ['payout'] });
    expect(second.status).toBe(202);
    expect(await runs.process(second.body.id)).toMatchObject({ done: true });
    const [message] = await h.db.query<{ payload: any }>(
      "SELECT payload FROM outbox_messages WHERE event_type = 'reconciliation.completed'",
    );
    expect(message.payload.data).toMatchObject({
      runId: second.body.id,
      kinds: ['payout'],
      totals: { matched: 2, status_mismatch: 1, amount_mismatch: 1, missing_at_provider: 1, unknown_locally: 1 },
    });
    const list = await h.http().get('/v1/reconciliation-runs?limit=1').set(auth);
    expect(list.body.data.map((r: any) => r.id)).toEqual([second.body.id]);
    const next = await h.http().get(`/v1/reconciliation-runs?limit=1&cursor=${list.body.nextCursor}`).set(auth);
    expect(next.body.data.map((r: any) => r.id)).toEqual([runId]);
  });

  it('needs reconciliation scopes', async () => {
    const payoutsOnly = { Authorization: `Bearer ${await h.key(['payouts:read'])}` };
    expect((await h.http().get('/v1/reconciliation-runs').set(payoutsOnly)).status).toBe(403);
    const readOnly = { Authorization: `Bearer ${await h.key(['reconciliation:read'])}` };
    expect((await h.http().get(`/v1/reconciliation-runs/${runId}`).set(readOnly)).status).toBe(200);
    expect((await h.http().post('/v1/reconciliation-runs').set(readOnly).send(period)).status).toBe(403);
  });

  it('the nightly run covers the previous UTC day', async () => {
    const run = await runs.startNightly(new Date('2026-11-25T01:30:00Z'));
    expect(run).toMatchObject({ from: '2026-11-24T00:00:00.000Z', to: '2026-11-25T00:00:00.000Z', requestedBy: null });
    expect(await runs.startNightly(new Date('2026-11-25T01:31:00Z'))).toBeNull();
  });
});
