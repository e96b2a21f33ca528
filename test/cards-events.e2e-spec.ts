import { randomUUID } from 'node:crypto';
import { cardKit } from './support/cards';
import { type Harness, startHarness } from './support/harness';

/**
 * The provider's card callbacks, posted here signed (as the provider would) so that every case —
 * duplicates, late and out-of-order events, unknown records — is exact. The simulator's own
 * callbacks are covered end to end in cards-simulator.e2e-spec.ts.
 */
describe('card callbacks (e2e): created, top-up/withdrawal, spending, KYC', () => {
  let h: Harness;
  let key: string;
  const auth = () => ({ Authorization: `Bearer ${key}` });
  let kit: ReturnType<typeof cardKit>;
  const card = async (id: string) => (await h.http().get(`/v1/cards/${id}`).set(auth())).body;
  const inbox = async (event: string) =>
    h.db.query<{ outcome: string; provider_id: string }>(
      'SELECT outcome, provider_id FROM webhook_events WHERE event = $1 ORDER BY received_at',
      [event],
    );

  /** Gateway events written to the outbox for the test subscription, about one card. */
  const outboxEvents = async (cardId: string) =>
    (
      await h.db.query<{ event_type: string; payload: { data: Record<string, unknown> } }>(
        'SELECT event_type, payload FROM outbox_messages ORDER BY created_at',
      )
    ).filter((m) => m.payload.data.id === cardId);

  beforeAll(async () => {
    h = await startHarness();
    key = await h.key();
    kit = cardKit(h, auth);
    const subscription = await h
      .http()
      .post('/v1/webhook-subscriptions')
      .set(auth())
      .send({ url: 'http://127.0.0.1:9/hooks', eventTypes: ['card.created', 'card.creation_failed'] });
    expect(subscription.status).toBe(201);
  });
  afterAll(() => h.close());

  describe('virtualcard.created.success|failed', () => {
    it('activates the card with last4 and expiry and settles its initial funding, once', async () => {
      const pending = await kit.pendingCard('created@example.com', 6000);
      const data = {
        id: pending.providerId,
        reference: pending.reference,
        status: 'active',
        createdStatus: 'success',
        last4: '9876',
        cardBrand: 'mastercard',
        valid: '07/2030',
      };
      const first = await kit.callback('virtualcard.created.success', data);
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({ duplicate: false, outcome: 'applied' });
      const again = await kit.callback('virtualcard.created.success', data);
      expect(again.body).toMatchObject({ duplicate: true });
      const got = await card(pending.id);
      expect(got).toMatchObject({
        status: 'active',
        createdStatus: 'success',
        last4: '9876',
        brand: 'mastercard',
        expiryMonth: 7,
        expiryYear: 2030,
        balance: 6000,
      });
      const [funding] = await kit.ledger(pending.id);
      expect(funding).toMatchObject({ kind: 'card_topup', status: 'success', amount: '6000' });
      const events = await outboxEvents(pending.id);
      expect(events.map((e) => e.event_type)).toEqual(['card.created']);
      expect(events[0].payload.data).toMatchObject({ status: 'active', last4: '9876', balance: 6000 });
      expect((await kit.history(funding.id)).map((c) => `${c.from}->${c.to}:${c.source}`)).toEqual([
        'null->created:api',
        'created->pending:api',
        'pending->success:webhook',
      ]);
    });

    it('a late pending creation event after success changes nothing', async () => {
      const [row] = await h.db.query<{ id: string; provider_id: string; reference: string }>(
        "SELECT c.id, c.provider_id, c.reference FROM cards c JOIN customers u ON u.id = c.customer_id WHERE u.email = 'created@example.com'",
      );
      const late = await kit.callback('virtualcard.created.success', {
        id: row.provider_id,
        reference: row.reference,
        status: 'pending',
        createdStatus: 'pending',
      });
      expect(late.body).toMatchObject({ duplicate: false, outcome: 'unchanged' });
      expect(await card(row.id)).toMatchObject({ status: 'active', createdStatus: 'success', balance: 6000 });
    });

    it('created.failed fails the card and its funding (no balance); a late success is refused', async () => {
      const pending = await kit.pendingCard('createfail@example.com', 4000);
      const failed = await kit.callback('virtualcard.created.failed', {
        id: pending.providerId,
        reference: pending.reference,
        reason: 'Card network unavailable',
      });
      expect(failed.body.outcome).toBe('applied');
      expect(await card(pending.id)).toMatchObject({
        status: 'failed',
        balance: 0,
        failureReason: 'Card network unavailable',
      });
      expect((await kit.ledger(pending.id)).map((r) => r.status)).toEqual(['failed']);
      const lateSuccess = await kit.callback('virtualcard.created.success', {
        id: pending.providerId,
        reference: pending.reference,
        status: 'active',
        createdStatus: 'success',
        last4: '1111',
      });
      expect(lateSuccess.body.outcome).toBe('refused');
      expect(await card(pending.id)).toMatchObject({ status: 'failed', balance: 0, last4: null });
      expect((await outboxEvents(pending.id)).map((e) => e.event_type)).toEqual(['card.creation_failed']);
    });

    it('settles a card whose create call timed out (unknown), matched by reference, taking the provider id', async () => {
      const customerId = await kit.customer('createunknown@example.com');
      await kit.holder(customerId);
      await h.sim.setFault('createCard', { latencyMs: 1500, times: 1 });
      const timedOut = await kit.createCard(customerId, 3000);
      expect(timedOut.status).toBe(504);
      const [row] = await h.db.query<{ id: string; status: string; reference: string; provider_id: string | null }>(
        'SELECT id, status, reference, provider_id FROM cards WHERE customer_id = $1',
        [customerId],
      );
      expect(row).toMatchObject({ status: 'unknown', provider_id: null });
      const settled = await kit.callback('virtualcard.created.success', {
        id: 'prov-card-77',
        reference: row.reference,
        status: 'active',
        createdStatus: 'success',
        last4: '5555',
        valid: '01/2031',
      });
      expect(settled.body.outcome).toBe('applied');
      expect(await card(row.id)).toMatchObject({
        status: 'active',
        providerId: 'prov-card-77',
        last4: '5555',
        balance: 3000,
      });
      const [funding] = await kit.ledger(row.id);
      expect((await kit.history(funding.id)).map((c) => `${c.from}->${c.to}:${c.source}`)).toEqual([
        'null->created:api',
        'created->unknown:api',
        'unknown->success:webhook',
      ]);
    });

    it('keeps a creation event for an unknown card as unmatched', async () => {
      const res = await kit.callback('virtualcard.created.success', {
        id: 'no-such-card',
        reference: 'no-such-reference',
        status: 'active',
        createdStatus: 'success',
      });
      expect(res.status).toBe(200);
      expect(res.body.outcome).toBe('unmatched');
    });
  });

  describe('virtualcard.topup|withdrawal.success|failed', () => {
    let active: any;
    const topUp = (amount: number) =>
      h.http().post(`/v1/cards/${active.id}/top-ups`).set(auth()).set('Idempotency-Key', randomUUID()).send({ amount });
    const withdraw = (amount: number) =>
      h
        .http()
        .post(`/v1/cards/${active.id}/withdrawals`)
        .set(auth())
        .set('Idempotency-Key', randomUUID())
        .send({ amount });
    const event = (t: { providerId: string; reference: string }, status: string, amount: string) => ({
      id: t.providerId,
      cardId: active.providerId,
      amount,
      status,
      reference: t.reference,
      narrative: null,
    });

    beforeAll(async () => {
      active = await kit.activeCard('topups@example.com', 10_000);
    });

    it('topup.success credits the card once (major-unit amount), however often it arrives', async () => {
      const t = (await topUp(2550)).body;
      const ok = await kit.callback('virtualcard.topup.success', event(t, 'success', '25.50'));
      expect(ok.body).toMatchObject({ duplicate: false, outcome: 'applied' });
      expect((await kit.callback('virtualcard.topup.success', event(t, 'success', '25.50'))).body.duplicate).toBe(true);
      expect(await kit.balance(active.id)).toBe(12_550);
      const [row] = (await kit.ledger(active.id)).filter((r) => r.id === t.id);
      expect(row.status).toBe('success');
      expect((await kit.history(t.id)).at(-1)).toEqual({ from: 'pending', to: 'success', source: 'webhook' });
    });

    it('is forward-only: a late failed or pending after success changes nothing', async () => {
      const [t] = (await kit.ledger(active.id)).filter((r) => r.amount === '2550');
      const data = { providerId: t.provider_id as string, reference: t.reference };
      const lateFailed = await kit.callback('virtualcard.topup.failed', event(data, 'failed', '25.50'));
      expect(lateFailed.body.outcome).toBe('refused');
      const latePending = await kit.callback('virtualcard.topup.success', event(data, 'pending', '25.50'));
      expect(latePending.body.outcome).toBe('refused');
      expect((await kit.ledger(active.id)).find((r) => r.id === t.id)?.status).toBe('success');
      expect(await kit.balance(active.id)).toBe(12_550);
    });

    it('topup.failed fails a pending top-up without touching the balance', async () => {
      const t = (await topUp(1000)).body;
      const res = await kit.callback('virtualcard.topup.failed', {
        ...event(t, 'failed', '10.00'),
        reason: 'Declined',
      });
      expect(res.body.outcome).toBe('applied');
      const got = (await h.http().get(`/v1/cards/${active.id}/transactions?refresh=false&limit=100`).set(auth())).body;
      expect(got.data.find((r: { id: string }) => r.id === t.id)).toMatchObject({
        status: 'failed',
        failureReason: 'Declined',
      });
      expect(await kit.balance(active.id)).toBe(12_550);
    });

    it('topup.success stating another amount is not applied: the top-up is held needs_review, the balance unchanged', async () => {
      const t = (await topUp(1200)).body;
      const res = await kit.callback('virtualcard.topup.success', event(t, 'success', '1200.00'));
      expect(res.body).toMatchObject({ duplicate: false, outcome: 'refused' });
      const [row] = (await kit.ledger(active.id)).filter((r) => r.id === t.id);
      expect(row.status).toBe('needs_review');
      expect((await kit.history(t.id)).at(-1)).toEqual({ from: 'pending', to: 'needs_review', source: 'webhook' });
      expect(await kit.balance(active.id)).toBe(12_550);
      const [stored] = await h.db.query<{ error: string }>(
        "SELECT error FROM webhook_events WHERE provider_id = $1 AND event = 'virtualcard.topup.success'",
        [t.providerId],
      );
      expect(stored.error).toMatch(
        /1,?200\.00 USD \(120000 minor units\).*12\.00 USD \(1200 minor units\).*held needs_review/,
      );
      expect((await h.http().get('/metrics')).text).toMatch(
        /provider_amount_mismatch_total\{operation="virtualcard.topup.success"\} 1/,
      );
    });

    it('withdrawal.success debits the card; withdrawal.failed does not', async () => {
      const w1 = (await withdraw(550)).body;
      const w2 = (await withdraw(700)).body;
      expect((await kit.callback('virtualcard.withdrawal.success', event(w1, 'success', '5.50'))).body.outcome).toBe(
        'applied',
      );
      expect((await kit.callback('virtualcard.withdrawal.failed', event(w2, 'failed', '7.00'))).body.outcome).toBe(
        'applied',
      );
      expect(await kit.balance(active.id)).toBe(12_000);
      // A withdrawal event never settles a top-up of the same id.
      expect((await kit.callback('virtualcard.topup.success', event(w2, 'success', '7.00'))).body.outcome).toBe(
        'unmatched',
      );
    });

    it('settles a top-up whose call timed out (unknown) by its reference, recording the provider id', async () => {
      await h.sim.setFault('topUpCard', { latencyMs: 1500, times: 1 });
      expect((await topUp(400)).status).toBe(504);
      const [row] = (await kit.ledger(active.id)).filter((r) => r.amount === '400');
      expect(row).toMatchObject({ status: 'unknown', provider_id: null });
      const res = await kit.callback('virtualcard.topup.success', {
        id: 'ctx-400',
        cardId: active.providerId,
        amount: '4.00',
        status: 'success',
        reference: row.reference,
      });
      expect(res.body.outcome).toBe('applied');
      expect((await kit.ledger(active.id)).find((r) => r.id === row.id)).toMatchObject({
        status: 'success',
        provider_id: 'ctx-400',
      });
      expect(await kit.balance(active.id)).toBe(12_400);
    });

    it('keeps events for unknown card transactions as unmatched', async () => {
      const res = await kit.callback('virtualcard.topup.success', {
        id: 'no-such-txn',
        cardId: active.providerId,
        amount: '3.00',
        status: 'success',
        reference: 'no-such-ref',
      });
      expect(res.body.outcome).toBe('unmatched');
      expect((await inbox('virtualcard.topup.success')).at(-1)?.outcome).toBe('unmatched');
    });
  });

  describe('virtualcard.transaction.debit|credit|reversed|declined (card spending)', () => {
    let active: any;
    const spend = (event: string, id: string, amount: string, extra: Record<string, unknown> = {}) =>
      kit.callback(`virtualcard.transaction.${event}`, {
        id,
        cardId: active.providerId,
        amount,
        narrative: 'Bookshop',
        status: event === 'declined' ? 'declined' : event === 'reversed' ? 'reversed' : 'success',
        ...extra,
      });
    const spends = async () => (await kit.ledger(active.id)).filter((r) => r.kind === 'card_spend');

    beforeAll(async () => {
      active = await kit.activeCard('spend@example.com', 20_000);
    });

    it('debit records a card_spend row (ids need not be UUIDs) and lowers the balance, once', async () => {
      const first = await spend('debit', 'txn_42', '12.34');
      expect(first.body.outcome).toBe('applied');
      expect((await spend('debit', 'txn_42', '12.34')).body.duplicate).toBe(true);
      // The same spend delivered again under another status spelling is still one row.
      expect((await spend('debit', 'txn_42', '12.34', { status: 'SUCCESS' })).body.outcome).toBe('unchanged');
      expect(await spends()).toEqual([
        expect.objectContaining({ direction: 'debit', status: 'success', amount: '1234', provider_id: 'txn_42' }),
      ]);
      expect(await kit.balance(active.id)).toBe(20_000 - 1234);
    });

    it('credit raises the balance; reversed gives a spend back; declined records a failed row only', async () => {
      expect((await spend('credit', 'txn_43', '5.00')).body.outcome).toBe('applied');
      expect(await kit.balance(active.id)).toBe(20_000 - 1234 + 500);

      expect((await spend('reversed', 'txn_42', '12.34')).body.outcome).toBe('applied');
      expect((await spend('reversed', 'txn_42', '12.34')).body.duplicate).toBe(true);
      expect(await kit.balance(active.id)).toBe(20_000 + 500);

      const declined = await spend('declined', 'txn_44', '99.00', { reason: 'Insufficient funds' });
      expect(declined.body.outcome).toBe('applied');
      expect(await kit.balance(active.id)).toBe(20_000 + 500);

      const rows = await spends();
      expect(rows.map((r) => [r.provider_id, r.direction, r.status, r.amount])).toEqual([
        ['txn_42', 'debit', 'reversed', '1234'],
        ['txn_43', 'credit', 'success', '500'],
        ['txn_44', 'debit', 'failed', '9900'],
      ]);
      const [reversed] = rows;
      expect((await kit.history(reversed.id)).map((c) => `${c.from}->${c.to}:${c.source}`)).toEqual([
        'null->success:webhook',
        'success->reversed:webhook',
      ]);
      const listed = (await h.http().get(`/v1/cards/${active.id}/transactions?refresh=false`).set(auth())).body.data;
      expect(listed.find((t: { providerId: string }) => t.providerId === 'txn_44')).toMatchObject({
        kind: 'card_spend',
        status: 'failed',
        narrative: 'Bookshop',
        failureReason: 'Insufficient funds',
      });
    });

    it('a reversal of an unknown spend, or spending on an unknown card, is unmatched', async () => {
      expect((await spend('reversed', 'txn_unknown', '1.00')).body.outcome).toBe('unmatched');
      const other = await kit.callback('virtualcard.transaction.debit', {
        id: 'txn_50',
        cardId: 'no-such-card',
        amount: '1.00',
        status: 'success',
      });
      expect(other.body.outcome).toBe('unmatched');
      expect(await spends()).toHaveLength(3);
    });
  });

  describe('virtualcard.user.kyc.success|failed', () => {
    it('moves a pending holder to active; a late failed is refused', async () => {
      const customerId = await kit.customer('kyc-ok@example.com');
      const holder = await kit.holder(customerId);
      expect(holder.status).toBe('pending');
      const ok = await kit.callback('virtualcard.user.kyc.success', {
        id: holder.providerUserId,
        customerEmail: 'kyc-ok@example.com',
        status: 'success',
      });
      expect(ok.body.outcome).toBe('applied');
      const late = await kit.callback('virtualcard.user.kyc.failed', {
        id: holder.providerUserId,
        customerEmail: 'kyc-ok@example.com',
        status: 'failed',
        reason: 'late',
      });
      expect(late.body.outcome).toBe('refused');
      expect((await h.http().get(`/v1/card-holders/${holder.id}`).set(auth())).body.status).toBe('active');
    });

    it('a failed holder gets no card (409) until registered again', async () => {
      const customerId = await kit.customer('kyc-bad@example.com');
      const holder = await kit.holder(customerId);
      const failed = await kit.callback('virtualcard.user.kyc.failed', {
        id: 'unknown-user-id',
        customerEmail: 'KYC-BAD@example.com',
        status: 'failed',
        reason: 'Document unreadable',
      });
      expect(failed.body.outcome).toBe('applied');
      const got = (await h.http().get(`/v1/card-holders/${holder.id}`).set(auth())).body;
      expect(got).toMatchObject({ status: 'failed', failureReason: 'Document unreadable' });
      const refused = await kit.createCard(customerId, 0);
      expect(refused.status).toBe(409);
      expect(refused.body.detail).toMatch(/failed/);
      const again = await h.http().post('/v1/card-holders').set(auth()).send(kit.holderBody(customerId));
      expect(again.status).toBe(201);
      expect(again.body).toMatchObject({ id: holder.id, status: 'pending', failureReason: null });
      expect((await kit.createCard(customerId, 0)).status).toBe(201);
    });

    it('keeps a KYC event for an unknown card user as unmatched', async () => {
      const res = await kit.callback('virtualcard.user.kyc.success', {
        id: 'nobody',
        customerEmail: 'nobody@example.com',
        status: 'success',
      });
      expect(res.body.outcome).toBe('unmatched');
    });
  });
});
