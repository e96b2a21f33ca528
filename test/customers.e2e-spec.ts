import { type Harness, SIMULATOR_API_KEY, startHarness } from './support/harness';

const ada = { email: 'Ada@Example.com', firstName: 'Ada', lastName: 'Obi', phone: '8012345678', countryCode: '234' };

describe('customers (e2e: gateway + simulator + PostgreSQL)', () => {
  let h: Harness;
  let key: string;
  const auth = () => ({ Authorization: `Bearer ${key}` });

  beforeAll(async () => {
    h = await startHarness();
    key = await h.key(['customers:read', 'customers:write']);
  });
  afterAll(() => h.close());
  beforeEach(async () => {
    await h.sim.admin('DELETE', '/faults');
  });

  const customerRows = async (email: string) => h.db.query('SELECT * FROM customers WHERE email = $1', [email]);

  describe('auth', () => {
    it('answers 401 problem+json without a key', async () => {
      const res = await h.http().get('/v1/customers');
      expect(res.status).toBe(401);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({
        status: 401,
        code: 'unauthorized',
        type: 'urn:wallet-gateway:problem:unauthorized',
      });
    });

    it('answers 401 for an unknown key and for a revoked key', async () => {
      const unknown = await h.http().get('/v1/customers').set('Authorization', 'Bearer wgk_not-a-real-key');
      expect(unknown.status).toBe(401);
      const revoked = await h.key(['customers:read']);
      await h.db.query('UPDATE api_clients SET revoked_at = now() WHERE key_prefix = $1', [revoked.slice(0, 12)]);
      const res = await h.http().get('/v1/customers').set('Authorization', `Bearer ${revoked}`);
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('unauthorized');
    });

    it('answers 403 when the key lacks the scope, and creates nothing', async () => {
      const readOnly = await h.key(['customers:read']);
      const res = await h
        .http()
        .post('/v1/customers')
        .set('Authorization', `Bearer ${readOnly}`)
        .send({ ...ada, email: 'scope@example.com' });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ code: 'forbidden', missingScopes: ['customers:write'] });
      expect(await customerRows('scope@example.com')).toHaveLength(0);
      expect(await h.sim.calls('createCustomer')).toHaveLength(0);
    });
  });

  describe('create, get, update, list', () => {
    let created: Record<string, unknown>;

    it('creates a customer at the provider and stores it', async () => {
      const res = await h.http().post('/v1/customers').set(auth()).send(ada);
      expect(res.status).toBe(201);
      created = res.body;
      expect(created).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        providerId: expect.any(String),
        email: 'ada@example.com',
        firstName: 'Ada',
        lastName: 'Obi',
        phone: '8012345678',
        countryCode: '+234',
        blacklisted: false,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      const [row] = await customerRows('ada@example.com');
      expect(row).toMatchObject({ id: created.id, provider_id: created.providerId, first_name: 'Ada' });
      const calls = await h.sim.calls('createCustomer');
      expect(calls).toHaveLength(1);
      expect(calls[0].body).toMatchObject({
        email: 'ada@example.com',
        firstName: 'Ada',
        lastName: 'Obi',
        phone: '8012345678',
        countryCode: '+234',
      });
    });

    it('gets it from the local database', async () => {
      const res = await h.http().get(`/v1/customers/${created.id}`).set(auth());
      expect(res.status).toBe(200);
      expect(res.body).toEqual(created);
      expect(await h.sim.calls('getCustomer')).toHaveLength(0);
    });

    it('refuses a duplicate email (any case) with 409 without calling the provider', async () => {
      const before = (await h.sim.calls('createCustomer')).length;
      const res = await h
        .http()
        .post('/v1/customers')
        .set(auth())
        .send({ ...ada, email: 'ADA@example.com' });
      expect(res.status).toBe(409);
      expect(res.body.code).toBe('conflict');
      expect(await h.sim.calls('createCustomer')).toHaveLength(before);
    });

    it('updates at the provider (PUT with the merged record) and locally', async () => {
      const res = await h.http().patch(`/v1/customers/${created.id}`).set(auth()).send({ lastName: 'Okafor' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id: created.id,
        lastName: 'Okafor',
        firstName: 'Ada',
        email: 'ada@example.com',
      });
      expect(Date.parse(res.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(String(created.updatedAt)));
      const [call] = await h.sim.calls('updateCustomer');
      expect(call.method).toBe('PUT');
      expect(call.path).toContain(String(created.providerId));
      expect(call.body).toMatchObject({ firstName: 'Ada', lastName: 'Okafor', email: 'ada@example.com' });
      const [row] = await customerRows('ada@example.com');
      expect(row.last_name).toBe('Okafor');
    });

    it('refreshes from the provider on ?refresh=true and stores what changed there', async () => {
      const put = await fetch(`${h.sim.baseUrl}/customers/${created.providerId}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${SIMULATOR_API_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          firstName: 'Adaeze',
          lastName: 'Okafor',
          email: 'ada@example.com',
          phone: '8012345678',
          countryCode: '+234',
        }),
      });
      expect(put.status).toBe(200);
      const local = await h.http().get(`/v1/customers/${created.id}`).set(auth());
      expect(local.body.firstName).toBe('Ada');
      const refreshed = await h.http().get(`/v1/customers/${created.id}?refresh=true`).set(auth());
      expect(refreshed.status).toBe(200);
      expect(refreshed.body.firstName).toBe('Adaeze');
      const [row] = await customerRows('ada@example.com');
      expect(row.first_name).toBe('Adaeze');
      expect(await h.sim.calls('getCustomer')).toHaveLength(1);
    });

    it('lists newest first with a cursor and filters by email', async () => {
      for (const n of [1, 2, 3]) {
        const res = await h
          .http()
          .post('/v1/customers')
          .set(auth())
          .send({ ...ada, email: `list${n}@example.com` });
        expect(res.status).toBe(201);
      }
      const first = await h.http().get('/v1/customers?limit=2').set(auth());
      expect(first.status).toBe(200);
      expect(first.body.data.map((c: { email: string }) => c.email)).toEqual([
        'list3@example.com',
        'list2@example.com',
      ]);
      expect(first.body.nextCursor).toEqual(expect.any(String));
      const second = await h.http().get(`/v1/customers?limit=2&cursor=${first.body.nextCursor}`).set(auth());
      expect(second.body.data.map((c: { email: string }) => c.email)).toEqual(['list1@example.com', 'ada@example.com']);
      const byEmail = await h.http().get('/v1/customers?email=LIST2@example.com').set(auth());
      expect(byEmail.body).toEqual({
        data: [expect.objectContaining({ email: 'list2@example.com' })],
        nextCursor: null,
      });
    });

    it('answers 404 for an unknown id and 400 for a malformed id or cursor', async () => {
      const missing = await h.http().get('/v1/customers/00000000-0000-4000-8000-000000000000').set(auth());
      expect(missing.status).toBe(404);
      expect(missing.body.code).toBe('not_found');
      const malformed = await h.http().get('/v1/customers/not-a-uuid').set(auth());
      expect(malformed.status).toBe(400);
      expect(malformed.body.errors).toEqual([{ field: 'id', message: 'id must be a UUID' }]);
      const cursor = await h.http().get('/v1/customers?cursor=garbage').set(auth());
      expect(cursor.status).toBe(400);
      expect(cursor.body.errors[0].field).toBe('cursor');
    });
  });

  describe('validation', () => {
    it('answers 400 with every failing field and calls nothing', async () => {
      const res = await h
        .http()
        .post('/v1/customers')
        .set(auth())
        .send({ email: 'nope', firstName: '', phone: '12', countryCode: 'x', extra: 1 });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('validation_failed');
      const fields = res.body.errors.map((e: { field: string }) => e.field);
      expect(fields).toEqual(
        expect.arrayContaining(['email', 'firstName', 'lastName', 'phone', 'countryCode', 'extra']),
      );
      expect(await h.sim.calls('createCustomer')).toHaveLength(4);
    });

    it('answers 400 for malformed JSON', async () => {
      const res = await h
        .http()
        .post('/v1/customers')
        .set(auth())
        .set('content-type', 'application/json')
        .send('{"email":');
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/problem\+json/);
    });

    it('answers 400 for an empty update', async () => {
      const [row] = await customerRows('ada@example.com');
      const res = await h.http().patch(`/v1/customers/${row.id}`).set(auth()).send({});
      expect(res.status).toBe(400);
    });
  });

  describe('provider failures leave no partial row', () => {
    const attempt = (email: string) =>
      h
        .http()
        .post('/v1/customers')
        .set(auth())
        .send({ ...ada, email });

    it('maps a provider 4xx to 422 provider_rejected with its message', async () => {
      await h.sim.setFault('createCustomer', { status: 400 });
      const res = await attempt('rejected@example.com');
      expect(res.status).toBe(422);
      expect(res.body.code).toBe('provider_rejected');
      expect(res.body.detail).toEqual(expect.any(String));
      expect(await customerRows('rejected@example.com')).toHaveLength(0);
    });

    it('maps status:false in a 200 envelope to 422', async () => {
      await h.sim.setFault('createCustomer', { statusFalse: true });
      const res = await attempt('false@example.com');
      expect(res.status).toBe(422);
      expect(await customerRows('false@example.com')).toHaveLength(0);
    });

    it('maps a provider 5xx to 502 provider_unavailable, without retrying the write', async () => {
      await h.sim.admin('DELETE', '/calls');
      await h.sim.setFault('createCustomer', { status: 503 });
      const res = await attempt('down@example.com');
      expect(res.status).toBe(502);
      expect(res.body.code).toBe('provider_unavailable');
      expect(await h.sim.calls('createCustomer')).toHaveLength(1);
      expect(await customerRows('down@example.com')).toHaveLength(0);
    });

    it('maps a malformed provider body to 502', async () => {
      await h.sim.setFault('createCustomer', { malformed: true });
      const res = await attempt('malformed@example.com');
      expect(res.status).toBe(502);
      expect(await customerRows('malformed@example.com')).toHaveLength(0);
    });

    it('maps no answer in time to 504 provider_timeout', async () => {
      await h.sim.setFault('createCustomer', { timeout: true });
      const res = await attempt('slow@example.com');
      expect(res.status).toBe(504);
      expect(res.body.code).toBe('provider_timeout');
      expect(await customerRows('slow@example.com')).toHaveLength(0);
    });

    it('keeps the local row unchanged when the provider update fails', async () => {
      const [before] = await customerRows('ada@example.com');
      await h.sim.setFault('updateCustomer', { status: 500 });
      const res = await h.http().patch(`/v1/customers/${before.id}`).set(auth()).send({ firstName: 'Changed' });
      expect(res.status).toBe(502);
      const [after] = await customerRows('ada@example.com');
      expect(after.first_name).toBe(before.first_name);
      expect(after.updated_at).toEqual(before.updated_at);
    });
  });
});
