import { randomUUID } from 'node:crypto';
import { cardKit } from './support/cards';
import { type Harness, startHarness } from './support/harness';

describe('virtual cards (e2e): card holders, cards, transitions, money moves, transaction sync', () => {
  let h: Harness;
  let key: string;
  const auth = () => ({ Authorization: `Bearer ${key}` });
  let kit: ReturnType<typeof cardKit>;
  const providerCalls = async (operation: string) => (await h.sim.calls(operation)).length;

  beforeAll(async () => {
    h = await startHarness();
    key = await h.key();
    kit = cardKit(h, auth);
  });
  afterAll(() => h.close());

  describe('POST /v1/card-holders', () => {
    it('registers a customer as a card holder (pending) and sends the KYC fields to the provider', async () => {
      const customerId = await kit.customer('holder@example.com');
      const res = await h.http().post('/v1/card-holders').set(auth()).send(kit.holderBody(customerId));
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        customerId,
        status: 'pending',
        idType: 'PASSPORT',
        idNumberLast4: '5678',
        firstName: 'Ada',
        lastName: 'Obi',
        country: 'KE',
      });
      expect(res.body.providerUserId).toEqual(expect.any(String));
      expect(res.body.phoneLast4).toMatch(/^\d{4}$/);
      // Personal data is not answered in full (issue 14): no id number, phone or address.
      expect(res.body).not.toHaveProperty('idNumber');
      expect(res.body).not.toHaveProperty('phone');
      expect(res.body).not.toHaveProperty('address');
      const [call] = await h.sim.calls('registerCardUser');
      expect(call.body).toMatchObject({
        customerEmail: 'holder@example.com',
        idType: 'PASSPORT',
        idNumber: 'A12345678',
        line1: '1 Moi Avenue',
        houseName: 'Block C',
        city: 'Nairobi',
        country: 'KE',
        userPhoto: 'https://cdn.example.com/kyc/photo.jpg',
      });
      // Images go to the provider only.
      const [row] = await h.db.query('SELECT to_jsonb(card_holders)::text AS row FROM card_holders WHERE id = $1', [
        res.body.id,
      ]);
      expect(row.row).not.toContain('cdn.example.com');

      const got = await h.http().get(`/v1/card-holders/${res.body.id}`).set(auth());
      expect(got.status).toBe(200);
      expect(got.body).toEqual(res.body);
    });

    it('refuses a second registration of the same customer with 409', async () => {
      const [customer] = await h.db.query<{ id: string }>(
        "SELECT id FROM customers WHERE email = 'holder@example.com'",
      );
      const again = await h.http().post('/v1/card-holders').set(auth()).send(kit.holderBody(customer.id));
      expect(again.status).toBe(409);
      expect(again.body.code).toBe('conflict');
    });

    it('requires bvn for Nigerian and dateOfBirth for Ghanaian customers, without calling the provider', async () => {
      const customerId = await kit.customer('naija@example.com', '+234');
      const before = await providerCalls('registerCardUser');
      const ng = await h
        .http()
        .post('/v1/card-holders')
        .set(auth())
        .send(kit.holderBody(customerId, { address: { ...kit.holderBody(customerId).address, country: 'NG' } }));
      expect(ng.status).toBe(400);
      expect(ng.body.errors).toEqual([expect.objectContaining({ field: 'bvn' })]);
      const gh = await h
        .http()
        .post('/v1/card-holders')
        .set(auth())
        .send(kit.holderBody(customerId, { address: { ...kit.holderBody(customerId).address, country: 'GH' } }));
      expect(gh.status).toBe(400);
      expect(gh.body.errors).toEqual([expect.objectContaining({ field: 'dateOfBirth' })]);
      expect(await providerCalls('registerCardUser')).toBe(before);
      const ok = await h
        .http()
        .post('/v1/card-holders')
        .set(auth())
        .send(
          kit.holderBody(customerId, {
            bvn: '22222222222',
            address: { ...kit.holderBody(customerId).address, country: 'NG' },
          }),
        );
      expect(ok.status).toBe(201);
      expect((await h.sim.calls('registerCardUser')).at(-1)?.body.bvn).toBe('22222222222');
    });

    it('answers 400 for missing fields and 404 for an unknown customer', async () => {
      const bad = await h.http().post('/v1/card-holders').set(auth()).send({ customerId: randomUUID() });
      expect(bad.status).toBe(400);
      expect(bad.body.errors.map((e: { field: string }) => e.field)).toEqual(
        expect.arrayContaining(['idType', 'idNumber', 'address', 'userPhoto']),
      );
      const unknown = await h.http().post('/v1/card-holders').set(auth()).send(kit.holderBody(randomUUID()));
      expect(unknown.status).toBe(404);
    });
  });

  describe('POST /v1/cards', () => {
    it('needs a card holder first (409), an Idempotency-Key (400) and an amount within the bounds (400)', async () => {
      const customerId = await kit.customer('noholder@example.com');
      const before = await providerCalls('createCard');
      const noHolder = await kit.createCard(customerId, 5000);
      expect(noHolder.status).toBe(409);
      expect(noHolder.body.detail).toMatch(/card-holders/);
      const noKey = await h.http().post('/v1/cards').set(auth()).send({ customerId, brand: 'visa', amount: 5000 });
      expect(noKey.status).toBe(400);
      expect(noKey.body.code).toBe('idempotency_key_missing');
      await kit.holder(customerId);
      for (const amount of [299, 250_001]) {
        const res = await kit.createCard(customerId, amount);
        expect(res.status).toBe(400);
        expect(res.body.errors[0].field).toBe('amount');
      }
      const badBrand = await kit.createCard(customerId, 5000, { brand: 'amex' });
      expect(badBrand.status).toBe(400);
      expect(await providerCalls('createCard')).toBe(before);
      expect(await h.db.query('SELECT id FROM cards WHERE customer_id = $1', [customerId])).toHaveLength(0);
    });

    it('creates a card (pending) with a card_topup ledger row for its initial funding; replays by Idempotency-Key', async () => {
      const customerId = await kit.customer('card@example.com');
      await kit.holder(customerId);
      const idempotencyKey = randomUUID();
      const send = (amount: number) =>
        h
          .http()
          .post('/v1/cards')
          .set(auth())
          .set('Idempotency-Key', idempotencyKey)
          .send({ customerId, brand: 'visa', type: 'virtual', amount });
      const res = await send(5000);
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        customerId,
        status: 'pending',
        createdStatus: 'pending',
        brand: 'visa',
        type: 'virtual',
        balance: 0,
        initialAmount: 5000,
        currency: 'USD',
        last4: null,
      });
      expect(res.body.providerId).toEqual(expect.any(String));
      const [call] = (await h.sim.calls('createCard')).filter((c) => c.body.reference === res.body.reference);
      expect(call.body).toMatchObject({ customerEmail: 'card@example.com', cardBrand: 'visa', amount: 5000 });

      const ledger = await kit.ledger(res.body.id);
      expect(ledger).toEqual([
        expect.objectContaining({ kind: 'card_topup', direction: 'credit', status: 'pending', amount: '5000' }),
      ]);
      expect((await kit.history(ledger[0].id)).map((c) => `${c.from}->${c.to}:${c.source}`)).toEqual([
        'null->created:api',
        'created->pending:api',
      ]);

      const replay = await send(5000);
      expect(replay.status).toBe(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toEqual(res.body);
      const reused = await send(6000);
      expect(reused.status).toBe(409);
      expect(reused.body.code).toBe('idempotency_key_reused');
      expect((await h.sim.calls('createCard')).filter((c) => c.body.reference === res.body.reference)).toHaveLength(1);
      expect(await h.db.query('SELECT id FROM cards WHERE customer_id = $1', [customerId])).toHaveLength(1);
    });

    it('creates a card without funding (amount 0): no ledger row', async () => {
      const [customer] = await h.db.query<{ id: string }>("SELECT id FROM customers WHERE email = 'card@example.com'");
      const res = await kit.createCard(customer.id, 0, { reference: 'app-card-zero-1' });
      expect(res.status).toBe(201);
      expect(res.body.reference).toBe('app-card-zero-1');
      expect(await kit.ledger(res.body.id)).toEqual([]);
      const taken = await kit.createCard(customer.id, 0, { reference: 'app-card-zero-1' });
      expect(taken.status).toBe(409);
    });

    it('provider refusal → 422 and the card and its funding failed; timeout → 504 and both unknown', async () => {
      const customerId = await kit.customer('cardfault@example.com');
      await kit.holder(customerId);
      await h.sim.setFault('createCard', { status: 400, times: 1 });
      const refused = await kit.createCard(customerId, 4000);
      expect(refused.status).toBe(422);
      expect(refused.body.code).toBe('provider_rejected');
      await h.sim.setFault('createCard', { timeout: true, times: 1 });
      const timedOut = await kit.createCard(customerId, 4100);
      expect(timedOut.status).toBe(504);
      const cards = await h.db.query<{ id: string; status: string; initial_amount: string; failure_reason: string }>(
        'SELECT id, status, initial_amount::text, failure_reason FROM cards WHERE customer_id = $1 ORDER BY created_at',
        [customerId],
      );
      expect(cards.map((c) => [c.initial_amount, c.status])).toEqual([
        ['4000', 'failed'],
        ['4100', 'unknown'],
      ]);
      expect(cards[0].failure_reason).toBeTruthy();
      expect((await kit.ledger(cards[0].id)).map((r) => r.status)).toEqual(['failed']);
      expect((await kit.ledger(cards[1].id)).map((r) => r.status)).toEqual(['unknown']);
    });
  });

  describe('GET /v1/cards and /v1/cards/{id}', () => {
    it('answers a card masked (last4, brand, expiry, status, balance) once created', async () => {
      const card = await kit.pendingCard('masked@example.com', 7000);
      const outcome = await kit.activate(card, '1111');
      expect(outcome).toMatchObject({ outcome: 'applied' });
      const got = await h.http().get(`/v1/cards/${card.id}`).set(auth());
      expect(got.status).toBe(200);
      expect(got.body).toMatchObject({
        status: 'active',
        createdStatus: 'success',
        last4: '1111',
        brand: 'visa',
        expiryMonth: 11,
        expiryYear: 2029,
        balance: 7000,
      });
      expect(Object.keys(got.body)).not.toEqual(expect.arrayContaining(['cardNumber']));
      expect(JSON.stringify(got.body)).not.toMatch(/cvv|cardNumber/i);
      const missing = await h.http().get(`/v1/cards/${randomUUID()}`).set(auth());
      expect(missing.status).toBe(404);
      const badId = await h.http().get('/v1/cards/not-a-uuid').set(auth());
      expect(badId.status).toBe(400);
    });

    it('lists cards newest first, filtered by customer and status, page by page', async () => {
      const [customer] = await h.db.query<{ id: string }>("SELECT id FROM customers WHERE email = 'card@example.com'");
      const mine = await h.http().get(`/v1/cards?customerId=${customer.id}`).set(auth());
      expect(mine.status).toBe(200);
      expect(mine.body.data.length).toBe(2);
      expect(mine.body.data.every((c: { customerId: string }) => c.customerId === customer.id)).toBe(true);
      const active = await h.http().get('/v1/cards?status=active').set(auth());
      expect(active.body.data.length).toBeGreaterThan(0);
      expect(active.body.data.every((c: { status: string }) => c.status === 'active')).toBe(true);
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: { body: { data: Array<{ id: string }>; nextCursor: string | null } } = await h
          .http()
          .get(`/v1/cards?limit=2${cursor ? `&cursor=${cursor}` : ''}`)
          .set(auth());
        expect(page.body.data.length).toBeLessThanOrEqual(2);
        seen.push(...page.body.data.map((c) => c.id));
        cursor = page.body.nextCursor;
      } while (cursor);
      const [{ count }] = await h.db.query<{ count: string }>('SELECT count(*)::text AS count FROM cards');
      expect(seen).toHaveLength(Number(count));
      expect(new Set(seen).size).toBe(seen.length);
      const bad = await h.http().get('/v1/cards?status=sleeping').set(auth());
      expect(bad.status).toBe(400);
    });

    it('needs the cards scopes', async () => {
      const readOnly = await h.key(['customers:read']);
      const res = await h
        .http()
        .get('/v1/cards')
        .set({ Authorization: `Bearer ${readOnly}` });
      expect(res.status).toBe(403);
      const reader = await h.key(['cards:read']);
      const write = await h
        .http()
        .post('/v1/card-holders')
        .set({ Authorization: `Bearer ${reader}` })
        .send({});
      expect(write.status).toBe(403);
    });
  });

  describe('freeze, unfreeze, terminate', () => {
    const act = (id: string, action: string) => h.http().post(`/v1/cards/${id}/${action}`).set(auth());
    const actionCalls = async () =>
      (await providerCalls('freezeCard')) +
      (await providerCalls('unfreezeCard')) +
      (await providerCalls('terminateCard'));

    it('refuses every move of a pending card with 409 invalid_state_transition, without calling the provider', async () => {
      const card = await kit.pendingCard('pendingmoves@example.com');
      const before = await actionCalls();
      for (const action of ['freeze', 'unfreeze', 'terminate']) {
        const res = await act(card.id, action);
        expect(res.status).toBe(409);
        expect(res.body.code).toBe('invalid_state_transition');
        expect(res.body.from).toBe('pending');
      }
      expect(await actionCalls()).toBe(before);
    });

    it('active ↔ frozen, then terminated; refused moves answer 409 without a provider call; answers carry no card number', async () => {
      const card = await kit.activeCard('moves@example.com');
      let before = await actionCalls();
      const unfreezeActive = await act(card.id, 'unfreeze');
      expect(unfreezeActive.status).toBe(409);
      expect(unfreezeActive.body).toMatchObject({ code: 'invalid_state_transition', from: 'active', to: 'active' });
      expect(await actionCalls()).toBe(before);

      const frozen = await act(card.id, 'freeze');
      expect(frozen.status).toBe(200);
      expect(frozen.body).toMatchObject({ id: card.id, status: 'frozen', last4: expect.stringMatching(/^\d{4}$/) });
      expect(JSON.stringify(frozen.body)).not.toMatch(/cvv|cardNumber/i);
      expect(frozen.body.nameOnCard).toBe('ADA OBI');
      // The provider's answer has the full number; the gateway's last4 is its tail.
      const secrets = await h.sim.admin('GET', '/cards/secrets');
      const secret = secrets.body.find((s: { id: string }) => s.id === card.providerId);
      expect(secret.cardNumber.endsWith(frozen.body.last4)).toBe(true);
      expect(JSON.stringify(frozen.body)).not.toContain(secret.cardNumber);
      expect(JSON.stringify(frozen.body)).not.toContain(`"${secret.cvv2}"`);

      before = await actionCalls();
      const freezeAgain = await act(card.id, 'freeze');
      expect(freezeAgain.status).toBe(409);
      expect(freezeAgain.body.from).toBe('frozen');
      expect(await actionCalls()).toBe(before);

      const active = await act(card.id, 'unfreeze');
      expect(active.status).toBe(200);
      expect(active.body.status).toBe('active');
      expect((await act(card.id, 'freeze')).body.status).toBe('frozen');

      const terminated = await act(card.id, 'terminate');
      expect(terminated.status).toBe(200);
      expect(terminated.body.status).toBe('terminated');

      before = await actionCalls();
      for (const action of ['freeze', 'unfreeze', 'terminate']) {
        const res = await act(card.id, action);
        expect(res.status).toBe(409);
        expect(res.body).toMatchObject({ code: 'invalid_state_transition', from: 'terminated' });
      }
      expect(await actionCalls()).toBe(before);
    });

    it('terminates an active card directly; a provider failure leaves the card unchanged', async () => {
      const card = await kit.activeCard('terminate@example.com');
      await h.sim.setFault('terminateCard', { status: 503, times: 1 });
      const failed = await act(card.id, 'terminate');
      expect(failed.status).toBe(502);
      expect((await h.http().get(`/v1/cards/${card.id}`).set(auth())).body.status).toBe('active');
      const done = await act(card.id, 'terminate');
      expect(done.status).toBe(200);
      expect(done.body.status).toBe('terminated');
    });
  });

  describe('top-ups and withdrawals', () => {
    let card: any;
    const topUp = (amount: number, idempotencyKey: string = randomUUID(), id = card.id) =>
      h.http().post(`/v1/cards/${id}/top-ups`).set(auth()).set('Idempotency-Key', idempotencyKey).send({ amount });
    const withdraw = (amount: number, id = card.id) =>
      h.http().post(`/v1/cards/${id}/withdrawals`).set(auth()).set('Idempotency-Key', randomUUID()).send({ amount });

    beforeAll(async () => {
      card = await kit.activeCard('money@example.com', 10_000);
    });

    it('enforces the top-up bounds 3.00–2,500.00 USD locally (400), without calling the provider', async () => {
      const before = await providerCalls('topUpCard');
      for (const amount of [1, 299, 250_001]) {
        const res = await topUp(amount);
        expect(res.status).toBe(400);
        expect(res.body.code).toBe('validation_failed');
        expect(res.body.errors[0].field).toBe('amount');
      }
      const fraction = await topUp(300.5);
      expect(fraction.status).toBe(400);
      expect(await providerCalls('topUpCard')).toBe(before);
      expect((await kit.ledger(card.id)).filter((r) => r.kind === 'card_topup')).toHaveLength(1); // the funding
    });

    it('claims the Idempotency-Key in the write-ahead statement: a refusal is the key’s answer, one of two racing requests moves money', async () => {
      const missing = randomUUID();
      const key = randomUUID();
      const absent = await topUp(500, key, missing);
      expect(absent.status).toBe(404);
      expect(absent.headers['idempotent-replayed']).toBeUndefined();
      // The 404 is kept as the key's answer, and replayed as one.
      expect(await h.db.query('SELECT state, response_status FROM idempotency_records WHERE key = $1', [key])).toEqual([
        { state: 'completed', response_status: 404 },
      ]);
      const again = await topUp(500, key, missing);
      expect(again.status).toBe(404);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toEqual({ ...absent.body, requestId: again.body.requestId });

      // A card of its own: the tests below count this card's movements.
      const own = await kit.activeCard('raced-top-ups@example.com', 10_000);
      const raced = randomUUID();
      const [a, b] = await Promise.all([topUp(700, raced, own.id), topUp(700, raced, own.id)]);
      expect([a.status, b.status]).toContain(201);
      const rows = await h.db.query(
        "SELECT reference FROM transactions WHERE kind = 'card_topup' AND card_id = $1 AND amount = 700",
        [own.id],
      );
      expect(rows).toHaveLength(1);
      expect((await h.sim.calls('topUpCard')).filter((c) => c.body.reference === rows[0].reference)).toHaveLength(1);
      for (const r of [a, b].filter((r) => r.status !== 201)) expect(r.body.code).toBe('request_in_progress');
    });

    it('tops up at the bounds: ledger rows pending, sent in cents with the ledger reference; replays by key', async () => {
      const idempotencyKey = randomUUID();
      const low = await topUp(300, idempotencyKey);
      expect(low.status).toBe(201);
      expect(low.body).toMatchObject({
        cardId: card.id,
        kind: 'card_topup',
        direction: 'credit',
        status: 'pending',
        amount: 300,
        currency: 'USD',
      });
      expect(low.body.providerId).toEqual(expect.any(String));
      const call = (await h.sim.calls('topUpCard')).at(-1);
      expect(call?.body).toMatchObject({ amount: 300, cardId: card.providerId, reference: low.body.reference });
      const replay = await topUp(300, idempotencyKey);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toEqual(low.body);
      expect((await h.sim.calls('topUpCard')).filter((c) => c.body.reference === low.body.reference)).toHaveLength(1);
      const high = await topUp(250_000);
      expect(high.status).toBe(201);
      expect(high.body.status).toBe('pending');
      // Pending movements do not change the balance.
      expect(await kit.balance(card.id)).toBe(10_000);
    });

    it('withdraws: ledger row pending (debit)', async () => {
      const res = await withdraw(2500);
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ kind: 'card_withdrawal', direction: 'debit', status: 'pending', amount: 2500 });
    });

    it("refuses a withdrawal beyond the provider's int32 (400 on amount), without a ledger row or a provider call", async () => {
      // docs/provider.md#cards: amount (int32), in cents (the unit table).
      const before = await providerCalls('withdrawFromCard');
      const rowsBefore = (await kit.ledger(card.id)).length;
      const res = await withdraw(2_147_483_648);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({
        code: 'validation_failed',
        errors: [{ field: 'amount', message: expect.stringContaining('at most 2147483647 minor units of USD') }],
      });
      expect(await providerCalls('withdrawFromCard')).toBe(before);
      expect(await kit.ledger(card.id)).toHaveLength(rowsBefore);
    });

    it('provider refusal → 422 and the row failed; timeout → 504 and the row unknown', async () => {
      await h.sim.setFault('topUpCard', { status: 400, times: 1 });
      const refused = await topUp(1000);
      expect(refused.status).toBe(422);
      await h.sim.setFault('withdrawFromCard', { timeout: true, times: 1 });
      const timedOut = await withdraw(1000);
      expect(timedOut.status).toBe(504);
      const rows = await kit.ledger(card.id);
      expect(rows.filter((r) => r.amount === '1000').map((r) => [r.kind, r.status])).toEqual([
        ['card_topup', 'failed'],
        ['card_withdrawal', 'unknown'],
      ]);
    });

    it('a frozen or terminated card refuses money moves with 409, without calling the provider', async () => {
      const other = await kit.activeCard('frozenmoney@example.com');
      expect((await h.http().post(`/v1/cards/${other.id}/freeze`).set(auth())).status).toBe(200);
      const before = (await providerCalls('topUpCard')) + (await providerCalls('withdrawFromCard'));
      const frozenTopUp = await topUp(1000, randomUUID(), other.id);
      expect(frozenTopUp.status).toBe(409);
      expect(frozenTopUp.body.cardStatus).toBe('frozen');
      expect((await withdraw(1000, other.id)).status).toBe(409);
      expect((await h.http().post(`/v1/cards/${other.id}/terminate`).set(auth())).status).toBe(200);
      const terminatedTopUp = await topUp(1000, randomUUID(), other.id);
      expect(terminatedTopUp.status).toBe(409);
      expect(terminatedTopUp.body.cardStatus).toBe('terminated');
      expect((await withdraw(1000, other.id)).status).toBe(409);
      const pending = await kit.pendingCard('pendingmoney@example.com');
      expect((await topUp(1000, randomUUID(), pending.id)).status).toBe(409);
      expect((await providerCalls('topUpCard')) + (await providerCalls('withdrawFromCard'))).toBe(before);
      expect(
        (await kit.ledger(other.id)).filter((r) => r.kind !== 'card_topup' || r.reference !== other.reference),
      ).toEqual([]);
    });

    it('GET /transactions syncs from the provider: settles pending rows, imports spends, twice without duplicates', async () => {
      // The provider settles its pending top-ups and withdrawals; a spend happens at the merchant.
      await h.sim.admin('POST', '/flush');
      const spend = await h.sim.admin('POST', `/cards/${card.providerId}/spend`, { amount: 1234, narrative: 'Coffee' });
      expect(spend.status).toBeLessThan(300);

      const first = await h.http().get(`/v1/cards/${card.id}/transactions?limit=100`).set(auth());
      expect(first.status).toBe(200);
      const byKind = (kind: string) => first.body.data.filter((t: { kind: string }) => t.kind === kind);
      expect(byKind('card_spend')).toEqual([
        expect.objectContaining({ direction: 'debit', status: 'success', amount: 1234, narrative: 'Coffee' }),
      ]);
      const settled = first.body.data.filter((t: { status: string }) => t.status === 'success');
      expect(settled.map((t: { amount: number }) => t.amount).sort((a: number, b: number) => a - b)).toEqual([
        300, 1234, 2500, 10_000, 250_000,
      ]);
      const pendingTopUp = first.body.data.find((t: { amount: number }) => t.amount === 300);
      expect((await kit.history(pendingTopUp.id)).at(-1)).toEqual({
        from: 'pending',
        to: 'success',
        source: 'reconciliation',
      });
      // funding 10000 + 300 + 250000 − 2500 − 1234
      expect(await kit.balance(card.id)).toBe(10_000 + 300 + 250_000 - 2500 - 1234);

      const countRows = async () =>
        (
          await h.db.query<{ n: string }>('SELECT count(*)::text AS n FROM transactions WHERE card_id = $1', [card.id])
        )[0].n;
      const rowsAfterFirst = await countRows();
      const second = await h.http().get(`/v1/cards/${card.id}/transactions?limit=100`).set(auth());
      expect(second.status).toBe(200);
      expect(await countRows()).toBe(rowsAfterFirst);
      expect(second.body.data.map((t: { id: string; status: string }) => `${t.id}:${t.status}`)).toEqual(
        first.body.data.map((t: { id: string; status: string }) => `${t.id}:${t.status}`),
      );
      expect(await kit.balance(card.id)).toBe(10_000 + 300 + 250_000 - 2500 - 1234);
      const listings = (await h.sim.calls('listCardTransactions')).filter((c) => c.path.includes(card.providerId));
      expect(listings.length).toBeGreaterThanOrEqual(2);
      expect(listings[0].path).toMatch(/order=DESC/);
      expect(listings[0].path).toMatch(/take=100/);
    });

    it('pages through the transactions with a cursor (later pages read local rows only)', async () => {
      const listingsBefore = await providerCalls('listCardTransactions');
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const res: { status: number; body: { data: Array<{ id: string }>; nextCursor: string | null } } = await h
          .http()
          .get(`/v1/cards/${card.id}/transactions?limit=2${cursor ? `&cursor=${cursor}` : ''}`)
          .set(auth());
        expect(res.status).toBe(200);
        expect(res.body.data.length).toBeLessThanOrEqual(2);
        seen.push(...res.body.data.map((t) => t.id));
        cursor = res.body.nextCursor;
        pages += 1;
      } while (cursor);
      const all = await kit.ledger(card.id);
      expect(new Set(seen)).toEqual(new Set(all.map((r) => r.id)));
      expect(seen).toHaveLength(all.length);
      expect(pages).toBe(Math.ceil(all.length / 2));
      // Only the first page refreshed from the provider.
      expect(await providerCalls('listCardTransactions')).toBe(listingsBefore + 1);
      const local = await h.http().get(`/v1/cards/${card.id}/transactions?refresh=false`).set(auth());
      expect(local.status).toBe(200);
      expect(await providerCalls('listCardTransactions')).toBe(listingsBefore + 1);
      const badCursor = await h.http().get(`/v1/cards/${card.id}/transactions?cursor=nope`).set(auth());
      expect(badCursor.status).toBe(400);
    });

    it('a provider failure during the refresh answers 502; refresh=false still reads the local rows', async () => {
      await h.sim.setFault('listCardTransactions', { status: 503, times: 10 });
      const failed = await h.http().get(`/v1/cards/${card.id}/transactions`).set(auth());
      expect(failed.status).toBe(502);
      const local = await h.http().get(`/v1/cards/${card.id}/transactions?refresh=false`).set(auth());
      expect(local.status).toBe(200);
      expect(local.body.data.length).toBeGreaterThan(0);
      await h.sim.admin('DELETE', '/faults');
    });
  });
});
