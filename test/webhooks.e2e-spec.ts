import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { InboxRepository } from '../src/webhooks/inbox.repository';
import { signWebhook } from '../src/webhooks/signature';
import { WebhookHandlerRegistry } from '../src/webhooks/webhook-handlers';
import { WebhooksService } from '../src/webhooks/webhooks.service';
import { confirmedPayout, customerWithBeneficiary, postCallback } from './support/fixtures';
import { type Harness, startHarness, WEBHOOK_SECRET } from './support/harness';

describe('provider callbacks (e2e): signed receiver, inbox, payout events', () => {
  let h: Harness;
  let auth: Record<string, string>;
  let payout: { id: string; providerId: string; reference: string };

  const post = (body: string, headers: Record<string, string>) =>
    h.http().post('/webhooks/provider').set('content-type', 'application/json').set(headers).send(body);
  const signed = (payload: unknown, header = 'x-brails-signature') => postCallback(h, payload, header);
  const history = async (id: string) =>
    h.db.query<{ from: string | null; to: string; source: string }>(
      'SELECT "from", "to", source FROM transaction_status_changes WHERE transaction_id = $1 ORDER BY id',
      [id],
    );
  const inbox = () =>
    h.db.query<{ event: string; outcome: string }>('SELECT event, outcome FROM webhook_events ORDER BY received_at');

  /** A KES 5,000.00 collection of the customer with `email`, created through the API. */
  const collectionOf = async (email: string, description: string) => {
    const [customer] = await h.db.query<{ id: string }>('SELECT id FROM customers WHERE email = $1', [email]);
    const collection = await h
      .http()
      .post('/v1/collections')
      .set(auth)
      .set('Idempotency-Key', randomUUID())
      .send({
        customerId: customer.id,
        country: 'KE',
        currency: 'KES',
        amount: 500000,
        description,
        payer: { type: 'Equity', accountName: 'Ada Obi' },
      });
    expect(collection.status).toBe(201);
    return collection.body as { id: string; providerId: string; reference: string; transactionId: string };
  };

  beforeAll(async () => {
    h = await startHarness({ listen: true });
    auth = { Authorization: `Bearer ${await h.key()}` };
    payout = await confirmedPayout(h, auth, await customerWithBeneficiary(h, auth, 'hooks@example.com'), 10000);
  });
  afterAll(() => h.close());

  it('refuses unsigned and forged callbacks with 401 and stores nothing', async () => {
    const body = JSON.stringify({
      event: 'payout.transfer.success',
      data: { id: payout.providerId, status: 'success' },
    });
    expect((await post(body, {})).status).toBe(401);
    const forged = await post(body, { 'x-brails-signature': signWebhook(body, 'not-the-secret') });
    expect(forged.status).toBe(401);
    expect(forged.body.code).toBe('unauthorized');
    expect(await inbox()).toHaveLength(0);
    expect((await h.db.query('SELECT status FROM transactions WHERE id = $1', [payout.id]))[0].status).toBe('pending');
    const metrics = await h.http().get('/metrics');
    expect(metrics.text).toMatch(/webhook_signature_failures_total 2/);
  });

  it('applies payout.transfer.success once, however often it arrives (either header name)', async () => {
    const event = {
      event: 'payout.transfer.success',
      data: { id: payout.providerId, reference: payout.reference, status: 'success', amount: '100.00' },
    };
    const first = await signed(event);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ received: true, duplicate: false, outcome: 'applied' });
    for (const header of ['x-brails-signature', 'x-bitnob-signature']) {
      const again = await signed(event, header);
      expect(again.body).toMatchObject({ received: true, duplicate: true });
    }
    const rows = await h.db.query('SELECT status, completed_at FROM transactions WHERE id = $1', [payout.id]);
    expect(rows[0].status).toBe('success');
    expect(rows[0].completed_at).not.toBeNull();
    expect((await history(payout.id)).filter((c) => c.source === 'webhook')).toEqual([
      { from: 'pending', to: 'success', source: 'webhook' },
    ]);
    expect((await inbox()).filter((r) => r.event === 'payout.transfer.success')).toEqual([
      { event: 'payout.transfer.success', outcome: 'applied' },
    ]);
  });

  it('keeps the headers of interest with each stored event, never the signature', async () => {
    const body = JSON.stringify({ event: 'payout.transfer.success', data: { id: 'hdr-1', status: 'success' } });
    const signature = signWebhook(body, WEBHOOK_SECRET);
    await post(body, { 'x-brails-signature': signature, 'x-request-id': 'prov-req-9', 'user-agent': 'brails/1.0' });
    const [row] = await h.db.query<{ headers: Record<string, string>; signature_header: string }>(
      "SELECT headers, signature_header FROM webhook_events WHERE provider_id = 'hdr-1'",
    );
    expect(row.signature_header).toBe('x-brails-signature');
    expect(row.headers).toEqual({
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      'user-agent': 'brails/1.0',
      'x-request-id': 'prov-req-9',
    });
    expect(JSON.stringify(row.headers)).not.toContain(signature);
  });

  it('ignores a late failed after success (forward-only)', async () => {
    const late = await signed({
      event: 'payout.transfer.failed',
      data: { id: payout.providerId, status: 'failed', reason: 'late' },
    });
    expect(late.body).toMatchObject({ duplicate: false, outcome: 'refused' });
    expect((await h.db.query('SELECT status FROM transactions WHERE id = $1', [payout.id]))[0].status).toBe('success');
    expect((await history(payout.id)).filter((c) => c.source === 'webhook')).toHaveLength(1);
  });

  it('keeps events for unknown records as unmatched and unknown event names as unhandled, answering 200', async () => {
    const unknown = await signed({ event: 'payout.transfer.success', data: { id: 'not-a-uuid-7', status: 'success' } });
    expect(unknown.status).toBe(200);
    expect(unknown.body.outcome).toBe('unmatched');
    const strange = await signed({ event: 'something.new', data: { id: 'x1' } });
    expect(strange.status).toBe(200);
    expect(strange.body.outcome).toBe('unhandled');
    expect(await inbox()).toEqual(
      expect.arrayContaining([
        { event: 'payout.transfer.success', outcome: 'unmatched' },
        { event: 'something.new', outcome: 'unhandled' },
      ]),
    );
  });

  it('moves a beneficiary forward on its status events, never back', async () => {
    const [beneficiary] = await h.db.query<{ id: string; provider_id: string; reference: string }>(
      'SELECT id, provider_id, reference FROM beneficiaries LIMIT 1',
    );
    await h.db.query("UPDATE beneficiaries SET status = 'pending' WHERE id = $1", [beneficiary.id]);
    const statusNow = async () =>
      (await h.db.query<{ status: string }>('SELECT status FROM beneficiaries WHERE id = $1', [beneficiary.id]))[0]
        .status;
    const success = await signed({
      event: 'beneficiary.status.success',
      data: { id: beneficiary.provider_id, reference: beneficiary.reference, status: 'success' },
    });
    expect(success.body).toMatchObject({ duplicate: false, outcome: 'applied' });
    expect(await statusNow()).toBe('success');
    const late = await signed({
      event: 'beneficiary.status.pending',
      data: { id: beneficiary.provider_id, status: 'pending' },
    });
    expect(late.body).toMatchObject({ duplicate: false, outcome: 'refused' });
    const changed = await signed({
      event: 'beneficiary.status.changed',
      data: { id: beneficiary.provider_id, status: 'SUCCESS' },
    });
    expect(changed.body).toMatchObject({ duplicate: false, outcome: 'unchanged' });
    expect(await statusNow()).toBe('success');
    const unknown = await signed({ event: 'beneficiary.status.success', data: { id: 'ben-x', status: 'success' } });
    expect(unknown.body.outcome).toBe('unmatched');
  });

  it('counts applied callbacks by event and outcome, and exposes the apply queue depth', async () => {
    const metrics = (await h.http().get('/metrics')).text;
    expect(metrics).toMatch(/webhook_events_processed_total\{event="payout.transfer.success",outcome="applied"\} 1\n/);
    expect(metrics).toMatch(/webhook_events_processed_total\{event="other",outcome="unhandled"\} 1\n/);
    expect(metrics).toMatch(/webhook_apply_queue_depth 0\n/);
  });

  it('keeps numeric provider ids as text to match on (ids are never assumed to be UUIDs or strings)', async () => {
    const res = await signed({ event: 'payout.transfer.success', data: { id: 987654321, status: 'success' } });
    expect(res.body.outcome).toBe('unmatched');
    const [row] = await h.db.query<{ provider_id: string }>(
      "SELECT provider_id FROM webhook_events WHERE payload->'data'->>'id' = '987654321'",
    );
    expect(row.provider_id).toBe('987654321');
  });

  it('has a handler for every event name docs/provider.md lists', () => {
    const documented = [
      'payout.transfer.success',
      'payout.transfer.failed',
      'transaction.deposit.success',
      'beneficiary.status.changed',
      'beneficiary.status.pending',
      'beneficiary.status.success',
      'virtualcard.created.success',
      'virtualcard.created.failed',
      'virtualcard.topup.success',
      'virtualcard.topup.failed',
      'virtualcard.withdrawal.success',
      'virtualcard.withdrawal.failed',
      'virtualcard.transaction.debit',
      'virtualcard.transaction.credit',
      'virtualcard.transaction.reversed',
      'virtualcard.transaction.declined',
      'virtualcard.user.kyc.success',
      'virtualcard.user.kyc.failed',
    ];
    expect(h.app.get(WebhookHandlerRegistry).events()).toEqual([...documented].sort());
  });

  it('answers 400 for a signed body that is not {event, data}', async () => {
    const res = await signed({ hello: 'world' });
    expect(res.status).toBe(400);
  });

  it('stores a signed callback whose id or status is an object JavaScript cannot make a string of (was a 500)', async () => {
    // `{"toString": 1}` has no callable toString: String() of it throws. Such a body is still stored
    // once (the dedupe key reads objects as their JSON), matched to nothing, and answered 200.
    const odd = {
      event: 'payout.transfer.success',
      data: { id: { toString: 1 }, status: { valueOf: 1, toString: 2 } },
    };
    const first = await signed(odd);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ duplicate: false, outcome: 'unmatched' });
    expect((await signed(odd)).body).toMatchObject({ duplicate: true });
    const other = await signed({ ...odd, data: { ...odd.data, id: { toString: 3 } } });
    expect(other.body).toMatchObject({ duplicate: false });
  });

  it('answers every signed callback of any shape for every handled event with 200 or a 400 problem, never a 5xx (property)', async () => {
    // The fields handlers read, plus names that are special to JavaScript objects, each holding any JSON value.
    const keys = ['id', 'status', 'reference', 'amount', 'cardId', 'customerEmail', 'reason', 'toString', 'valueOf'];
    const value = fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.constant({ toString: 1, valueOf: 1 }));
    const callback = fc.record({
      event: fc.constantFrom(...h.app.get(WebhookHandlerRegistry).events()),
      data: fc.dictionary(fc.constantFrom(...keys), value, { maxKeys: 6 }),
    });
    await fc.assert(
      fc.asyncProperty(callback, async (body) => {
        const res = await signed(body);
        const what = `${JSON.stringify(body).slice(0, 300)} → ${res.status}`;
        expect({ what, status: res.status === 200 || res.status === 400 }).toEqual({ what, status: true });
        if (res.status === 400) expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      }),
      { numRuns: 150 },
    );
  });

  it('never stores card numbers or CVV from a callback', async () => {
    await signed({
      event: 'virtualcard.created.success',
      data: { id: 'card-1', cardNumber: '5399831234567890', cvv2: '123', status: 'success' },
    });
    const [row] = await h.db.query<{ raw_body: string; payload: unknown }>(
      "SELECT raw_body, payload FROM webhook_events WHERE provider_id = 'card-1'",
    );
    expect(row.raw_body).not.toContain('5399831234567890');
    expect(JSON.stringify(row.payload)).not.toContain('5399831234567890');
    expect(row.raw_body).not.toContain('"123"');
  });

  it('masks a card number inside the free text of a card event, but not identifiers', async () => {
    const res = await signed({
      event: 'virtualcard.transaction.debit',
      data: {
        id: '4111111111111111',
        cardId: 'card-77',
        narrative: 'POS 4111 1111 1111 1111 ACME STORE',
        amount: '5.00',
        status: 'success',
      },
    });
    expect(res.status).toBe(200);
    const [row] = await h.db.query<{ raw_body: string; provider_id: string }>(
      "SELECT raw_body, provider_id FROM webhook_events WHERE payload->'data'->>'cardId' = 'card-77'",
    );
    expect(row.provider_id).toBe('4111111111111111');
    expect(JSON.parse(row.raw_body).data.narrative).toBe('POS [REDACTED] ACME STORE');
  });

  it("receives the simulator's signed payout.transfer.failed callback end to end", async () => {
    const customer = await h.db.query<{ id: string }>("SELECT id FROM customers WHERE email = 'hooks@example.com'");
    const [beneficiary] = await h.db.query<{ id: string }>('SELECT id FROM beneficiaries LIMIT 1');
    const created = await h
      .http()
      .post('/v1/payouts')
      .set(auth)
      .set('Idempotency-Key', randomUUID())
      .send({ customerId: customer[0].id, beneficiaryId: beneficiary.id, amount: 20000, description: 'callback' });
    await h.http().post(`/v1/payouts/${created.body.id}/confirm`).set(auth).set('Idempotency-Key', randomUUID());
    const [call] = await h.sim
      .calls('initializePayout')
      .then((calls) => calls.filter((c) => c.body.reference === created.body.reference));
    expect(call.body.callbackUrl).toMatch(/\/webhooks\/provider$/);
    const done = await h.sim.admin('POST', `/payouts/${created.body.providerId}/complete`, { status: 'failed' });
    expect(done.body.callback.attempts).toEqual([200]);
    const [row] = await h.db.query('SELECT status FROM transactions WHERE id = $1', [created.body.id]);
    expect(row.status).toBe('failed');
    expect((await history(created.body.id)).at(-1)).toEqual({ from: 'pending', to: 'failed', source: 'webhook' });
  });

  describe('the money a callback states is checked against the ledger row before it moves (docs/money-safety.md)', () => {
    const status = async (id: string) =>
      (
        await h.db.query<{ status: string; failure_reason: string | null }>(
          'SELECT status, failure_reason FROM transactions WHERE id = $1',
          [id],
        )
      )[0];
    const outcomeOf = async (providerId: string, event: string) =>
      (
        await h.db.query<{ outcome: string; error: string | null }>(
          'SELECT outcome, error FROM webhook_events WHERE provider_id = $1 AND event = $2',
          [providerId, event],
        )
      )[0];
    const mismatches = async () =>
      Number(
        /provider_amount_mismatch_total\{operation="payout.transfer.success"\} (\d+)/.exec(
          (await h.http().get('/metrics')).text,
        )?.[1] ?? 0,
      );
    let to: { customerId: string; beneficiaryId: string };

    beforeAll(async () => {
      to = await customerWithBeneficiary(h, auth, 'amounts@example.com');
    });

    it('holds a payout needs_review when its success callback states another amount (×100: a unit slip), applying nothing', async () => {
      const p = await confirmedPayout(h, auth, to, 5000); // 50.00 USD
      const before = await mismatches();
      const res = await signed({
        event: 'payout.transfer.success',
        data: { id: p.providerId, reference: p.reference, status: 'success', amount: '5000.00', currency: 'usd' },
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ duplicate: false, outcome: 'refused' });
      const row = await status(p.id);
      expect(row.status).toBe('needs_review');
      expect(row.failure_reason).toMatch(/5,?000\.00 USD \(500000 minor units\).*50\.00 USD \(5000 minor units\)/);
      expect(row.failure_reason).toMatch(/unit misconfigured\?/);
      expect((await history(p.id)).filter((c) => c.source === 'webhook')).toEqual([
        { from: 'pending', to: 'needs_review', source: 'webhook' },
      ]);
      const event = await outcomeOf(p.providerId, 'payout.transfer.success');
      expect(event.outcome).toBe('refused');
      expect(event.error).toMatch(new RegExp(`payout ${p.id} held needs_review.*not applied`));
      expect(await mismatches()).toBe(before + 1);
      // The same event again changes nothing; a person resolves the row (POST /v1/transactions/{id}/resolve).
      expect(
        (
          await signed({
            event: 'payout.transfer.success',
            data: { id: p.providerId, status: 'success', amount: '5000.00' },
          })
        ).body,
      ).toMatchObject({ duplicate: true });
      expect((await status(p.id)).status).toBe('needs_review');
    });

    it('holds a payout for review on a failed callback of another currency, and applies one whose money agrees', async () => {
      const other = await confirmedPayout(h, auth, to, 7000);
      const res = await signed({
        event: 'payout.transfer.failed',
        data: { id: other.providerId, status: 'failed', amount: '70.00', currency: 'ngn', reason: 'x' },
      });
      expect(res.body.outcome).toBe('refused');
      expect((await status(other.id)).status).toBe('needs_review');
      expect((await status(other.id)).failure_reason).toMatch(/70\.00 NGN .* 70\.00 USD/);

      const agreeing = await confirmedPayout(h, auth, to, 7000);
      const ok = await signed({
        event: 'payout.transfer.success',
        data: { id: agreeing.providerId, status: 'success', amount: '70.00', currency: 'usd' },
      });
      expect(ok.body.outcome).toBe('applied');
      expect((await status(agreeing.id)).status).toBe('success');
      // No amount stated: nothing contradicts the row (the documented event always states one).
      const silent = await confirmedPayout(h, auth, to, 7100);
      expect(
        (await signed({ event: 'payout.transfer.success', data: { id: silent.providerId, status: 'success' } })).body
          .outcome,
      ).toBe('applied');
    });

    it('keeps a callback whose amount cannot be read failed (retried), the payout untouched', async () => {
      const p = await confirmedPayout(h, auth, to, 7200);
      const res = await signed({
        event: 'payout.transfer.success',
        data: { id: p.providerId, status: 'success', amount: '72.001' },
      });
      expect(res.body.outcome).toBe('failed');
      expect((await status(p.id)).status).toBe('pending');
      expect((await outcomeOf(p.providerId, 'payout.transfer.success')).error).toMatch(/amount.*fraction digits/);
    });

    it('in a batch, moves the agreeing payouts together and holds only the mismatched one', async () => {
      const payouts = [
        await confirmedPayout(h, auth, to, 8000),
        await confirmedPayout(h, auth, to, 8100),
        await confirmedPayout(h, auth, to, 8200),
      ];
      const amounts = ['80.00', '8100.00', '82.00'];
      const stored = await h.app.get(InboxRepository).insertMany(
        payouts.map((p, i) => {
          const payload = {
            event: 'payout.transfer.success',
            data: { id: p.providerId, status: 'success', amount: amounts[i] },
          };
          return {
            id: randomUUID(),
            values: {
              dedupeKey: randomUUID(),
              event: payload.event,
              providerId: p.providerId,
              reference: p.reference,
              rawBody: JSON.stringify(payload),
              payloadJson: JSON.stringify(payload),
              signatureHeader: 'x-brails-signature',
              headersJson: '{}',
            },
          };
        }),
      );
      const byProvider = new Map(stored.map((row) => [row.providerId, row]));
      const outcomes = await h.app.get(WebhooksService).processBatch(payouts.map((p) => byProvider.get(p.providerId)!));
      expect(outcomes).toEqual(['applied', 'refused', 'applied']);
      expect(await Promise.all(payouts.map(async (p) => (await status(p.id)).status))).toEqual([
        'success',
        'needs_review',
        'success',
      ]);
    });

    it('holds a collection needs_review when its deposit states another amount than was asked', async () => {
      const collection = await collectionOf('amounts@example.com', 'short deposit');
      const res = await signed({
        event: 'transaction.deposit.success',
        data: {
          id: collection.providerId,
          reference: collection.reference,
          status: 'success',
          amount: '4000',
          currency: 'kes',
        },
      });
      expect(res.body.outcome).toBe('refused');
      const got = await h.http().get(`/v1/collections/${collection.id}`).set(auth);
      expect(got.body.status).toBe('needs_review');
      expect((await status(collection.transactionId)).failure_reason).toMatch(/4,?000\.00 KES .* 5,?000\.00 KES/);
    });
  });

  it("receives the simulator's deposit callback and marks the collection paid", async () => {
    const collection = await collectionOf('hooks@example.com', 'deposit');
    const paid = await h.sim.admin('POST', `/collections/${collection.providerId}/pay`);
    expect(paid.body.callback.attempts).toEqual([200]);
    const got = await h.http().get(`/v1/collections/${collection.id}`).set(auth);
    expect(got.body.status).toBe('success');
    expect((await history(collection.transactionId)).at(-1)).toEqual({
      from: 'processing',
      to: 'success',
      source: 'webhook',
    });
  });
});
