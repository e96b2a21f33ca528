import { randomUUID } from 'node:crypto';
import { PROVIDER_ANSWER_LOST, ReconciliationService } from '../src/reconciliation/reconciliation.service';
import { type ChildGateway, startChildGateway, waitFor } from './support/child-gateway';
import { customerWithBeneficiary, postCallback } from './support/fixtures';
import { type Harness, startHarness } from './support/harness';

/**
 * A gateway process killed (SIGKILL) while its money-moving provider calls are in flight: payout
 * initialize, payout confirm (finalize), swap execute (finalize-swap) and collection initialize.
 * The provider completes each call after the gateway is gone, so every answer is lost. Another
 * gateway instance (in-process, same database and simulator) then answers retries of the same
 * Idempotency-Keys from the rows written ahead, and its reconciliation settles each row exactly
 * once without a second provider movement.
 */
describe('a gateway killed mid-call (e2e)', () => {
  let h: Harness;
  let child: ChildGateway;
  let auth: Record<string, string>;
  let clientId: string;
  const DEADLINE_MIN = 10; // SETTLEMENT_DEADLINE's default
  const LATENCY_MS = 3000; // long enough for all five calls to be in flight at once on a busy machine

  const row = async (id: string) =>
    (
      await h.db.query<{
        status: string;
        failure_reason: string | null;
        provider_id: string | null;
        reference: string;
      }>('SELECT status, failure_reason, provider_id, reference FROM transactions WHERE id = $1', [id])
    )[0];
  const history = async (id: string) =>
    h.db.query<{ from: string | null; to: string; source: string }>(
      'SELECT "from", "to", source FROM transaction_status_changes WHERE transaction_id = $1 ORDER BY at, id',
      [id],
    );
  const events = async (id: string) =>
    (
      await h.db.query<{ event_type: string }>(
        "SELECT event_type FROM outbox_messages WHERE payload->'data'->>'id' = $1 ORDER BY created_at",
        [id],
      )
    ).map((m) => m.event_type);
  const simRecords = async (reference: string) =>
    (
      (await h.sim.admin('GET', '/records')).body.records as Array<{
        id: string;
        kind: string;
        reference: string;
        status: string;
      }>
    ).filter((r) => r.reference === reference);
  const idempotencyRow = async (key: string) =>
    (
      await h.db.query<{ state: string; resource_type: string | null; resource_id: string | null }>(
        'SELECT state, resource_type, resource_id FROM idempotency_records WHERE client_id = $1 AND key = $2',
        [clientId, key],
      )
    )[0];

  beforeAll(async () => {
    h = await startHarness();
    const key = await h.key();
    auth = { Authorization: `Bearer ${key}` };
    [{ id: clientId }] = await h.db.query<{ id: string }>(
      'SELECT id FROM api_clients ORDER BY created_at DESC LIMIT 1',
    );
    const sub = await h.http().post('/v1/webhook-subscriptions').set(auth).send({ url: 'http://127.0.0.1:9/hooks' });
    expect(sub.status).toBe(201);
    // A small lease, so that the claims of the killed process lapse within the test.
    child = await startChildGateway(h, { IDEMPOTENCY_LEASE_MS: '1000', PROVIDER_TIMEOUT_MS: '30000' });
  });
  afterAll(async () => {
    await child?.kill();
    await h?.close();
  });

  it('settles every interrupted movement once, with one provider movement each, and answers retries', async () => {
    const to = await customerWithBeneficiary(h, auth, 'killed@example.com');
    const toConfirm = await h
      .http()
      .post('/v1/payouts')
      .set(auth)
      .set('Idempotency-Key', randomUUID())
      .send({ ...to, amount: 41_000, description: 'to confirm' });
    expect(toConfirm.body.status).toBe('initiated');
    const quote = await h
      .http()
      .post('/v1/swap-quotes')
      .set(auth)
      .send({ sourceCurrency: 'USD', targetCurrency: 'NGN', amount: 10_000 });
    expect(quote.status).toBe(201);
    const collectionBody = (accountName: string) => ({
      customerId: to.customerId,
      country: 'NG',
      currency: 'NGN',
      amount: 6_500_000,
      description: accountName,
      payer: { type: 'wema', accountName },
    });

    for (const operation of ['initializePayout', 'finalizePayout', 'finalizeSwap', 'initializeCollection']) {
      await h.sim.setFault(operation, { latencyMs: LATENCY_MS });
    }
    const before = await h.sim.calls();
    const keys = {
      payout: randomUUID(),
      confirm: randomUUID(),
      swap: randomUUID(),
      unpaid: randomUUID(),
      paid: randomUUID(),
    };
    const requests = {
      payout: { path: '/v1/payouts', body: { ...to, amount: 30_000, description: 'killed' } },
      confirm: { path: `/v1/payouts/${toConfirm.body.id}/confirm`, body: undefined },
      swap: { path: '/v1/swaps', body: { quoteId: quote.body.id } },
      unpaid: { path: '/v1/collections', body: collectionBody('Ada Unpaid') },
      paid: { path: '/v1/collections', body: collectionBody('Ada Paid') },
    } as const;
    const send = (name: keyof typeof keys, agent = child.http()) => {
      const call = agent.post(requests[name].path).set(auth).set('Idempotency-Key', keys[name]);
      return requests[name].body === undefined ? call : call.send(requests[name].body);
    };
    // In flight at the child: each has reached the provider, none has been answered.
    const inFlight = (Object.keys(keys) as Array<keyof typeof keys>).map((name) =>
      send(name).then(
        () => 'answered',
        () => 'cut off',
      ),
    );
    await waitFor('the five calls to reach the provider', async () =>
      (await h.sim.calls()).length - before.length >= 5 ? true : undefined,
    );
    await child.kill();
    expect(await Promise.all(inFlight)).toEqual(['cut off', 'cut off', 'cut off', 'cut off', 'cut off']);

    // What the dead process left: rows written ahead of the calls, without the provider's answers.
    const rowOf = async (key: string) => {
      const claim = await idempotencyRow(key);
      expect(claim).toMatchObject({ state: 'in_progress', resource_id: expect.any(String) });
      return claim.resource_id as string;
    };
    const payoutId = await rowOf(keys.payout);
    expect(await rowOf(keys.confirm)).toBe(toConfirm.body.id);
    const swapId = await rowOf(keys.swap);
    const unpaidId = await rowOf(keys.unpaid);
    const paidId = await rowOf(keys.paid);
    expect((await row(payoutId)).status).toBe('created');
    expect((await row(swapId)).status).toBe('created');

    // Retries with the same keys, at the surviving instance: answered from the rows once the dead
    // process's leases lapse (not 409 request_in_progress), and nothing is sent again.
    const retried = await send('payout', h.http());
    expect(retried.status).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBe('true');
    expect(retried.body).toMatchObject({ id: payoutId, status: 'created', providerId: null });
    const retriedSwap = await send('swap', h.http());
    expect(retriedSwap.status).toBe(201);
    expect(retriedSwap.body).toMatchObject({ id: swapId, status: 'created', quoteId: quote.body.id });
    const retriedConfirm = await send('confirm', h.http());
    expect(retriedConfirm.status).toBe(201);
    expect(retriedConfirm.body).toMatchObject({ id: toConfirm.body.id, status: 'initiated' });
    const retriedCollection = await send('unpaid', h.http());
    expect(retriedCollection.status).toBe(201);
    expect(retriedCollection.body).toMatchObject({ transactionId: unpaidId, status: 'created', accountNumber: null });

    // The provider finishes the calls after the gateway died.
    const references = {
      payout: (await row(payoutId)).reference,
      unpaid: (await row(unpaidId)).reference,
      paid: (await row(paidId)).reference,
    };
    await waitFor('the provider to finish the calls', async () => {
      const records = (await h.sim.admin('GET', '/records')).body.records as Array<Record<string, string>>;
      const done =
        records.some((r) => r.reference === references.payout) &&
        records.some((r) => r.reference === references.unpaid) &&
        records.some((r) => r.reference === references.paid) &&
        records.some((r) => r.kind === 'swap') &&
        records.some((r) => r.kind === 'payout' && r.status === 'pending');
      return done ? true : undefined;
    });
    await h.sim.admin('DELETE', '/faults');

    // The payer of one collection paid (its account detail reached them some other way): the
    // deposit callback arrives while the row is still `created`, and is refused for now.
    const [paidUpstream] = await simRecords(references.paid);
    const deposit = await postCallback(h, {
      event: 'transaction.deposit.success',
      data: {
        id: paidUpstream.id,
        reference: references.paid,
        status: 'success',
        amount: '65000.00',
        fees: '0',
        currency: 'ngn',
        action: 'deposit_ngn',
        channel: 'collection',
      },
    });
    expect(deposit.body.outcome).toBe('refused');

    const reconciliation = h.app.get(ReconciliationService);
    const now = new Date(Date.now() + (DEADLINE_MIN + 1) * 60_000);
    const report = await reconciliation.run({ now });
    expect(report.errors).toBe(0);

    // Payout initialize: initiated upstream (no money moves before finalize), never finalized → failed.
    expect(await row(payoutId)).toMatchObject({ status: 'failed', failure_reason: PROVIDER_ANSWER_LOST });
    expect(await history(payoutId)).toEqual([
      { from: null, to: 'created', source: 'api' },
      { from: 'created', to: 'failed', source: 'reconciliation' },
    ]);
    expect(await simRecords(references.payout)).toEqual([expect.objectContaining({ status: 'initiated' })]);
    expect(await events(payoutId)).toEqual(['payout.failed']);

    // Payout confirm: finalized upstream once; the lookup by provider id brings the row forward.
    expect((await row(toConfirm.body.id)).status).toBe('pending');
    expect((await history(toConfirm.body.id)).map((c) => `${c.to}:${c.source}`)).toEqual([
      'created:api',
      'initiated:api',
      'pending:reconciliation',
    ]);

    // Swap: executed upstream once, but nothing finds it by its quote → needs_review, quote too.
    expect((await row(swapId)).status).toBe('needs_review');
    expect(await history(swapId)).toEqual([
      { from: null, to: 'created', source: 'api' },
      { from: 'created', to: 'needs_review', source: 'reconciliation' },
    ]);
    const [storedQuote] = await h.db.query<{ status: string }>('SELECT status FROM swap_quotes WHERE id = $1', [
      quote.body.id,
    ]);
    expect(storedQuote.status).toBe('needs_review');
    expect(await events(swapId)).toEqual(['transaction.needs_review']);

    // Collections: the unpaid one failed (its account detail never reached anybody); the paid one
    // settled from the deposit callback kept in the inbox.
    expect(await row(unpaidId)).toMatchObject({ status: 'failed', failure_reason: PROVIDER_ANSWER_LOST });
    expect(await events(unpaidId)).toEqual(['collection.failed']);
    expect((await row(paidId)).status).toBe('success');
    expect((await history(paidId)).map((c) => `${c.to}:${c.source}`)).toEqual([
      'created:api',
      'unknown:reconciliation',
      'success:webhook',
    ]);
    expect(await events(paidId)).toEqual(['collection.paid']);

    // One provider movement each: no call was sent again, by the retries or by reconciliation.
    const calls = (await h.sim.calls()).slice(before.length);
    const count = (operation: string) => calls.filter((c) => c.operation === operation).length;
    expect([
      count('initializePayout'),
      count('finalizePayout'),
      count('finalizeSwap'),
      count('initializeCollection'),
    ]).toEqual([1, 1, 1, 2]);
    expect(
      (await h.sim.admin('GET', '/records')).body.records.filter((r: { kind: string }) => r.kind === 'swap'),
    ).toHaveLength(1);

    // Settled once: a second pass moves nothing; a retry now shows the settled row.
    const again = await reconciliation.run({ now });
    expect(again.settled).toBe(0);
    expect(await history(payoutId)).toHaveLength(2);
    const later = await send('payout', h.http());
    expect(later.body).toMatchObject({ id: payoutId, status: 'failed', failureReason: PROVIDER_ANSWER_LOST });
  });
});
