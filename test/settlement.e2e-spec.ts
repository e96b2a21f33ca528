import { randomUUID } from 'node:crypto';
import { ErrorCode, ProviderError } from '../src/common/errors';
import { IdempotencyService, requestFingerprint } from '../src/common/idempotency/idempotency.service';
import { PROVIDER_ANSWER_LOST, ReconciliationService } from '../src/reconciliation/reconciliation.service';
import { LedgerService } from '../src/transactions/ledger.service';
import { cardKit } from './support/cards';
import { confirmedPayout, customerWithBeneficiary, postCallback } from './support/fixtures';
import { type Harness, startHarness } from './support/harness';

/**
 * Settling what the provider never answered, and what a person must decide: the 502/504 answer of
 * a money-moving call says by when its row settles; reconciliation (or `?refresh=true`) settles it
 * past SETTLEMENT_DEADLINE without calling the provider again; `needs_review` rows are announced
 * and resolved by hand only (POST /v1/transactions/{id}/resolve).
 */
describe('settlement and manual resolution (e2e)', () => {
  let h: Harness;
  let auth: Record<string, string>;
  let clientId: string;
  let to: { customerId: string; beneficiaryId: string };
  const DEADLINE_MS = 10 * 60_000; // SETTLEMENT_DEADLINE's default, in ms
  const pastDeadline = () => new Date(Date.now() + DEADLINE_MS + 60_000);

  const row = async (id: string) =>
    (
      await h.db.query<{ status: string; failure_reason: string | null; created_at: Date; provider_id: string | null }>(
        'SELECT status, failure_reason, created_at, provider_id FROM transactions WHERE id = $1',
        [id],
      )
    )[0];
  const events = async (id: string) =>
    (
      await h.db.query<{ event_type: string }>(
        "SELECT event_type FROM outbox_messages WHERE payload->'data'->>'id' = $1 ORDER BY created_at",
        [id],
      )
    ).map((m) => m.event_type);
  const resolve = (id: string, body: object, as = auth) =>
    h.http().post(`/v1/transactions/${id}/resolve`).set(as).send(body);

  beforeAll(async () => {
    h = await startHarness();
    auth = { Authorization: `Bearer ${await h.key()}` };
    [{ id: clientId }] = await h.db.query<{ id: string }>(
      'SELECT id FROM api_clients ORDER BY created_at DESC LIMIT 1',
    );
    const sub = await h.http().post('/v1/webhook-subscriptions').set(auth).send({ url: 'http://127.0.0.1:9/hooks' });
    expect(sub.status).toBe(201);
    to = await customerWithBeneficiary(h, auth, 'settle@example.com');
  });
  afterAll(() => h.close());
  beforeEach(() => h.sim.admin('DELETE', '/faults'));

  it('answers an unanswered payout with its row, unknown, and settlesBy; refresh settles it past the deadline', async () => {
    await h.sim.setFault('initializePayout', { status: 503, times: 1 });
    const initializations = (await h.sim.calls('initializePayout')).length;
    const key = randomUUID();
    const post = () =>
      h
        .http()
        .post('/v1/payouts')
        .set(auth)
        .set('Idempotency-Key', key)
        .send({ ...to, amount: 12_000, description: 'lost answer' });
    const res = await post();
    expect(res.status).toBe(502);
    expect(res.headers['content-type']).toContain('application/problem+json');
    const stored = await row(res.body.transactionId);
    expect(res.body).toMatchObject({
      status: 502,
      code: 'provider_unavailable',
      transactionStatus: 'unknown',
      settlesBy: new Date(stored.created_at.getTime() + DEADLINE_MS).toISOString(),
    });
    expect(stored).toMatchObject({ status: 'unknown', provider_id: null });
    // The same key replays the same answer: the client learns the same row and bound.
    const replay = await post();
    expect(replay.status).toBe(502);
    expect(replay.body.transactionId).toBe(res.body.transactionId);
    expect(replay.body.settlesBy).toBe(res.body.settlesBy);

    // Before the deadline, refresh shows it as it is and asks the provider nothing.
    const lookups = (await h.sim.calls('getTransaction')).length;
    const early = await h.http().get(`/v1/transactions/${res.body.transactionId}?refresh=true`).set(auth);
    expect(early.body.status).toBe('unknown');
    // Past the deadline (the row is made 11 minutes old), refresh settles it: initialize moves no money.
    await h.db.query("UPDATE transactions SET created_at = now() - interval '11 minutes' WHERE id = $1", [
      res.body.transactionId,
    ]);
    const late = await h.http().get(`/v1/transactions/${res.body.transactionId}?refresh=true`).set(auth);
    expect(late.body).toMatchObject({ status: 'failed', failureReason: PROVIDER_ANSWER_LOST });
    expect(late.body.statusHistory.map((c: { to: string; source: string }) => `${c.to}:${c.source}`)).toEqual([
      'created:api',
      'unknown:api',
      'failed:reconciliation',
    ]);
    expect(late.body.statusHistory[1].actorId).toBe(clientId);
    expect((await h.sim.calls('getTransaction')).length).toBe(lookups);
    // One call: neither the replay nor the settlement sent it again.
    expect((await h.sim.calls('initializePayout')).length).toBe(initializations + 1);
    expect(await events(res.body.transactionId)).toEqual(['payout.failed']);
  });

  describe('a swap whose answer was lost', () => {
    let swapId: string;
    let quoteId: string;

    it('answers 504 with settlesBy, then goes to needs_review (quote too) once past the deadline, announced', async () => {
      const quote = await h
        .http()
        .post('/v1/swap-quotes')
        .set(auth)
        .send({ sourceCurrency: 'USD', targetCurrency: 'NGN', amount: 5_000 });
      quoteId = quote.body.id;
      await h.sim.setFault('finalizeSwap', { latencyMs: 1200, times: 1 });
      const res = await h.http().post('/v1/swaps').set(auth).set('Idempotency-Key', randomUUID()).send({ quoteId });
      expect(res.status).toBe(504);
      expect(res.body).toMatchObject({ code: 'provider_timeout', transactionStatus: 'unknown' });
      swapId = res.body.transactionId;
      expect(new Date(res.body.settlesBy).getTime()).toBe((await row(swapId)).created_at.getTime() + DEADLINE_MS);

      const reconciliation = h.app.get(ReconciliationService);
      expect((await reconciliation.run()).settled).toBe(0); // not yet past the deadline
      expect((await row(swapId)).status).toBe('unknown');
      const report = await reconciliation.run({ now: pastDeadline() });
      expect(report.settled).toBe(1);
      expect((await row(swapId)).status).toBe('needs_review');
      const [q] = await h.db.query<{ status: string }>('SELECT status FROM swap_quotes WHERE id = $1', [quoteId]);
      expect(q.status).toBe('needs_review');
      expect(await events(swapId)).toEqual(['transaction.needs_review']);
      expect((await h.sim.calls('finalizeSwap')).length).toBe(1);
      const listed = await h.http().get('/v1/transactions?status=needs_review').set(auth);
      expect(listed.body.data.map((t: { id: string }) => t.id)).toContain(swapId);
    });

    it('is resolved only with transactions:resolve and a bounded evidence text', async () => {
      const reader = { Authorization: `Bearer ${await h.key(['transactions:read'])}` };
      expect((await resolve(swapId, { status: 'success', evidence: 'dashboard' }, reader)).status).toBe(403);
      for (const body of [
        { status: 'success' },
        { status: 'success', evidence: '   ' },
        { status: 'success', evidence: 'x'.repeat(2001) },
        { status: 'reversed', evidence: 'dashboard' },
      ]) {
        const bad = await resolve(swapId, body);
        expect(bad.status).toBe(400);
        expect(bad.body.code).toBe('validation_failed');
      }
      expect((await resolve(randomUUID(), { status: 'failed', evidence: 'x' })).status).toBe(404);
      expect((await row(swapId)).status).toBe('needs_review');
    });

    it('records the decision with its actor and evidence; the quote follows; a second resolve is 409', async () => {
      const evidence = 'Provider dashboard: swap completed 03:12 UTC, 50.00 USD → 75,000.00 NGN';
      const res = await resolve(swapId, { status: 'success', evidence });
      expect(res.status).toBe(200);
      expect(res.body.status).toBe('success');
      expect(res.body.statusHistory.at(-1)).toMatchObject({
        from: 'needs_review',
        to: 'success',
        source: 'manual',
        actorId: clientId,
      });
      const [change] = await h.db.query<{ payload: { evidence: string }; actor_id: string }>(
        "SELECT payload, actor_id FROM transaction_status_changes WHERE transaction_id = $1 AND source = 'manual'",
        [swapId],
      );
      expect(change).toEqual({ payload: { evidence }, actor_id: clientId });
      const [q] = await h.db.query<{ status: string; executed_at: Date | null }>(
        'SELECT status, executed_at FROM swap_quotes WHERE id = $1',
        [quoteId],
      );
      expect(q.status).toBe('executed');
      expect(q.executed_at).not.toBeNull();
      expect(await events(swapId)).toEqual(['transaction.needs_review', 'swap.succeeded']);
      const again = await resolve(swapId, { status: 'failed', evidence });
      expect(again.status).toBe(409);
      expect(again.body.code).toBe('invalid_state_transition');
      expect((await h.sim.calls('finalizeSwap')).length).toBe(1);
    });
  });

  it('sends a payout still unknown after its lookups to needs_review past the deadline (provider down)', async () => {
    const created = await h
      .http()
      .post('/v1/payouts')
      .set(auth)
      .set('Idempotency-Key', randomUUID())
      .send({ ...to, amount: 13_500, description: 'confirm answer lost' });
    expect(created.status).toBe(201);
    await h.sim.setFault('finalizePayout', { status: 503, times: 1 });
    const confirm = await h
      .http()
      .post(`/v1/payouts/${created.body.id}/confirm`)
      .set(auth)
      .set('Idempotency-Key', randomUUID());
    expect(confirm.status).toBe(502);
    expect(await row(created.body.id)).toMatchObject({ status: 'unknown', provider_id: created.body.providerId });
    await h.sim.setFault('getTransaction', { status: 503, times: 1000 });
    const reconciliation = h.app.get(ReconciliationService);
    // Before the deadline a failing lookup leaves it unknown, to be asked again.
    await reconciliation.run({ olderThanMs: 0 });
    expect((await row(created.body.id)).status).toBe('unknown');
    const report = await reconciliation.run({ now: pastDeadline() });
    expect(report.settled).toBe(1);
    expect((await row(created.body.id)).status).toBe('needs_review');
    const [change] = await h.db.query<{ source: string; payload: { reason: string } }>(
      'SELECT source, payload FROM transaction_status_changes WHERE transaction_id = $1 AND "to" = \'needs_review\'',
      [created.body.id],
    );
    expect(change).toEqual({
      source: 'reconciliation',
      payload: { reason: 'still unknown after the provider lookup, past the settlement deadline' },
    });
    expect(await events(created.body.id)).toContain('transaction.needs_review');
  });

  it("moves a swap's quote along when a lookup settles the swap", async () => {
    const quote = await h
      .http()
      .post('/v1/swap-quotes')
      .set(auth)
      .send({ sourceCurrency: 'USD', targetCurrency: 'NGN', amount: 4_000 });
    const swap = await h
      .http()
      .post('/v1/swaps')
      .set(auth)
      .set('Idempotency-Key', randomUUID())
      .send({ quoteId: quote.body.id });
    expect(swap.body.status).toBe('success');
    // As if the finalize answer had been lost after the provider recorded the swap with its id.
    await h.db.query("UPDATE transactions SET status = 'unknown', completed_at = NULL WHERE id = $1", [swap.body.id]);
    await h.db.query("UPDATE swap_quotes SET status = 'executing', executed_at = NULL WHERE id = $1", [quote.body.id]);
    await h.app.get(ReconciliationService).run({ olderThanMs: 0 });
    expect((await row(swap.body.id)).status).toBe('success');
    const [q] = await h.db.query<{ status: string; executed_at: Date | null }>(
      'SELECT status, executed_at FROM swap_quotes WHERE id = $1',
      [quote.body.id],
    );
    expect(q.status).toBe('executed');
    expect(q.executed_at).not.toBeNull();
  });

  it('refuses to resolve a row that is not needs_review (409)', async () => {
    const p = await confirmedPayout(h, auth, to, 9_000);
    const res = await resolve(p.id, { status: 'success', evidence: 'looks paid' });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('invalid_state_transition');
    expect((await row(p.id)).status).toBe('pending');
  });

  it('keeps a needs_review row out of reach of callbacks and reconciliation until a person decides', async () => {
    const p = await confirmedPayout(h, auth, to, 8_000);
    // E.g. the provider's answer stated another amount (the amount guards move such rows).
    await h.app.get(LedgerService).transition(p.id, 'needs_review', 'api', { payload: { reason: 'test' } });
    await h.sim.admin('POST', `/payouts/${p.providerId}/complete`, { status: 'success' });
    const callback = await postCallback(
      h,
      { event: 'payout.transfer.success', data: { id: p.providerId, reference: p.reference, status: 'success' } },
      'x-bitnob-signature',
    );
    expect(callback.body.outcome).toBe('refused');
    await h.app.get(ReconciliationService).run({ now: pastDeadline() });
    expect((await row(p.id)).status).toBe('needs_review');

    const res = await resolve(p.id, { status: 'failed', evidence: 'Provider support: transfer returned' });
    expect(res.body).toMatchObject({ status: 'failed', failureReason: 'resolved_failed' });
    expect(await events(p.id)).toEqual(['transaction.needs_review', 'payout.failed']);
  });

  it('names the row and settlesBy on a 504 whose row a callback already moved (the move is not undone)', async () => {
    const p = await confirmedPayout(h, auth, to, 6_500);
    // The provider's success callback lands while the gateway still waits for its answer.
    const callback = await postCallback(
      h,
      { event: 'payout.transfer.success', data: { id: p.providerId, reference: p.reference, status: 'success' } },
      'x-bitnob-signature',
    );
    expect(callback.body.outcome).toBe('applied');
    const timeout = new ProviderError(ErrorCode.ProviderTimeout, 'no answer in time', 'finalizePayout');
    await h.app.get(LedgerService).recordProviderFailure(p.id, timeout);
    const stored = await row(p.id);
    expect(stored.status).toBe('success');
    expect(timeout.extensions).toMatchObject({
      transactionId: p.id,
      settlesBy: new Date(stored.created_at.getTime() + DEADLINE_MS).toISOString(),
    });
    expect(timeout.extensions).not.toHaveProperty('transactionStatus', 'unknown');
  });

  it('sends a collection failed provider_answer_lost to needs_review when its deposit arrives anyway', async () => {
    await h.sim.setFault('initializeCollection', { status: 503, times: 1 });
    const res = await h
      .http()
      .post('/v1/collections')
      .set(auth)
      .set('Idempotency-Key', randomUUID())
      .send({
        customerId: to.customerId,
        country: 'NG',
        currency: 'NGN',
        amount: 500_000,
        description: 'late payer',
        payer: { type: 'wema', accountName: 'Ada Late' },
      });
    expect(res.status).toBe(502);
    const id = res.body.transactionId as string;
    await h.app.get(ReconciliationService).run({ now: pastDeadline() });
    const failed = await row(id);
    expect(failed).toMatchObject({ status: 'failed', failure_reason: PROVIDER_ANSWER_LOST });
    const [{ reference }] = await h.db.query<{ reference: string }>(
      'SELECT reference FROM transactions WHERE id = $1',
      [id],
    );
    // The payer paid anyway (the provider had issued the account): the money is at the provider.
    const deposit = await postCallback(h, {
      event: 'transaction.deposit.success',
      data: { id: `late-${id}`, reference, status: 'success', amount: '5000.00', currency: 'ngn' },
    });
    expect(deposit.status).toBe(200);
    expect(deposit.body.outcome).toBe('applied');
    expect((await row(id)).status).toBe('needs_review');
    const [change] = await h.db.query<{ from: string; source: string; payload: { reason: string } }>(
      `SELECT "from", source, payload FROM transaction_status_changes WHERE transaction_id = $1 AND "to" = 'needs_review'`,
      [id],
    );
    expect(change).toMatchObject({
      from: 'failed',
      source: 'webhook',
      payload: { reason: 'transaction.deposit.success after the collection was failed' },
    });
    expect(await events(id)).toContain('transaction.needs_review');
    // A repeat of the callback is a duplicate; a person resolves the row.
    const again = await postCallback(h, {
      event: 'transaction.deposit.success',
      data: { id: `late-${id}`, reference, status: 'success', amount: '5000.00', currency: 'ngn' },
    });
    expect(again.body).toMatchObject({ duplicate: true });
    expect((await row(id)).status).toBe('needs_review');
    const resolved = await resolve(id, { status: 'success', evidence: 'Provider statement: 5,000.00 NGN received' });
    expect(resolved.body.status).toBe('success');
  });

  it('settles a card top-up the listing does not know, past the deadline, as needs_review', async () => {
    const kit = cardKit(h, () => auth);
    const card = await kit.activeCard('settle-card@example.com', 5000);
    await h.sim.setFault('topUpCard', { status: 503, times: 1 });
    const res = await h
      .http()
      .post(`/v1/cards/${card.id}/top-ups`)
      .set(auth)
      .set('Idempotency-Key', randomUUID())
      .send({ amount: 900 });
    expect(res.status).toBe(502);
    expect(res.body).toMatchObject({ transactionStatus: 'unknown', settlesBy: expect.any(String) });
    const reconciliation = h.app.get(ReconciliationService);
    await reconciliation.run({ olderThanMs: 0 });
    expect((await row(res.body.transactionId)).status).toBe('unknown');
    await reconciliation.run({ now: pastDeadline() });
    expect((await row(res.body.transactionId)).status).toBe('needs_review');
    expect(await events(res.body.transactionId)).toEqual(['transaction.needs_review']);
    // A person finds the top-up in the provider's records: the card's balance counts it, once.
    const before = (await h.http().get(`/v1/cards/${card.id}`).set(auth)).body.balance as number;
    const resolved = await resolve(res.body.transactionId, {
      status: 'success',
      evidence: 'Provider listing: 9.00 USD',
    });
    expect(resolved.body.status).toBe('success');
    expect((await h.http().get(`/v1/cards/${card.id}`).set(auth)).body.balance).toBe(before + 900);
  });

  describe('Idempotency-Key leases', () => {
    const body = () => ({ ...to, amount: 7_000, description: 'lease' });

    it('takes over a lapsed claim that wrote nothing and runs the request (nothing had been sent)', async () => {
      const key = randomUUID();
      const fingerprint = requestFingerprint('POST', '/v1/payouts {}', body());
      await h.db.query(
        `INSERT INTO idempotency_records (id, client_id, key, fingerprint, state, lease_expires_at, expires_at)
         VALUES (gen_random_uuid(), $1, $2, $3, 'in_progress', now() - interval '1 second', now() + interval '1 day')`,
        [clientId, key, fingerprint],
      );
      const calls = (await h.sim.calls('initializePayout')).length;
      const res = await h.http().post('/v1/payouts').set(auth).set('Idempotency-Key', key).send(body());
      expect(res.status).toBe(201);
      expect(res.headers['idempotent-replayed']).toBeUndefined();
      expect(res.body.status).toBe('initiated');
      expect((await h.sim.calls('initializePayout')).length).toBe(calls + 1);
      const [claim] = await h.db.query(
        'SELECT state, resource_type, resource_id FROM idempotency_records WHERE key = $1',
        [key],
      );
      expect(claim).toEqual({ state: 'completed', resource_type: 'payout', resource_id: res.body.id });
    });

    it('stops a request that lost its claim to a retry before it writes anything or calls the provider', async () => {
      const key = randomUUID();
      const fingerprint = requestFingerprint('POST', '/v1/payouts {}', body());
      const idempotency = h.app.get(IdempotencyService);
      const ledger = h.app.get(LedgerService);
      const rows = Number((await h.db.query<{ n: string }>('SELECT count(*) AS n FROM transactions'))[0].n);
      const lost = idempotency.run(clientId, key, fingerprint, async () => {
        // A retry takes the claim over meanwhile (as after a lapsed lease).
        await h.db.query(
          "UPDATE idempotency_records SET lease_expires_at = now() + interval '1 minute' WHERE key = $1",
          [key],
        );
        await ledger.record({ kind: 'payout', direction: 'debit', amount: 1n, currency: 'USD', reference: key });
        return { status: 201, body: {} };
      });
      await expect(lost).rejects.toMatchObject({ code: 'request_in_progress' });
      expect(Number((await h.db.query<{ n: string }>('SELECT count(*) AS n FROM transactions'))[0].n)).toBe(rows);
    });
  });
});
