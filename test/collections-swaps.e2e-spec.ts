import { randomUUID } from 'node:crypto';
import { QUOTE_BEYOND_SAFE_MESSAGE } from '../src/swaps/swaps.service';
import { type Harness, startHarness } from './support/harness';

const customerBody = (email: string) => ({
  email,
  firstName: 'Ada',
  lastName: 'Obi',
  phone: '8012345678',
  countryCode: '234',
});
const newKey = () => `idem-${randomUUID()}`;

describe('collections, swaps and virtual accounts (e2e: gateway + simulator + PostgreSQL)', () => {
  let h: Harness;
  let key: string;
  let customerId: string;
  let otherCustomerId: string;
  const auth = () => ({ Authorization: `Bearer ${key}` });

  beforeAll(async () => {
    h = await startHarness();
    key = await h.key();
    const a = await h.http().post('/v1/customers').set(auth()).send(customerBody('ada@example.com'));
    const b = await h.http().post('/v1/customers').set(auth()).send(customerBody('bola@example.com'));
    expect([a.status, b.status]).toEqual([201, 201]);
    customerId = a.body.id;
    otherCustomerId = b.body.id;
  });
  afterAll(() => h.close());
  beforeEach(async () => {
    await h.sim.admin('DELETE', '/faults');
  });

  describe('collections', () => {
    const collectionBody = (extra: Record<string, unknown> = {}) => ({
      customerId,
      country: 'NG',
      currency: 'NGN',
      amount: 6_500_000, // 65,000.00 NGN
      description: 'Order 1042',
      payer: { type: 'wema', accountName: 'Ada Obi' },
      ...extra,
    });
    const postCollection = (body: Record<string, unknown>, idem: string) =>
      h.http().post('/v1/collections').set(auth()).set('Idempotency-Key', idem).send(body);
    let collection: Record<string, any>;
    const firstKey = newKey();

    it('creates a collection: 201 processing with the account detail, fee and expiry', async () => {
      const startedAt = Date.now();
      const res = await postCollection(collectionBody(), firstKey);
      expect(res.status).toBe(201);
      collection = res.body;
      expect(collection).toMatchObject({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        transactionId: expect.stringMatching(/^[0-9a-f-]{36}$/),
        status: 'processing',
        customerId,
        country: 'NG',
        amount: 6_500_000,
        currency: 'NGN',
        fee: 97_500, // 1.5%
        accountNumber: expect.stringMatching(/^\d{10}$/),
        accountName: 'Ada Obi',
        bankName: 'wema',
        description: 'Order 1042',
        reference: expect.stringMatching(/^wg-collection-/),
        providerId: expect.any(String),
        failureReason: null,
      });
      // The simulator issues account details valid for 7200 s.
      const expiresAt = Date.parse(collection.expiresAt);
      expect(expiresAt).toBeGreaterThan(startedAt + 7_000_000);
      expect(expiresAt).toBeLessThan(Date.now() + 7_300_000);

      const [row] = await h.db.query('SELECT * FROM transactions WHERE id = $1', [collection.transactionId]);
      expect(row).toMatchObject({
        kind: 'collection',
        direction: 'credit',
        status: 'processing',
        amount: '6500000',
        fee: '97500',
        currency: 'NGN',
        provider_id: collection.providerId,
      });
      const changes = await h.db.query(
        'SELECT "from", "to", source FROM transaction_status_changes WHERE transaction_id = $1 ORDER BY id',
        [collection.transactionId],
      );
      expect(changes).toEqual([
        { from: null, to: 'created', source: 'api' },
        { from: 'created', to: 'processing', source: 'api' },
      ]);
      const calls = await h.sim.calls('initializeCollection');
      expect(calls).toHaveLength(1);
      expect(calls[0].body).toMatchObject({
        amount: 6_500_000,
        currency: 'NGN',
        country: 'NG',
        customerEmail: 'ada@example.com',
        reference: collection.reference,
        payload: { type: 'wema', accountName: 'Ada Obi' },
      });
    });

    it('replays the same key and body without a second provider call', async () => {
      const res = await postCollection(collectionBody(), firstKey);
      expect(res.status).toBe(201);
      expect(res.headers['idempotent-replayed']).toBe('true');
      expect(res.body).toEqual(collection);
      expect(await h.sim.calls('initializeCollection')).toHaveLength(1);
      expect(await h.db.query("SELECT id FROM transactions WHERE kind = 'collection'")).toHaveLength(1);
    });

    it('gets it', async () => {
      const res = await h.http().get(`/v1/collections/${collection.id}`).set(auth());
      expect(res.status).toBe(200);
      expect(res.body).toEqual(collection);
    });

    it('lists, filtered by customer and by status', async () => {
      const other = await postCollection(collectionBody({ customerId: otherCustomerId, amount: 10_000 }), newKey());
      expect(other.status).toBe(201);
      // A collection the provider refuses ends `failed`.
      await h.sim.setFault('initializeCollection', { status: 400, times: 1 });
      const refused = await postCollection(collectionBody({ amount: 20_000 }), newKey());
      expect(refused.status).toBe(422);

      const mine = await h.http().get(`/v1/collections?customerId=${customerId}`).set(auth());
      expect(mine.status).toBe(200);
      expect(mine.body.data.map((c: { amount: number }) => c.amount)).toEqual([20_000, 6_500_000]);
      expect(mine.body.data.every((c: { customerId: string }) => c.customerId === customerId)).toBe(true);

      const processing = await h.http().get(`/v1/collections?customerId=${customerId}&status=processing`).set(auth());
      expect(processing.body).toEqual({ data: [collection], nextCursor: null });
      const failed = await h.http().get('/v1/collections?status=failed').set(auth());
      expect(failed.body.data).toEqual([expect.objectContaining({ amount: 20_000, status: 'failed', customerId })]);
      const all = await h.http().get('/v1/collections?status=processing').set(auth());
      expect(all.body.data.map((c: { id: string }) => c.id)).toEqual([other.body.id, collection.id]);

      const bad = await h.http().get('/v1/collections?status=nope').set(auth());
      expect(bad.status).toBe(400);
    });

    it('refuses an amount below the NG minimum with 422 business_rule_failed and calls nothing', async () => {
      const before = (await h.sim.calls('initializeCollection')).length;
      const rowsBefore = (await h.db.query("SELECT id FROM transactions WHERE kind = 'collection'")).length;
      // Valid by the body's schema (a per-country bound is stated in words): a business rule, not bad input.
      const res = await postCollection(collectionBody({ amount: 9_999 }), newKey()); // 99.99 NGN < 100 NGN
      expect(res.status).toBe(422);
      expect(res.body.code).toBe('business_rule_failed');
      expect(res.body.errors).toEqual([expect.objectContaining({ field: 'amount' })]);
      expect(await h.sim.calls('initializeCollection')).toHaveLength(before);
      expect(await h.db.query("SELECT id FROM transactions WHERE kind = 'collection'")).toHaveLength(rowsBefore);
    });
  });

  describe('swaps', () => {
    const quote = async (amount = 10_000) => {
      const res = await h
        .http()
        .post('/v1/swap-quotes')
        .set(auth())
        .send({ sourceCurrency: 'usd', targetCurrency: 'NGN', amount });
      expect(res.status).toBe(201);
      return res.body;
    };
    const execute = (quoteId: string, idem = newKey()) =>
      h.http().post('/v1/swaps').set(auth()).set('Idempotency-Key', idem).send({ quoteId });
    let q: Record<string, any>;
    let swap: Record<string, any>;

    it('quotes USD → NGN in minor units', async () => {
      q = await quote();
      expect(q).toMatchObject({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        status: 'open',
        sourceCurrency: 'USD',
        targetCurrency: 'NGN',
        sourceAmount: 10_000,
        targetAmount: 15_000_000, // 100.00 USD × 1500
        fee: 50, // 0.5%
        transactionId: null,
        executedAt: null,
      });
      expect(Number(q.rate)).toBe(1500);
      expect(Date.parse(q.expiresAt)).toBeGreaterThan(Date.now() + 200_000);
      expect(await h.sim.calls('initializeSwap')).toHaveLength(1);
    });

    it('refuses (422 on amount, nothing stored) a quote whose target amount is beyond 2^53 - 1 minor units', async () => {
      const quotes = async () => Number((await h.db.query('SELECT count(*) AS n FROM swap_quotes'))[0].n);
      const before = await quotes();
      // 2^53 - 1 US cents at 1,500 NGN per USD: about 1.35e19 kobo, beyond a JSON number and a bigint.
      const res = await h
        .http()
        .post('/v1/swap-quotes')
        .set(auth())
        .send({ sourceCurrency: 'USD', targetCurrency: 'NGN', amount: Number.MAX_SAFE_INTEGER });
      // The amount is within the body's bounds; the provider's rate makes it unanswerable: a business rule.
      expect(res.status).toBe(422);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({
        code: 'business_rule_failed',
        errors: [{ field: 'amount', message: QUOTE_BEYOND_SAFE_MESSAGE }],
      });
      expect(await quotes()).toBe(before);
    });

    it('executes the quote: ledger row kind swap, status success, with the counter currency and amount', async () => {
      const res = await execute(q.id);
      expect(res.status).toBe(201);
      swap = res.body;
      expect(swap).toMatchObject({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        status: 'success',
        quoteId: q.id,
        sourceCurrency: 'USD',
        targetCurrency: 'NGN',
        sourceAmount: 10_000,
        targetAmount: 15_000_000,
        fee: 50,
        providerId: expect.any(String),
      });
      const [row] = await h.db.query('SELECT * FROM transactions WHERE id = $1', [swap.id]);
      expect(row).toMatchObject({
        kind: 'swap',
        direction: 'debit',
        status: 'success',
        amount: '10000',
        currency: 'USD',
        counter_amount: '15000000',
        counter_currency: 'NGN',
        fee: '50',
        completed_at: expect.any(Date),
      });
      expect(
        (
          await h.db.query('SELECT "to" FROM transaction_status_changes WHERE transaction_id = $1 ORDER BY id', [
            swap.id,
          ])
        ).map((c) => c.to),
      ).toEqual(['created', 'success']);
      const calls = await h.sim.calls('finalizeSwap');
      expect(calls).toHaveLength(1);
      expect(calls[0].body).toMatchObject({ quoteId: q.providerId });
      const after = await h.http().get(`/v1/swap-quotes/${q.id}`).set(auth());
      expect(after.body).toMatchObject({ status: 'executed', transactionId: swap.id, executedAt: expect.any(String) });
      const got = await h.http().get(`/v1/swaps/${swap.id}`).set(auth());
      expect(got.status).toBe(200);
      expect(got.body).toEqual(swap);
    });

    it('refuses to execute the same quote again (another key) with 409; finalizeSwap called once', async () => {
      const res = await execute(q.id);
      expect(res.status).toBe(409);
      expect(res.body.code).toBe('invalid_state_transition');
      expect(await h.sim.calls('finalizeSwap')).toHaveLength(1);
      expect(await h.db.query("SELECT id FROM transactions WHERE kind = 'swap'")).toHaveLength(1);
    });

    it('replays an execution with the same key and body', async () => {
      const fresh = await quote(20_000);
      const idem = newKey();
      const first = await execute(fresh.id, idem);
      expect(first.status).toBe(201);
      const again = await execute(fresh.id, idem);
      expect(again.status).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toEqual(first.body);
      expect(await h.sim.calls('finalizeSwap')).toHaveLength(2);
    });

    it('claims the Idempotency-Key in the write-ahead statement: an unknown quote’s 404 is the key’s answer; two racing requests execute once', async () => {
      const idem = newKey();
      const unknown = '00000000-0000-4000-8000-000000000000';
      const absent = await execute(unknown, idem);
      expect(absent.status).toBe(404);
      expect(absent.headers['idempotent-replayed']).toBeUndefined();
      // Kept as the key's answer, and replayed as one.
      expect(await h.db.query('SELECT state, response_status FROM idempotency_records WHERE key = $1', [idem])).toEqual(
        [{ state: 'completed', response_status: 404 }],
      );
      const again = await execute(unknown, idem);
      expect(again.status).toBe(404);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toEqual({ ...absent.body, requestId: again.body.requestId });

      const fresh = await quote(30_000);
      const before = (await h.sim.calls('finalizeSwap')).length;
      const raced = newKey();
      const [a, b] = await Promise.all([execute(fresh.id, raced), execute(fresh.id, raced)]);
      expect([a.status, b.status]).toContain(201);
      for (const r of [a, b].filter((r) => r.status !== 201)) expect(r.body.code).toBe('request_in_progress');
      expect(await h.sim.calls('finalizeSwap')).toHaveLength(before + 1);
    });
  });

  describe('swaps with a quote that expires', () => {
    // Its own simulator quoting for 1 s: the gateway takes the earlier of the provider's
    // expiration and request time + expirationInSec, and refuses once that has passed.
    let short: Harness;
    let shortKey: string;
    beforeAll(async () => {
      short = await startHarness({ simulator: { quoteTtlSeconds: 1 } });
      shortKey = await short.key();
    });
    afterAll(() => short?.close());

    it('answers 422 quote_expired without calling finalizeSwap', async () => {
      const quoted = await short
        .http()
        .post('/v1/swap-quotes')
        .set('Authorization', `Bearer ${shortKey}`)
        .send({ sourceCurrency: 'USD', targetCurrency: 'KES', amount: 10_000 });
      expect(quoted.status).toBe(201);
      const receivedAt = Date.now();
      expect(Date.parse(quoted.body.expiresAt)).toBeLessThanOrEqual(receivedAt + 1_000);
      await new Promise((r) => setTimeout(r, 1_300));
      const res = await short
        .http()
        .post('/v1/swaps')
        .set('Authorization', `Bearer ${shortKey}`)
        .set('Idempotency-Key', newKey())
        .send({ quoteId: quoted.body.id });
      expect(res.status).toBe(422);
      expect(res.body.code).toBe('quote_expired');
      expect(await short.sim.calls('finalizeSwap')).toHaveLength(0);
      expect(await short.db.query("SELECT id FROM transactions WHERE kind = 'swap'")).toHaveLength(0);
      const got = await short
        .http()
        .get(`/v1/swap-quotes/${quoted.body.id}`)
        .set('Authorization', `Bearer ${shortKey}`);
      expect(got.body.status).toBe('expired');
    });
  });

  describe('virtual accounts', () => {
    const vaBody = (extra: Record<string, unknown> = {}) => ({
      customerId,
      bank: 'safehaven',
      bvn: '22123456789',
      phoneNumber: '08012345678',
      ...extra,
    });
    let account: Record<string, any>;

    it('issues a safehaven account at the provider and stores it', async () => {
      const res = await h.http().post('/v1/virtual-accounts').set(auth()).send(vaBody());
      expect(res.status).toBe(201);
      account = res.body;
      expect(account).toMatchObject({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        providerId: expect.any(String),
        customerId,
        bank: 'safehaven',
        bankName: 'Safe Haven MFB',
        accountName: 'Ada Obi',
        accountNumber: expect.stringMatching(/^\d{10}$/),
        status: 'active',
        reference: expect.stringMatching(/^wg-virtual-account-/),
      });
      const rows = await h.db.query('SELECT * FROM virtual_accounts WHERE id = $1', [account.id]);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        customer_id: customerId,
        provider_id: account.providerId,
        account_number: account.accountNumber,
      });
      const calls = await h.sim.calls('createVirtualAccount');
      expect(calls).toHaveLength(1);
      expect(calls[0].body).toMatchObject({
        bank: 'safehaven',
        bvn: '22123456789',
        customerEmail: 'ada@example.com',
        firstName: 'Ada',
        lastName: 'Obi',
        reference: account.reference,
      });
    });

    it('refuses providus without dateOfBirth with 400 and calls nothing', async () => {
      const res = await h
        .http()
        .post('/v1/virtual-accounts')
        .set(auth())
        .send(vaBody({ bank: 'providus' }));
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.errors).toEqual([expect.objectContaining({ field: 'dateOfBirth' })]);
      expect(await h.sim.calls('createVirtualAccount')).toHaveLength(1);
      expect(await h.db.query('SELECT id FROM virtual_accounts')).toHaveLength(1);
    });

    it('lists by customer', async () => {
      const other = await h
        .http()
        .post('/v1/virtual-accounts')
        .set(auth())
        .send(vaBody({ customerId: otherCustomerId, bank: 'providus', dateOfBirth: '1990-04-01' }));
      expect(other.status).toBe(201);
      expect(other.body).toMatchObject({ bank: 'providus', bankName: 'Providus Bank', customerId: otherCustomerId });
      const mine = await h.http().get(`/v1/virtual-accounts?customerId=${customerId}`).set(auth());
      expect(mine.status).toBe(200);
      expect(mine.body).toEqual({ data: [account], nextCursor: null });
      const theirs = await h.http().get(`/v1/virtual-accounts?customerId=${otherCustomerId}`).set(auth());
      expect(theirs.body.data.map((a: { id: string }) => a.id)).toEqual([other.body.id]);
    });
  });
});
