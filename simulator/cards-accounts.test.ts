import { isLuhnValid } from './generate';
import { cardUserBody, type TestSim, testSimulator } from './testing';

describe('virtual accounts', () => {
  let sim: TestSim;
  let email: string;
  const create = (over: Record<string, unknown> = {}) =>
    sim.api('POST', '/virtual-accounts', {
      firstName: 'Ada',
      lastName: 'Obi',
      bvn: '22222222222',
      customerEmail: email,
      reference: `va-${Math.random()}`,
      bank: 'safehaven',
      phoneNumber: '+2348012345678',
      ...over,
    });
  beforeEach(async () => {
    sim = await testSimulator();
    email = (await sim.customer()).email;
  });
  afterEach(() => sim.app.close());

  it('creates an active ngn account with a 10-digit number', async () => {
    const res = await create({ reference: 'va-1' });
    expect(res.body.data).toEqual({
      id: expect.any(String),
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      currency: 'ngn',
      bank: 'safehaven',
      customerId: expect.any(String),
      bankName: 'Safe Haven MFB',
      reference: 'va-1',
      accountName: 'Ada Obi',
      accountNumber: expect.stringMatching(/^\d{10}$/),
      status: 'active',
    });
  });

  it('accepts only safehaven or providus; providus needs dateOfBirth', async () => {
    expect((await create({ bank: 'gtbank' })).body.message).toBe('bank must be one of safehaven, providus');
    expect((await create({ bank: 'providus' })).body).toMatchObject({
      statusCode: 400,
      message: 'dateOfBirth is required for providus',
    });
    expect((await create({ bank: 'providus', dateOfBirth: '01/02/1990' })).status).toBe(400);
    const ok = await create({ bank: 'providus', dateOfBirth: '1990-02-01' });
    expect(ok.body.data).toMatchObject({ bank: 'providus', bankName: 'Providus Bank', status: 'active' });
    expect((await create({ customerEmail: 'ghost@example.com' })).status).toBe(404);
    expect((await create({ reference: 'dup' })).status).toBe(200);
    expect((await create({ reference: 'dup' })).status).toBe(409);
  });
});

