import { randomUUID } from 'node:crypto';
import { type Harness, startHarness } from './support/harness';

const customerBody = (email: string) => ({
  email,
  firstName: 'Jane',
  lastName: 'Doe',
  phone: '712345678',
  countryCode: '254',
});
/** A Kenyan M-Pesa destination as the provider documents KE (type, network MPESA, ^2547[\d]{8}$, no accountName). */
const mpesa = { type: 'MOBILEMONEY', network: 'MPESA', accountNumber: '254712345678' };

describe('beneficiaries and payouts (e2e: gateway + simulator + PostgreSQL)', () => {
  let h: Harness;
  let key: string;
  let customerId: string;
  let otherCustomerId: string;
  let beneficiaryId: string;
  const auth = () => ({ Authorization: `Bearer ${key}` });
  const newKey = () => `idem-${randomUUID()}`;

  const ledgerRow = async (id: string) => (await h.db.query('SELECT * FROM transactions WHERE id = $1', [id]))[0];
  const history = async (id: string) =>
    h.db.query('SELECT "from", "to", source FROM transaction_status_changes WHERE transaction_id = $1 ORDER BY id', [
      id,
    ]);
  const payoutRowCount = async () =>
    Number((await h.db.query("SELECT count(*)::int AS n FROM transactions WHERE kind = 'payout'"))[0].n);
  const postPayout = (body: Record<string, unknown>, idemKey?: string) => {
    const req = h.http().post('/v1/payouts').set(auth());
    if (idemKey !== undefined) req.set('Idempotency-Key', idemKey);
    return req.send(body);
  };
  const payoutBody = (extra: Record<string, unknown> = {}) => ({
    customerId,
    beneficiaryId,
    amount: 150000,
    description: 'Invoice 42',
    ...extra,
  });

  beforeAll(async () => {
    h = await startHarness();
    key = await h.key();
    for (const [email, assign] of [
      ['jane@example.com', (id: string) => (customerId = id)],
      ['other@example.com', (id: string) => (otherCustomerId = id)],
    ] as const) {
      const res = await h.http().post('/v1/customers').set(auth()).send(customerBody(email));
      expect(res.status).toBe(201);
      assign(res.body.id);
    }
  });
  afterAll(() => h.close());
  beforeEach(async () => {
    await h.sim.admin('DELETE', '/faults');
  });

  describe('payout countries', () => {
    it('answers the KE destination descriptors the provider documents', async () => {
      const res = await h.http().get('/v1/payout-countries/ke').set(auth());
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ code: 'KE', name: 'Kenya', dialCode: '+254' });
      expect(res.body.destinations).toEqual({
        MOBILEMONEY: [
          { name: 'type', type: 'string', required: true, const: 'MOBILEMONEY' },
          { name: 'network', type: 'string', required: true, enum: ['MPESA'] },
          { name: 'accountNumber', type: 'string', required: true, pattern: '^2547[\\d]{8}$' },
        ],
      });
    });

    it('answers 404 for a country the provider does not serve', async () => {
      const res = await h.http().get('/v1/payout-countries/US').set(auth());
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('not_found');
    });

    it('answers 400 for a code that is not an ISO 3166-1 alpha-2 country, without asking the provider', async () => {
      const before = (await h.sim.calls('getSupportedCountry')).length;
      const res = await h.http().get('/v1/payout-countries/ZZ').set(auth());
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([expect.objectContaining({ field: 'country' })]);
      expect(await h.sim.calls('getSupportedCountry')).toHaveLength(before);
    });
  });

  describe('beneficiaries', () => {
    it('registers a KE mobile-money beneficiary at the provider and stores it', async () => {
      const res = await h
        .http()
        .post('/v1/beneficiaries')
        .set(auth())
        .send({ customerId, country: 'KE', currency: 'KES', destination: mpesa });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        providerId: expect.any(String),
        customerId,
        country: 'KE',
        currency: 'KES',
        type: 'MOBILEMONEY',
        destination: mpesa,
        status: 'success',
        reference: expect.stringMatching(/^wg-beneficiary-/),
      });
      beneficiaryId = res.body.id;
      const rows = await h.db.query('SELECT * FROM beneficiaries WHERE id = $1', [beneficiaryId]);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        customer_id: customerId,
        provider_id: res.body.providerId,
        country: 'KE',
        currency: 'KES',
        type: 'MOBILEMONEY',
      });
      expect(rows[0].destination).toEqual(mpesa);
      const calls = await h.sim.calls('createBeneficiary');
      expect(calls).toHaveLength(1);
      expect(calls[0].body).toMatchObject({
        country: 'KE',
        currency: 'KES',
        customerEmail: 'jane@example.com',
        reference: res.body.reference,
        destination: mpesa,
        callbackUrl: expect.stringMatching(/\/webhooks\/provider$/),
      });
    });

    it.each([
      ['a missing required field', { type: 'MOBILEMONEY', network: 'MPESA' }, 'destination.accountNumber'],
      ['a field KE does not describe (accountName)', { ...mpesa, accountName: 'Jane Doe' }, 'destination.accountName'],
      [
        'an account number not matching the KE pattern',
        { ...mpesa, accountNumber: '0712345678' },
        'destination.accountNumber',
      ],
      ['a network outside the enum', { ...mpesa, network: 'MTN' }, 'destination.network'],
    ])(
      'answers 422 business_rule_failed for %s (the country’s fields are the provider’s data), naming the field, without calling createBeneficiary',
      async (_label, destination, field) => {
        const before = (await h.sim.calls('createBeneficiary')).length;
        const rowsBefore = (await h.db.query('SELECT id FROM beneficiaries')).length;
        const res = await h
          .http()
          .post('/v1/beneficiaries')
          .set(auth())
          .send({ customerId, country: 'KE', currency: 'KES', destination });
        expect(res.status).toBe(422);
        expect(res.body.code).toBe('business_rule_failed');
        expect(res.body.errors).toEqual([expect.objectContaining({ field })]);
        expect(await h.sim.calls('createBeneficiary')).toHaveLength(before);
        expect(await h.db.query('SELECT id FROM beneficiaries')).toHaveLength(rowsBefore);
      },
    );

    it('lists beneficiaries by customer', async () => {
      const other = await h
        .http()
        .post('/v1/beneficiaries')
        .set(auth())
        .send({
          customerId: otherCustomerId,
          country: 'KE',
          currency: 'KES',
          destination: { ...mpesa, accountNumber: '254799999999' },
        });
      expect(other.status).toBe(201);
      const mine = await h.http().get(`/v1/beneficiaries?customerId=${customerId}`).set(auth());
      expect(mine.status).toBe(200);
      expect(mine.body).toEqual({
        data: [expect.objectContaining({ id: beneficiaryId, customerId })],
        nextCursor: null,
      });
      const theirs = await h.http().get(`/v1/beneficiaries?customerId=${otherCustomerId}`).set(auth());
      expect(theirs.body.data.map((b: { id: string }) => b.id)).toEqual([other.body.id]);
    });
  });

  describe('payouts', () => {
    let payout: Record<string, any>;
    const firstKey = `idem-${randomUUID()}`;

    it('creates a payout: 201 initiated with fee and rate, ledger row and status history', async () => {
      await h.sim.admin('DELETE', '/calls');
      const res = await postPayout(payoutBody(), firstKey);
      expect(res.status).toBe(201);
      expect(res.headers['idempotent-replayed']).toBeUndefined();
      payout = res.body;
      expect(payout).toMatchObject({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        status: 'initiated',
        customerId,
        beneficiaryId,
        amount: 150000,
        currency: 'USD',
        fee: 1500, // 1% of 1,500.00 USD
        providerId: expect.any(String),
        reference: expect.stringMatching(/^wg-payout-/),
        payoutAmount: null,
        payoutCurrency: 'KES',
        quoteExpiresAt: expect.any(String),
        description: 'Invoice 42',
      });
      expect(Number(payout.rate)).toBe(130);

      const row = await ledgerRow(payout.id);
      expect(row).toMatchObject({
        kind: 'payout',
        direction: 'debit',
        status: 'initiated',
        amount: '150000',
        fee: '1500',
        currency: 'USD',
        provider_id: payout.providerId,
      });
      expect(await history(payout.id)).toEqual([
        { from: null, to: 'created', source: 'api' },
        { from: 'created', to: 'initiated', source: 'api' },
      ]);
      const calls = await h.sim.calls('initializePayout');
      expect(calls).toHaveLength(1);
      expect(calls[0].body).toMatchObject({
        amount: 150000,
        sourceWalletCurrency: 'USD',
        reference: payout.reference,
        customerEmail: 'jane@example.com',
      });
    });

    it('replays the same key and body: same answer, header set, provider called once', async () => {
      const res = await postPayout(payoutBody(), firstKey);
      expect(res.status).toBe(201);
      expect(res.headers['idempotent-replayed']).toBe('true');
      expect(res.body).toEqual(payout);
      expect(await h.sim.calls('initializePayout')).toHaveLength(1);
      expect(await payoutRowCount()).toBe(1);
    });

    it('keeps as the key answer exactly what was answered, which is the payout as stored (written with its move)', async () => {
      const [record] = await h.db.query(
        'SELECT state, response_status, response_body, resource_type, resource_id FROM idempotency_records WHERE key = $1',
        [firstKey],
      );
      expect(record).toEqual({
        state: 'completed',
        response_status: 201,
        response_body: payout,
        resource_type: 'payout',
        resource_id: payout.id,
      });
      const read = await h.http().get(`/v1/payouts/${payout.id}`).set(auth());
      expect(read.body).toEqual(payout);
    });

    it('refuses the same key with another body: 409 idempotency_key_reused', async () => {
      const res = await postPayout(payoutBody({ amount: 150001 }), firstKey);
      expect(res.status).toBe(409);
      expect(res.body.code).toBe('idempotency_key_reused');
      expect(await h.sim.calls('initializePayout')).toHaveLength(1);
      expect(await payoutRowCount()).toBe(1);
    });

    it('refuses a request without Idempotency-Key: 400 idempotency_key_missing', async () => {
      const res = await postPayout(payoutBody());
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('idempotency_key_missing');
      expect(await h.sim.calls('initializePayout')).toHaveLength(1);
      expect(await payoutRowCount()).toBe(1);
    });

    it('gets the payout', async () => {
      const res = await h.http().get(`/v1/payouts/${payout.id}`).set(auth());
      expect(res.status).toBe(200);
      expect(res.body).toEqual(payout);
    });

    it('confirms it: pending with payoutAmount and payoutCurrency; the same key replays that answer', async () => {
      const confirmKey = newKey();
      const confirm = () =>
        h.http().post(`/v1/payouts/${payout.id}/confirm`).set(auth()).set('Idempotency-Key', confirmKey).send();
      const res = await confirm();
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        id: payout.id,
        status: 'pending',
        payoutAmount: 19500000,
        payoutCurrency: 'KES',
        amount: 150000,
        fee: 1500,
      });
      const row = await ledgerRow(payout.id);
      expect(row).toMatchObject({ status: 'pending', counter_amount: '19500000', counter_currency: 'KES' });
      expect((await history(payout.id)).map((c) => c.to)).toEqual(['created', 'initiated', 'pending']);
      const calls = await h.sim.calls('finalizePayout');
      expect(calls).toHaveLength(1);
      expect(calls[0].body).toEqual({ transactionId: payout.providerId });
      expect((await h.http().get(`/v1/payouts/${payout.id}`).set(auth())).body).toEqual(res.body);
      const replay = await confirm();
      expect(replay.status).toBe(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toEqual(res.body);
      expect(await h.sim.calls('finalizePayout')).toHaveLength(1);
    });

    it('refuses a second confirm with 409 invalid_state_transition; the provider saw one finalize', async () => {
      const res = await h
        .http()
        .post(`/v1/payouts/${payout.id}/confirm`)
        .set(auth())
        .set('Idempotency-Key', newKey())
        .send();
      expect(res.status).toBe(409);
      expect(res.body.code).toBe('invalid_state_transition');
      expect(await h.sim.calls('finalizePayout')).toHaveLength(1);
      expect((await ledgerRow(payout.id)).status).toBe('pending');
    });

    it("is completed by the simulator's admin route given the gateway's payout id (its reference carries it)", async () => {
      expect(payout.reference).toBe(`wg-payout-${payout.id.replace(/-/g, '')}`);
      const done = await h.sim.admin('POST', `/payouts/${payout.id}/complete`, { status: 'success' });
      expect(done.status).toBe(200);
      expect(done.body.transaction).toMatchObject({ id: payout.providerId, status: 'SUCCESS' });
    });

    it('answers 404 for an unknown payout', async () => {
      const res = await h.http().get('/v1/payouts/00000000-0000-4000-8000-000000000000').set(auth());
      expect(res.status).toBe(404);
    });

    it('sends one initializePayout for two concurrent requests with one key', async () => {
      await h.sim.admin('DELETE', '/calls');
      const rowsBefore = await payoutRowCount();
      // Slow the provider down so the two requests overlap for sure.
      await h.sim.setFault('initializePayout', { latencyMs: 300 });
      const idem = newKey();
      const body = payoutBody({ amount: 2000, description: 'concurrent' });
      const [a, b] = await Promise.all([postPayout(body, idem), postPayout(body, idem)]);
      const statuses = [a.status, b.status].sort();
      expect([
        [201, 201],
        [201, 409],
      ]).toContainEqual(statuses);
      const winner = a.status === 201 && a.headers['idempotent-replayed'] === undefined ? a : b;
      const other = winner === a ? b : a;
      expect(winner.status).toBe(201);
      expect(winner.body.status).toBe('initiated');
      if (other.status === 201) {
        expect(other.headers['idempotent-replayed']).toBe('true');
        expect(other.body).toEqual(winner.body);
      } else {
        expect(other.body.code).toBe('request_in_progress');
      }
      expect(await h.sim.calls('initializePayout')).toHaveLength(1);
      expect(await payoutRowCount()).toBe(rowsBefore + 1);
      expect(
        await h.db.query("SELECT id FROM transactions WHERE kind = 'payout' AND description = 'concurrent'"),
      ).toEqual([{ id: winner.body.id }]);
    });

    it('keeps the row `unknown` after a provider timeout (504) and never sends it twice on retry', async () => {
      await h.sim.admin('DELETE', '/calls');
      const rowsBefore = await payoutRowCount();
      await h.sim.setFault('initializePayout', { timeout: true });
      const idem = newKey();
      const body = payoutBody({ amount: 3000, description: 'timeout' });
      const res = await postPayout(body, idem);
      expect(res.status).toBe(504);
      expect(res.body.code).toBe('provider_timeout');
      const rows = await h.db.query("SELECT * FROM transactions WHERE kind = 'payout' AND description = 'timeout'");
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ status: 'unknown', provider_id: null, failure_reason: expect.any(String) });
      expect((await history(String(rows[0].id))).map((c) => c.to)).toEqual(['created', 'unknown']);
      expect(await h.sim.calls('initializePayout')).toHaveLength(1);

      // The provider is back; a retry with the same key must replay the 504, not pay again.
      await h.sim.admin('DELETE', '/faults');
      const retry = await postPayout(body, idem);
      expect(retry.status).toBe(504);
      expect(retry.body.code).toBe('provider_timeout');
      expect(await h.sim.calls('initializePayout')).toHaveLength(1);
      expect(await payoutRowCount()).toBe(rowsBefore + 1);
      expect((await ledgerRow(String(rows[0].id))).status).toBe('unknown');
    });

    it('maps insufficient balance to 422 provider_rejected and marks the row failed', async () => {
      await h.sim.admin('DELETE', '/calls');
      // The seeded USD wallet holds 1,000,000.00 (100000000 minor units); amount + 1% fee exceeds it.
      const res = await postPayout(payoutBody({ amount: 100_000_000, description: 'too much' }), newKey());
      expect(res.status).toBe(422);
      expect(res.body.code).toBe('provider_rejected');
      expect(res.body.detail).toMatch(/insufficient/i);
      const rows = await h.db.query("SELECT * FROM transactions WHERE kind = 'payout' AND description = 'too much'");
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        status: 'failed',
        failure_reason: expect.stringMatching(/insufficient/i),
        completed_at: expect.any(Date),
      });
      expect((await history(String(rows[0].id))).map((c) => c.to)).toEqual(['created', 'failed']);
      expect(await h.sim.calls('initializePayout')).toHaveLength(1);
    });

    it("refuses an amount beyond the provider's int32 (400 on amount) before writing, holding or sending anything", async () => {
      await h.sim.admin('DELETE', '/calls');
      const rowsBefore = await payoutRowCount();
      // docs/provider.md#payouts: amount (int32), sent in minor units (the unit table).
      const idem = newKey();
      const res = await postPayout(payoutBody({ amount: 2_147_483_648 }), idem);
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({
        code: 'validation_failed',
        errors: [{ field: 'amount', message: expect.stringContaining('at most 2147483647 minor units') }],
      });
      expect(await payoutRowCount()).toBe(rowsBefore);
      expect(await h.db.query('SELECT 1 FROM idempotency_records WHERE key = $1', [idem])).toHaveLength(0);
      expect(await h.sim.calls('initializePayout')).toHaveLength(0);
      // The largest int32 passes the border: the provider answers it (here: insufficient balance, 422).
      const largest = await postPayout(payoutBody({ amount: 2_147_483_647, description: 'largest int32' }), newKey());
      expect(largest.status).toBe(422);
      expect(await h.sim.calls('initializePayout')).toHaveLength(1);
    });

    it('answers 404 for an unknown customer or beneficiary, writes no ledger row, calls nothing, and the key replays the 404', async () => {
      await h.sim.admin('DELETE', '/calls');
      const rowsBefore = await payoutRowCount();
      const unknown = '00000000-0000-4000-8000-000000000000';
      for (const [body, missing] of [
        [payoutBody({ customerId: unknown }), 'Customer'],
        [payoutBody({ beneficiaryId: unknown }), 'Beneficiary'],
      ] as const) {
        const idem = newKey();
        const res = await postPayout(body, idem);
        expect(res.status).toBe(404);
        expect(res.body.code).toBe('not_found');
        expect(res.body.detail).toContain(missing);
        const [record] = await h.db.query(
          'SELECT state, response_status, resource_id FROM idempotency_records WHERE key = $1',
          [idem],
        );
        expect(record).toEqual({ state: 'completed', response_status: 404, resource_id: null });
        const again = await postPayout(body, idem);
        expect(again.status).toBe(404);
        expect(again.body.code).toBe('not_found');
      }
      expect(await payoutRowCount()).toBe(rowsBefore);
      expect(await h.sim.calls('initializePayout')).toHaveLength(0);
    });

    it('sends one finalizePayout for two concurrent confirms with one key; the key with another payout is 409 idempotency_key_reused', async () => {
      const created = await postPayout(payoutBody({ amount: 2100, description: 'concurrent confirm' }), newKey());
      expect(created.status).toBe(201);
      await h.sim.admin('DELETE', '/calls');
      await h.sim.setFault('finalizePayout', { latencyMs: 300 });
      const idem = newKey();
      const confirm = (id: string) =>
        h.http().post(`/v1/payouts/${id}/confirm`).set(auth()).set('Idempotency-Key', idem).send();
      const [a, b] = await Promise.all([confirm(created.body.id), confirm(created.body.id)]);
      const winner = a.headers['idempotent-replayed'] === undefined && a.status === 201 ? a : b;
      const other = winner === a ? b : a;
      expect(winner.status).toBe(201);
      expect(winner.body.status).toBe('pending');
      if (other.status === 201) {
        expect(other.headers['idempotent-replayed']).toBe('true');
        expect(other.body).toEqual(winner.body);
      } else {
        expect(other.status).toBe(409);
        expect(other.body.code).toBe('request_in_progress');
      }
      expect(await h.sim.calls('finalizePayout')).toHaveLength(1);
      const reused = await confirm(payout.id);
      expect(reused.status).toBe(409);
      expect(reused.body.code).toBe('idempotency_key_reused');
    });

    it("refuses another customer's beneficiary with 422 business_rule_failed and calls nothing", async () => {
      await h.sim.admin('DELETE', '/calls');
      const res = await postPayout({ ...payoutBody(), customerId: otherCustomerId }, newKey());
      expect(res.status).toBe(422);
      expect(res.body.code).toBe('business_rule_failed');
      expect(res.body.errors).toEqual([expect.objectContaining({ field: 'beneficiaryId' })]);
      expect(await h.sim.calls('initializePayout')).toHaveLength(0);
    });
  });
});
