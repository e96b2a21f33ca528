import { randomUUID } from 'node:crypto';
import { customerWithBeneficiary } from './support/fixtures';
import { type Harness, startHarness } from './support/harness';

/**
 * The server is as strict as its description (issue 37): an explicit `null` is refused naming the
 * field (never taken as "not given"), a PATCH that changes nothing does not reach the provider, and a
 * known path asked with a method it does not serve answers 405 with `Allow`.
 */
describe('contract (e2e: gateway + simulator + PostgreSQL)', () => {
  let h: Harness;
  let key: string;
  const auth = () => ({ Authorization: `Bearer ${key}` });

  beforeAll(async () => {
    h = await startHarness();
    key = await h.key([
      'customers:read',
      'customers:write',
      'beneficiaries:write',
      'payouts:read',
      'payouts:write',
      'cards:read',
      'cards:write',
      'virtual-accounts:read',
      'virtual-accounts:write',
    ]);
  });
  afterAll(() => h.close());

  const expectNullRefused = (res: { status: number; headers: Record<string, string>; body: any }, field: string) => {
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body.code).toBe('validation_failed');
    expect(res.body.errors).toContainEqual({ field, message: `${field} must not be null` });
  };

  describe('explicit null', () => {
    it('POST /v1/payouts with "sourceCurrency": null is refused naming the field; nothing is paid out', async () => {
      const to = await customerWithBeneficiary(h, auth(), 'null-payout@example.com');
      const before = await h.sim.calls('initializePayout');
      const res = await h
        .http()
        .post('/v1/payouts')
        .set(auth())
        .set('Idempotency-Key', randomUUID())
        .send({ ...to, amount: 1000, sourceCurrency: null, description: 'null currency' });
      expectNullRefused(res, 'sourceCurrency');
      expect(res.body.errors).toHaveLength(1);
      expect(await h.sim.calls('initializePayout')).toHaveLength(before.length);
      const rows = await h.db.query("SELECT id FROM transactions WHERE kind = 'payout' AND customer_id = $1", [
        to.customerId,
      ]);
      expect(rows).toHaveLength(0);
    });

    it('PATCH /v1/customers/{id} with only {"lastName": null} is refused; the provider is not called, nothing changes', async () => {
      const created = await h.http().post('/v1/customers').set(auth()).send({
        email: 'null-patch@example.com',
        firstName: 'Ada',
        lastName: 'Obi',
        phone: '8012345678',
        countryCode: '+234',
      });
      expect(created.status).toBe(201);
      const updatesBefore = (await h.sim.calls('updateCustomer')).length;
      const res = await h.http().patch(`/v1/customers/${created.body.id}`).set(auth()).send({ lastName: null });
      expectNullRefused(res, 'lastName');
      expect(await h.sim.calls('updateCustomer')).toHaveLength(updatesBefore);
      const [row] = await h.db.query<{ last_name: string; updated_at: Date }>(
        'SELECT last_name, updated_at FROM customers WHERE id = $1',
        [created.body.id],
      );
      expect(row.last_name).toBe('Obi');
      expect(row.updated_at.toISOString()).toBe(created.body.updatedAt);
    });

    it('POST /v1/cards with null optional strings is refused naming each; the provider is not called', async () => {
      const before = (await h.sim.calls('createCard')).length;
      const res = await h
        .http()
        .post('/v1/cards')
        .set(auth())
        .set('Idempotency-Key', randomUUID())
        .send({ customerId: randomUUID(), brand: 'visa', amount: 0, type: null, reference: null });
      expectNullRefused(res, 'type');
      expectNullRefused(res, 'reference');
      expect(await h.sim.calls('createCard')).toHaveLength(before);
    });

    it('POST /v1/virtual-accounts with a null optional string is refused naming it; the provider is not called', async () => {
      const before = (await h.sim.calls('createVirtualAccount')).length;
      const res = await h
        .http()
        .post('/v1/virtual-accounts')
        .set(auth())
        .send({ customerId: randomUUID(), bank: 'safehaven', dateOfBirth: null });
      expectNullRefused(res, 'dateOfBirth');
      expect(await h.sim.calls('createVirtualAccount')).toHaveLength(before);
    });

    it('a required field sent as null is refused too (its own rules name it)', async () => {
      const res = await h
        .http()
        .post('/v1/payouts')
        .set(auth())
        .set('Idempotency-Key', randomUUID())
        .send({ customerId: null, beneficiaryId: randomUUID(), amount: 1000, description: 'x' });
      expect(res.status).toBe(400);
      expect(res.body.errors.map((error: { field: string }) => error.field)).toContain('customerId');
    });
  });

  describe('PATCH that changes nothing', () => {
    it('answers 200 with the stored customer, without calling the provider or bumping updatedAt', async () => {
      const created = await h.http().post('/v1/customers').set(auth()).send({
        email: 'noop-patch@example.com',
        firstName: 'Ada',
        lastName: 'Obi',
        phone: '8012345678',
        countryCode: '234',
      });
      expect(created.status).toBe(201);
      const updatesBefore = (await h.sim.calls('updateCustomer')).length;
      // Same values as stored, written as a client may: email in another case, dialling code without its plus.
      const res = await h
        .http()
        .patch(`/v1/customers/${created.body.id}`)
        .set(auth())
        .send({ email: 'Noop-Patch@Example.com', lastName: ' Obi ', countryCode: '234' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(created.body);
      expect(await h.sim.calls('updateCustomer')).toHaveLength(updatesBefore);

      // A real change still goes to the provider and is stored.
      const changed = await h.http().patch(`/v1/customers/${created.body.id}`).set(auth()).send({ lastName: 'Okafor' });
      expect(changed.status).toBe(200);
      expect(changed.body.lastName).toBe('Okafor');
      expect(await h.sim.calls('updateCustomer')).toHaveLength(updatesBefore + 1);
    });
  });

  describe('a method the path does not serve', () => {
    it('answers 405 problem+json with Allow listing the methods of the path', async () => {
      const cases: Array<[string, string, string]> = [
        ['put', '/v1/customers', 'GET, HEAD, POST, OPTIONS'],
        ['delete', `/v1/customers/${randomUUID()}`, 'GET, HEAD, PATCH, OPTIONS'],
        ['get', `/v1/payouts/${randomUUID()}/confirm`, 'POST, OPTIONS'],
        ['patch', '/v1/transactions/summary', 'GET, HEAD, OPTIONS'],
        ['delete', '/v1/payouts', 'POST, OPTIONS'],
      ];
      for (const [method, path, allow] of cases) {
        const res = await h.http()[method as 'put' | 'delete' | 'get' | 'patch'](path).set(auth()).send();
        expect({ method, path, status: res.status, allow: res.headers.allow }).toEqual({
          method,
          path,
          status: 405,
          allow,
        });
        expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(res.body).toMatchObject({ status: 405, code: 'method_not_allowed', allow: allow.split(', ') });
      }
    });

    it('answers OPTIONS with 204 and Allow, and HEAD where GET is served', async () => {
      const options = await h.http().options('/v1/customers');
      expect(options.status).toBe(204);
      expect(options.headers.allow).toBe('GET, HEAD, POST, OPTIONS');
      const head = await h.http().head('/health/live');
      expect(head.status).toBe(200);
    });

    it('still answers 404 for a path no route has, whatever the method', async () => {
      for (const method of ['get', 'put', 'options'] as const) {
        const res = await h.http()[method]('/v1/no-such-thing').set(auth());
        expect(res.status).toBe(404);
        expect(res.headers.allow).toBeUndefined();
        if (method !== 'options') expect(res.body.code).toBe('not_found');
      }
    });
  });
});