describe('virtual cards', () => {
  let sim: TestSim;
  let email: string;
  const register = (over: Record<string, unknown> = {}) =>
    sim.api('POST', '/virtualcards/registercarduser', cardUserBody(email, over));
  const createCard = async (amount = 1_000) => {
    const res = await sim.api('POST', '/virtualcards/create', {
      customerEmail: email,
      cardBrand: 'visa',
      cardType: 'virtual',
      reference: `card-${Math.random()}`,
      amount,
      firstName: 'Ada',
      lastName: 'Obi',
    });
    expect(res.status).toBe(200);
    return res.body.data;
  };
  const liveCard = async (amount = 1_000) => {
    await register();
    const card = await createCard(amount);
    await sim.admin('POST', '/flush');
    return card;
  };
  const money = (kind: 'topup' | 'withdraw', cardId: string, amount: unknown) =>
    sim.api('POST', `/virtualcards/${kind}`, { amount, cardId, reference: `ct-${Math.random()}` });
  const action = (kind: 'freeze' | 'unfreeze' | 'terminate', cardId: string) =>
    sim.api('POST', `/virtualcards/${kind}`, { cardId });

  beforeEach(async () => {
    sim = await testSimulator();
    email = (await sim.customer()).email;
  });
  afterEach(() => sim.app.close());

  it('registers a card user, with bvn required for NG and dateOfBirth for GH', async () => {
    expect((await register({ bvn: undefined })).body.message).toBe('bvn is required for Nigerian customers');
    expect((await register({ country: 'GH', bvn: undefined })).body.message).toBe(
      'dateOfBirth is required for Ghanaian customers',
    );
    expect((await register({ country: 'GH', bvn: undefined, dateOfBirth: '1990-01-01' })).status).toBe(200);
    const res = await register();
    expect(res.body.data).toMatchObject({
      id: expect.any(String),
      customerEmail: email,
      status: 'active',
      country: 'NG',
    });
    expect((await register({ customerEmail: 'ghost@example.com' })).status).toBe(404);
  });

  it("takes the country from the customer's dialling code when none is sent", async () => {
    expect((await register({ country: undefined, bvn: undefined })).body.message).toBe(
      'bvn is required for Nigerian customers',
    );
  });

  it('refuses a card for a customer who is not a card user', async () => {
    const res = await sim.api('POST', '/virtualcards/create', { customerEmail: email, reference: 'c1', amount: 500 });
    expect(res.body).toEqual({
      statusCode: 400,
      message: 'Customer is not registered as a card user',
      error: 'Bad Request',
    });
  });

  it('creates a card: pending creation record only, then active with a Luhn-valid number and the initial balance', async () => {
    await register();
    const created = await createCard(1_500);
    expect(created).toEqual({
      id: expect.any(String),
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      cardType: 'virtual',
      cardBrand: 'visa',
      cardUserId: expect.any(String),
      reference: expect.any(String),
      createdStatus: 'pending',
      customerId: null,
    });
    expect(sim.state.balance('USD')).toBe(100_000_000n - 1_500n);
    expect(sim.state.cards.get(created.id)?.status).toBe('pending');
    expect((await action('freeze', created.id)).body.message).toBe('Card is pending');
    expect((await sim.admin('POST', '/flush')).body.ran).toBe(1);
    const frozen = await action('freeze', created.id);
    expect(frozen.body.data).toMatchObject({
      id: created.id,
      status: 'frozen',
      createdStatus: 'success',
      balance: 15,
      cardBrand: 'visa',
      cardName: 'ADA OBI',
      cardNumber: expect.stringMatching(/^4\d{15}$/),
      cvv2: expect.stringMatching(/^\d{3}$/),
      valid: '01/2029',
      expiry: '2029-01-01T00:00:00.000Z',
      customerEmail: email,
      billingAddress: {
        city: expect.any(String),
        street: expect.any(String),
        zipCode: expect.any(String),
        countryCode: 'US',
        country: 'United States',
      },
    });
    expect(isLuhnValid(frozen.body.data.cardNumber)).toBe(true);
    expect(frozen.body.data.last4).toBe(frozen.body.data.cardNumber.slice(-4));
  });

  it('settles card creation by itself after cardCreateDelayMs', async () => {
    const fast = await testSimulator({ cardCreateDelayMs: 20 });
    try {
      const customer = await fast.customer('fast@example.com');
      await fast.api('POST', '/virtualcards/registercarduser', {
        customerEmail: customer.email,
        idType: 'NIN',
        idNumber: '1',
        bvn: '1',
      });
      const res = await fast.api('POST', '/virtualcards/create', {
        customerEmail: customer.email,
        reference: 'r',
        amount: 300,
      });
      await new Promise((r) => setTimeout(r, 80));
      expect(fast.state.cards.get(res.body.data.id)).toMatchObject({
        createdStatus: 'success',
        status: 'active',
        balance: 300n,
      });
    } finally {
      await fast.app.close();
    }
  });

  it('moves through freeze → unfreeze → terminate, refusing the wrong transitions', async () => {
    const { id } = await liveCard();
    expect((await action('unfreeze', id)).body.message).toBe('Card is active');
    expect((await action('freeze', id)).body.data.status).toBe('frozen');
    expect((await action('freeze', id)).status).toBe(400);
    expect((await money('topup', id, 500)).body.message).toBe('Card is frozen');
    expect((await action('unfreeze', id)).body.data.status).toBe('active');
    const terminated = await action('terminate', id);
    expect(terminated.body.data).toMatchObject({
      status: 'terminated',
      cardNumber: expect.any(String),
      cvv2: expect.any(String),
    });
    expect((await action('terminate', id)).body.message).toBe('Card is terminated');
    expect((await money('withdraw', id, 100)).body.message).toBe('Card is terminated');
    expect((await action('freeze', 'nope')).status).toBe(404);
  });

  it('tops up within 300–250000 cents: wallet debited now, card credited on settle', async () => {
    const { id } = await liveCard(0);
    expect((await money('topup', id, 299)).body).toMatchObject({
      statusCode: 400,
      message: 'amount must be between 300 and 250000 cents (3 to 2,500 USD)',
    });
    expect((await money('topup', id, 250_001)).status).toBe(400);
    expect((await money('topup', id, 12.5)).status).toBe(400);
    const max = await money('topup', id, '250000');
    expect(max.body.data).toEqual({
      id: expect.any(String),
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      amount: 2500,
      centAmount: 250_000,
      type: 'credit',
      method: 'topup',
      narrative: null,
      status: 'pending',
      currency: 'usd',
      reference: expect.any(String),
      cardId: id,
    });
    expect((await money('topup', id, 300)).status).toBe(200);
    expect(sim.state.balance('USD')).toBe(100_000_000n - 250_300n);
    expect(sim.state.cards.get(id)?.balance).toBe(0n);
    await sim.admin('POST', '/flush');
    expect(sim.state.cards.get(id)?.balance).toBe(250_300n);
  });

  it('withdraws: card debited now, wallet credited on settle; refuses more than the card holds', async () => {
    const { id } = await liveCard(1_000);
    expect((await money('withdraw', id, 1_001)).body.message).toBe('Insufficient card balance');
    const res = await money('withdraw', id, 400);
    expect(res.body.data).toMatchObject({
      method: 'withdrawal',
      type: 'credit',
      status: 'pending',
      amount: 4,
      centAmount: 400,
    });
    expect(sim.state.cards.get(id)?.balance).toBe(600n);
    const wallet = sim.state.balance('USD');
    await sim.admin('POST', '/flush');
    expect(sim.state.balance('USD') - wallet).toBe(400n);
  });

  it('lists card transactions with order, page and take (string or number), strings for money', async () => {
    const { id } = await liveCard(10_000);
    for (const amount of [300, 400, 500, 600, 700]) {
      await money('topup', id, amount);
      sim.advance(1000);
    }
    await sim.admin('POST', '/flush');
    const list = (query: string) => sim.api('GET', `/virtualcards/cards/${id}/transactions${query}`);

    const first = (await list('')).body.data;
    expect(first.meta).toEqual({
      page: 1,
      take: 10,
      itemCount: 5,
      pageCount: 1,
      hasPreviousPage: false,
      hasNextPage: false,
    });
    expect(first.cardTransactions.map((t: { centAmount: string }) => t.centAmount)).toEqual([
      '300',
      '400',
      '500',
      '600',
      '700',
    ]);
    expect(first.cardTransactions[0]).toMatchObject({
      amount: '3.00',
      status: 'success',
      method: 'topup',
      currency: 'usd',
    });

    const page2 = (await list('?order=DESC&page=2&take=2')).body.data;
    expect(page2.cardTransactions.map((t: { centAmount: string }) => t.centAmount)).toEqual(['500', '400']);
    expect(page2.meta).toEqual({
      page: 2,
      take: 2,
      itemCount: 5,
      pageCount: 3,
      hasPreviousPage: true,
      hasNextPage: true,
    });
    const last = (await list('?order=desc&page=3&take=2')).body.data;
    expect(last.cardTransactions).toHaveLength(1);
    expect(last.meta.hasNextPage).toBe(false);

    expect((await list('?order=UP')).status).toBe(400);
    expect((await list('?take=0')).status).toBe(400);
    expect((await sim.api('GET', '/virtualcards/cards/nope/transactions')).status).toBe(404);
  });

  it('admin spend adds a settled debit card transaction and lowers the card balance', async () => {
    const { id } = await liveCard(1_000);
    const res = await sim.admin('POST', `/cards/${id}/spend`, { amount: 250, narrative: 'NETFLIX.COM' });
    expect(res.body.transaction).toMatchObject({
      type: 'debit',
      method: 'spend',
      status: 'success',
      narrative: 'NETFLIX.COM',
      centAmount: 250,
    });
    expect(sim.state.cards.get(id)?.balance).toBe(750n);
    expect((await sim.admin('POST', `/cards/${id}/spend`, { amount: 751 })).body.message).toBe(
      'Insufficient card balance',
    );
    const listed = (await sim.api('GET', `/virtualcards/cards/${id}/transactions`)).body.data.cardTransactions;
    expect(listed).toHaveLength(1);
  });
});
