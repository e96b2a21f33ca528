import { randomUUID } from 'node:crypto';
import { ExpiryService } from '../src/reconciliation/expiry.service';
import { ReconciliationService } from '../src/reconciliation/reconciliation.service';
import { confirmedPayout, customerWithBeneficiary, postCallback } from './support/fixtures';
import { type Harness, startHarness } from './support/harness';

describe('reconciliation (e2e)', () => {
  // The gateway does not listen here, so the simulator's callbacks never arrive.
  let h: Harness;
  let auth: Record<string, string>;
  let customerId: string;
  let beneficiaryId: string;

  const payout = (amount: number) => confirmedPayout(h, auth, { customerId, beneficiaryId }, amount);
  const status = async (id: string) =>
    (await h.db.query('SELECT status FROM transactions WHERE id = $1', [id]))[0].status;

  beforeAll(async () => {
    h = await startHarness();
    auth = { Authorization: `Bearer ${await h.key()}` };
    ({ customerId, beneficiaryId } = await customerWithBeneficiary(h, auth, 'recon@example.com'));
  });
  afterAll(() => h.close());

  it('resolves a payout whose callback never came, once, with source reconciliation', async () => {
    const p = await payout(30000);
    const done = await h.sim.admin('POST', `/payouts/${p.providerId}/complete`, { status: 'success' });
    expect(done.body.callback.attempts).not.toContain(200);
    expect(await status(p.id)).toBe('pending');

    const reconciliation = h.app.get(ReconciliationService);
    const young = await reconciliation.run({ olderThanMs: 60_000 });
    expect(young.checked).toBe(0);
    const [first, second] = await Promise.all([
      reconciliation.run({ olderThanMs: 0 }),
      reconciliation.run({ olderThanMs: 0 }),
    ]);
    expect(first.moved + second.moved).toBe(1);
    expect(await status(p.id)).toBe('success');
    const changes = await h.db.query(
      'SELECT "from", "to", source FROM transaction_status_changes WHERE transaction_id = $1 AND source = $2',
      [p.id, 'reconciliation'],
    );
    expect(changes).toEqual([{ from: 'pending', to: 'success', source: 'reconciliation' }]);
  });

  it('holds a payout needs_review when the lookup shows other money than the row holds, moving nothing else', async () => {
    const p = await payout(31000);
    await h.sim.admin('POST', `/payouts/${p.providerId}/complete`, { status: 'success' });
    // The ledger row says 310.01 USD where the provider paid 310.00: the two disagree.
    await h.db.query('UPDATE transactions SET amount = 31001 WHERE id = $1', [p.id]);
    await h.app.get(ReconciliationService).run({ olderThanMs: 0 });
    const [row] = await h.db.query<{ status: string; failure_reason: string }>(
      'SELECT status, failure_reason FROM transactions WHERE id = $1',
      [p.id],
    );
    expect(row.status).toBe('needs_review');
    expect(row.failure_reason).toMatch(/getTransaction with 310\.00 USD \(31000 minor units\).*310\.01 USD/);
    const changes = await h.db.query(
      'SELECT "from", "to" FROM transaction_status_changes WHERE transaction_id = $1 AND source = $2',
      [p.id, 'reconciliation'],
    );
    expect(changes).toEqual([{ from: 'pending', to: 'needs_review' }]);
    expect((await h.http().get('/metrics')).text).toMatch(
      /provider_amount_mismatch_total\{operation="getTransaction"\} 1/,
    );
  });

  it('leaves a payout still pending at the provider as it is', async () => {
    const p = await payout(40000);
    const report = await h.app.get(ReconciliationService).run({ olderThanMs: 0 });
    expect(report.errors).toBe(0);
    expect(await status(p.id)).toBe('pending');
  });

  it('re-tries inbox events that matched no record', async () => {
    const res = await postCallback(
      h,
      { event: 'payout.transfer.success', data: { id: 'ghost-payout', status: 'success' } },
      'x-bitnob-signature',
    );
    expect(res.body.outcome).toBe('unmatched');
    // Retried on a backoff schedule: not in the pass that follows at once, but once it is due.
    expect((await h.app.get(ReconciliationService).run({ olderThanMs: 0 })).inboxRetried).toBe(0);
    const later = new Date(Date.now() + 60_000);
    const report = await h.app.get(ReconciliationService).run({ olderThanMs: 0, now: later });
    expect(report.inboxRetried).toBe(1);
    expect(report.inboxMatched).toBe(0);
    const [row] = await h.db.query<{ outcome: string; attempts: number }>(
      "SELECT outcome, attempts FROM webhook_events WHERE provider_id = 'ghost-payout'",
    );
    expect(row).toEqual({ outcome: 'unmatched', attempts: 2 });
  });

  it('expires lapsed collections and quotes and purges day-old idempotency keys', async () => {
    const collection = await h
      .http()
      .post('/v1/collections')
      .set(auth)
      .set('Idempotency-Key', randomUUID())
      .send({
        customerId,
        country: 'KE',
        currency: 'KES',
        amount: 500000,
        description: 'expiry',
        payer: { type: 'Equity', accountName: 'Ada Obi' },
      });
    expect(collection.status).toBe(201);
    const quote = await h
      .http()
      .post('/v1/swap-quotes')
      .set(auth)
      .send({ sourceCurrency: 'USD', targetCurrency: 'NGN', amount: 1000 });
    expect(quote.status).toBe(201);
    const expiry = h.app.get(ExpiryService);
    expect(await expiry.run()).toEqual({
      collectionsExpired: 0,
      quotesExpired: 0,
      approvalsExpired: 0,
      idempotencyKeysPurged: 0,
    });
    const report = await expiry.run(new Date(Date.now() + 25 * 3600_000));
    expect(report.collectionsExpired).toBe(1);
    expect(report.quotesExpired).toBe(1);
    expect(report.idempotencyKeysPurged).toBeGreaterThan(0);
    expect(await status(collection.body.transactionId)).toBe('expired');
    const [q] = await h.db.query('SELECT status FROM swap_quotes WHERE id = $1', [quote.body.id]);
    expect(q.status).toBe('expired');
    expect(await h.db.query('SELECT 1 FROM idempotency_records')).toHaveLength(0);
    const again = await expiry.run(new Date(Date.now() + 25 * 3600_000));
    expect(again.collectionsExpired).toBe(0);
  });

  it('settles a confirm that timed out: unknown, then initiated again when the provider never finalized', async () => {
    const created = await h
      .http()
      .post('/v1/payouts')
      .set(auth)
      .set('Idempotency-Key', randomUUID())
      .send({ customerId, beneficiaryId, amount: 25000, description: 'confirm timeout' });
    expect(created.status).toBe(201);
    await h.sim.setFault('finalizePayout', { timeout: true, times: 1 });
    const timedOut = await h
      .http()
      .post(`/v1/payouts/${created.body.id}/confirm`)
      .set(auth)
      .set('Idempotency-Key', randomUUID());
    expect(timedOut.status).toBe(504);
    expect(await status(created.body.id)).toBe('unknown');
    const blocked = await h
      .http()
      .post(`/v1/payouts/${created.body.id}/confirm`)
      .set(auth)
      .set('Idempotency-Key', randomUUID());
    expect(blocked.status).toBe(409);
    expect(
      await h.sim
        .calls('finalizePayout')
        .then((c) => c.filter((x) => x.body.transactionId === created.body.providerId)),
    ).toHaveLength(1);

    await h.app.get(ReconciliationService).run({ olderThanMs: 0 });
    expect(await status(created.body.id)).toBe('initiated');
    const confirmed = await h
      .http()
      .post(`/v1/payouts/${created.body.id}/confirm`)
      .set(auth)
      .set('Idempotency-Key', randomUUID());
    expect(confirmed.status).toBe(201);
    expect(confirmed.body.status).toBe('pending');
  });
});
