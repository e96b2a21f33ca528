import { type TestSim, testSimulator } from './testing';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('customers', () => {
  let sim: TestSim;
  beforeEach(async () => {
    sim = await testSimulator();
  });
  afterEach(() => sim.app.close());

  it('creates a customer (blacklist false) in the envelope', async () => {
    const res = await sim.api('POST', '/customers/', {
      firstName: 'Ada',
      lastName: 'Obi',
      email: 'ada@example.com',
      phone: '8012345678',
      countryCode: '+234',
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: true,
      message: expect.any(String),
      data: {
        id: expect.stringMatching(UUID),
        createdAt: expect.stringMatching(ISO),
        updatedAt: expect.stringMatching(ISO),
        firstName: 'Ada',
        lastName: 'Obi',
        email: 'ada@example.com',
        phone: '8012345678',
        countryCode: '+234',
        blacklist: false,
      },
    });
  });

  it('refuses a duplicate email (any case) with 409', async () => {
    await sim.customer('dup@example.com');
    const res = await sim.api('POST', '/customers', { email: 'DUP@example.com' });
    expect(res).toEqual({
      status: 409,
      body: { statusCode: 409, message: 'Customer with this email already exists', error: 'Conflict' },
    });
  });

  it('requires an email', async () => {
    const res = await sim.api('POST', '/customers', { firstName: 'x' });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('email is required');
  });

  it('updates with PUT (firstName and email required), answering transactions: []', async () => {
    const c = await sim.customer('up@example.com');
    sim.advance(1000);
    const res = await sim.api('PUT', `/customers/${c.id}`, {
      firstName: 'Adaeze',
      email: 'up@example.com',
      lastName: 'Okafor',
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      id: c.id,
      firstName: 'Adaeze',
      lastName: 'Okafor',
      phone: c.phone,
      transactions: [],
    });
    expect(Date.parse(res.body.data.updatedAt) - Date.parse(c.updatedAt)).toBe(1000);
    expect((await sim.api('PUT', `/customers/${c.id}`, { email: 'up@example.com' })).status).toBe(400);
    await sim.customer('taken@example.com');
    expect((await sim.api('PUT', `/customers/${c.id}`, { firstName: 'A', email: 'taken@example.com' })).status).toBe(
      409,
    );
    expect((await sim.api('PUT', '/customers/unknown', { firstName: 'A', email: 'x@example.com' })).status).toBe(404);
  });

  it('gets a customer with customerId and page meta', async () => {
    const c = await sim.customer('get@example.com');
    const res = await sim.api('GET', `/customers/${c.id}`);
    expect(res.body.data).toEqual({
      ...c,
      customerId: c.id,
      meta: { page: 1, take: 10, itemCount: 0, pageCount: 0, hasPreviousPage: false, hasNextPage: false },
    });
  });
});

describe('collections', () => {
  let sim: TestSim;
  let email: string;
  const collect = (over: Record<string, unknown> = {}) =>
    sim.api('POST', '/wallets/collections/initialize', {
      country: 'NG',
      currency: 'NGN',
      customerEmail: email,
      amount: 65000,
      reference: `col-${Math.random()}`,
      description: 'Order 1',
      payload: { type: 'wema', accountName: 'Ada Obi' },
      ...over,
    });

  beforeEach(async () => {
    sim = await testSimulator({ collectionTtlSeconds: 7200 });
    email = (await sim.customer()).email;
  });
  afterEach(() => sim.app.close());

  it('answers a processing collection with major-unit numbers (65000 kobo → 650)', async () => {
    const res = await collect({ reference: 'col-1' });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      id: expect.stringMatching(UUID),
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      accountName: 'Ada Obi',
      accountNumber: expect.stringMatching(/^\d{10}$/),
      bankName: 'wema',
      type: 'credit',
      description: 'Order 1',
      customerId: expect.any(String),
      companyId: expect.stringMatching(UUID),
      reference: 'col-1',
      channel: 'collection',
      amount: 650,
      currency: 'NGN',
      action: 'deposit_ngn',
      status: 'processing',
      fees: 9.75,
      expiryInSeconds: 7200,
      expiryDate: '2026-01-01T02:00:00.000Z',
    });
  });

  it.each([
    ['NG', 'NGN', 9_999, 400],
    ['NG', 'NGN', 10_000, 200],
    ['NG', 'NGN', 200_000_000, 200],
    ['NG', 'NGN', 200_000_001, 400],
    ['KE', 'KES', 1_999, 400],
    ['KE', 'KES', 2_000, 200],
    ['KE', 'KES', 14_500_000, 200],
    ['KE', 'KES', 14_500_001, 400],
    ['UG', 'UGX', 499, 400],
    ['UG', 'UGX', 500, 200],
    ['UG', 'UGX', 4_000_000, 200],
    ['UG', 'UGX', 4_000_001, 400],
  ])('enforces the %s limit (%s %d minor units → %d)', async (country, currency, amount, status) => {
    const res = await collect({ country, currency, amount });
    expect(res.status).toBe(status);
    if (status === 400) expect(res.body.message).toMatch(/^amount must be between/);
  });

  it('refuses bad input: unknown customer 404, currency not of the country, fraction, missing payload, duplicate reference', async () => {
    expect((await collect({ customerEmail: 'nobody@example.com' })).status).toBe(404);
    expect((await collect({ currency: 'KES' })).body.message).toBe('currency must be NGN for NG');
    expect((await collect({ amount: 65000.5 })).status).toBe(400);
    expect((await collect({ payload: undefined })).body.message).toBe('payload is required');
    expect((await collect({ reference: 'same' })).status).toBe(200);
    expect((await collect({ reference: 'same' })).status).toBe(409);
  });

  it('admin pay marks it success and credits the wallet with amount − fee', async () => {
    const { data } = (await collect({ amount: 100_000 })).body;
    const before = sim.state.balance('NGN');
    const paid = await sim.admin('POST', `/collections/${data.id}/pay`);
    expect(paid.status).toBe(200);
    expect(paid.body.transaction).toMatchObject({
      id: data.id,
      status: 'SUCCESS',
      type: 'CREDIT',
      amount: '1000.00',
      fees: '15.00',
    });
    expect(sim.state.balance('NGN') - before).toBe(98_500n);
    expect((await sim.admin('POST', `/collections/${data.id}/pay`)).status).toBe(400);
    const tx = await sim.api('GET', `/transactions/${data.id}`);
    expect(tx.body.data).toMatchObject({
      status: 'SUCCESS',
      action: 'DEPOSIT_NGN',
      channel: 'collection',
      balanceAfter: expect.any(String),
    });
  });

  it('expires after collectionTtlSeconds: pay refused, lookup says EXPIRED', async () => {
    const { data } = (await collect()).body;
    sim.advance(7200 * 1000 + 1);
    const paid = await sim.admin('POST', `/collections/${data.id}/pay`);
    expect(paid.body).toMatchObject({ statusCode: 400, message: 'Collection is expired' });
    expect((await sim.api('GET', `/transactions/${data.id}`)).body.data.status).toBe('EXPIRED');
    expect((await sim.admin('POST', '/collections/unknown/pay')).status).toBe(404);
  });
});
