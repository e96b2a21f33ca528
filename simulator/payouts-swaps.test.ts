import { type TestSim, testSimulator } from './testing';

const NG_BANK = {
  type: 'BANK',
  bankCode: '058',
  bankName: 'GTBank',
  accountName: 'Ada Obi',
  accountNumber: '0123456789',
};

describe('supported countries and beneficiaries', () => {
  let sim: TestSim;
  let email: string;
  const add = (over: Record<string, unknown> = {}) =>
    sim.api('POST', '/beneficiaries', {
      currency: 'NGN',
      reference: `ben-${Math.random()}`,
      country: 'NG',
      callbackUrl: 'http://gw/webhooks/provider',
      destination: NG_BANK,
      customerEmail: email,
      ...over,
    });
  beforeEach(async () => {
    sim = await testSimulator();
    email = (await sim.customer()).email;
  });
  afterEach(() => sim.app.close());

  it('describes a country (code case-insensitive) with field descriptors', async () => {
    const res = await sim.api('GET', '/wallets/payout/supported-countries/ug');
    expect(res.body.data).toEqual({
      code: 'UG',
      name: 'Uganda',
      flag: '🇺🇬',
      dialCode: '+256',
      destination: {
        MOBILEMONEY: [
          { name: 'type', type: 'string', required: true, const: 'MOBILEMONEY' },
          { name: 'network', type: 'string', required: true, enum: ['MTN', 'AIRTEL'] },
          { name: 'accountNumber', type: 'string', required: true, pattern: '^256\\d{9}$' },
          { name: 'accountName', type: 'string', required: true },
        ],
      },
    });
    const gh = (await sim.api('GET', '/wallets/payout/supported-countries/GH')).body.data;
    expect(Object.keys(gh.destination).sort()).toEqual(['BANK', 'MOBILEMONEY']);
    // Kenya as the provider documents it: MOBILEMONEY only, network MPESA, ^2547[\d]{8}$, no accountName.
    const ke = (await sim.api('GET', '/wallets/payout/supported-countries/Ke')).body.data;
    expect(ke.destination).toEqual({
      MOBILEMONEY: [
        { name: 'type', type: 'string', required: true, const: 'MOBILEMONEY' },
        { name: 'network', type: 'string', required: true, enum: ['MPESA'] },
        { name: 'accountNumber', type: 'string', required: true, pattern: '^2547[\\d]{8}$' },
      ],
    });
    expect((await sim.api('GET', '/wallets/payout/supported-countries/ZZ')).status).toBe(404);
  });

  it('creates a beneficiary (status success, reference echoed) and keeps the callbackUrl', async () => {
    const res = await add({ reference: 'ben-1' });
    expect(res.body.data).toEqual({
      id: expect.any(String),
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      currency: 'NGN',
      country: 'NG',
      status: 'success',
      destination: NG_BANK,
      reference: 'ben-1',
    });
    expect(sim.state.beneficiaries.get(res.body.data.id)?.callbackUrl).toBe('http://gw/webhooks/provider');
  });

  it('validates the destination against the descriptors, listing each problem', async () => {
    const res = await add({ destination: { type: 'BANK', bankCode: 'x', accountNumber: '123', accountName: 'A' } });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe(
      'destination.bankCode must match ^\\d{3,6}$; destination.accountNumber must match ^\\d{10}$; destination.bankName is required',
    );
    const ke = await add({
      country: 'KE',
      currency: 'KES',
      destination: { type: 'MOBILEMONEY', network: 'SAFARICOM', accountNumber: '254112345678' },
    });
    expect(ke.body.message).toBe(
      'destination.network must be one of MPESA; destination.accountNumber must match ^2547[\\d]{8}$',
    );
    const mpesa = await add({
      country: 'KE',
      currency: 'KES',
      destination: { type: 'MOBILEMONEY', network: 'MPESA', accountNumber: '254712345678' },
    });
    expect(mpesa.status).toBe(200);
    const type = await add({ destination: { ...NG_BANK, type: 'MOBILEMONEY' } });
    expect(type.body.message).toBe('destination.type must be one of BANK for NG');
    const ug = await add({
      country: 'UG',
      currency: 'UGX',
      destination: { type: 'MOBILEMONEY', network: 'MTN', accountNumber: '256712345678', accountName: 'A' },
    });
    expect(ug.status).toBe(200);
  });

  it('refuses a currency that does not fit the country, an unknown country and an unknown customer', async () => {
    expect((await add({ currency: 'USD' })).body.message).toBe('currency must be NGN for NG');
    expect((await add({ country: 'US' })).status).toBe(400);
    expect((await add({ customerEmail: 'ghost@example.com' })).status).toBe(404);
  });
});

describe('payouts', () => {
  let sim: TestSim;
  let email: string;
  let beneficiaryId: string;
  const initialize = (over: Record<string, unknown> = {}) =>
    sim.api('POST', '/wallets/payout/initialize', {
      amount: 10_000,
      reference: `po-${Math.random()}`,
      customerEmail: email,
      description: 'Rent',
      beneficiaryId,
      sourceWalletCurrency: 'USD',
      callbackUrl: 'http://gw/webhooks/provider',
      ...over,
    });
  const finalize = (transactionId: string) => sim.api('POST', '/wallets/payout/finalize', { transactionId });

  beforeEach(async () => {
    sim = await testSimulator();
    email = (await sim.customer()).email;
    const ben = await sim.api('POST', '/beneficiaries', {
      currency: 'NGN',
      reference: 'b',
      country: 'NG',
      destination: NG_BANK,
      customerEmail: email,
    });
    beneficiaryId = ben.body.data.id;
  });
  afterEach(() => sim.app.close());

  it('initialize → finalize → wallet debited amount + fee; lookup shows the expanded record', async () => {
    const init = await initialize({ reference: 'po-1' });
    expect(init.status).toBe(200);
    expect(init.body.data).toEqual({
      id: expect.any(String),
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      companyId: expect.any(String),
      customerId: expect.any(String),
      reference: 'po-1',
      channel: 'payout',
      description: 'Rent',
      type: 'debit',
      status: 'initiated',
      action: 'ng_account_payout',
      fees: 1,
      centFees: 100,
      amount: 100,
      centAmount: 10_000,
      spotPrice: 1500,
    });
    expect(sim.state.balance('USD')).toBe(100_000_000n);

    const fin = await finalize(init.body.data.id);
    expect(fin.status).toBe(200);
    expect(fin.body.data).toMatchObject({
      id: init.body.data.id,
      status: 'pending',
      amount: '100.00',
      fees: '1.00',
      exchangeRate: '1500',
      beneficiary: beneficiaryId,
      payoutAmount: 150_000,
      payoutCurrency: 'NGN',
      type: 'debit',
      action: 'ng_account_payout',
    });
    expect(sim.state.balance('USD')).toBe(100_000_000n - 10_100n);

    const tx = await sim.api('GET', `/transactions/${init.body.data.id}`);
    expect(tx.body.data).toMatchObject({
      id: init.body.data.id,
      type: 'DEBIT',
      action: 'NG_ACCOUNT_PAYOUT',
      status: 'PENDING',
      channel: 'payout',
      currency: 'USD',
      amount: '100.00',
      fees: '1.00',
      exchangeRate: '1500',
      payoutAmount: 150_000,
      payoutCurrency: 'NGN',
      payoutUsdAmount: '100.00',
      balanceBefore: '1000000.00',
      balanceAfter: '999899.00',
      beneficiary: { id: beneficiaryId, ...NG_BANK, country: 'NG', currency: 'NGN', reference: 'b' },
    });
    expect(typeof tx.body.data.amount).toBe('string');
    expect((await sim.api('GET', '/transactions/unknown')).status).toBe(404);
  });

  it('charges 1% with a minimum of 100 minor units (half up)', async () => {
    expect((await initialize({ amount: 5_000 })).body.data.centFees).toBe(100);
    expect((await initialize({ amount: 123_450 })).body.data.centFees).toBe(1_235);
  });

  it('pays out from another wallet currency (amount in its minor units)', async () => {
    const init = await initialize({ sourceWalletCurrency: 'NGN', amount: 1_500_000 }); // ₦15,000.00
    expect(init.body.data).toMatchObject({ amount: 15000, centAmount: 1_500_000, fees: 150, spotPrice: 1 });
    await finalize(init.body.data.id);
    expect(sim.state.balance('NGN')).toBe(50_000_000_000n - 1_515_000n);
  });

  it('refuses insufficient balance, unknown beneficiary, bad amounts and duplicate references', async () => {
    const broke = await initialize({ amount: 99_999_999 });
    expect(broke.body).toEqual({ statusCode: 400, message: 'Insufficient balance', error: 'Bad Request' });
    expect((await initialize({ beneficiaryId: 'nope' })).status).toBe(404);
    expect((await initialize({ amount: '12.5' })).status).toBe(400);
    expect((await initialize({ amount: 2_147_483_648 })).status).toBe(400);
    expect((await initialize({ reference: 'dup' })).status).toBe(200);
    expect((await initialize({ reference: 'dup' })).body).toMatchObject({ statusCode: 409, error: 'Conflict' });
  });

  it('funds a wallet through /__admin (minor units); a payout it then covers goes through', async () => {
    const big = { amount: 150_000_000 };
    expect((await initialize(big)).body.message).toBe('Insufficient balance');
    const funded = await sim.admin('POST', '/wallets/usd/fund', { amount: 60_000_000 });
    expect(funded.body).toEqual({ currency: 'USD', before: 100_000_000, after: 160_000_000 });
    expect(sim.state.balance('USD')).toBe(160_000_000n);
    expect((await initialize(big)).status).toBe(200);
    expect((await sim.admin('POST', '/wallets/USD/fund', { amount: 0 })).status).toBe(400);
    expect((await sim.admin('POST', '/wallets/USD/fund', { amount: '1.5' })).status).toBe(400);
    expect((await sim.admin('POST', '/wallets/XYZ/fund', { amount: 1 })).status).toBe(404);
    expect(sim.state.balance('USD')).toBe(160_000_000n);
  });

  it('refuses a second finalize, and a finalize after the rate window', async () => {
    const { id } = (await initialize()).body.data;
    expect((await finalize(id)).status).toBe(200);
    const again = await finalize(id);
    expect(again.body).toMatchObject({ statusCode: 400, message: 'Transaction cannot be finalized: it is pending' });
    expect(sim.state.balance('USD')).toBe(100_000_000n - 10_100n);

    const late = (await initialize()).body.data;
    sim.advance(240_001);
    expect((await finalize(late.id)).body.message).toBe('Rate has expired; initialize the payout again');
    expect((await sim.api('GET', `/transactions/${late.id}`)).body.data.status).toBe('EXPIRED');
    expect((await finalize('unknown')).status).toBe(404);
  });

  it('admin complete: success keeps the debit; failed refunds amount + fee', async () => {
    const a = (await initialize()).body.data;
    const b = (await initialize()).body.data;
    expect((await sim.admin('POST', `/payouts/${a.id}/complete`, { status: 'success' })).status).toBe(400); // still initiated
    await finalize(a.id);
    await finalize(b.id);
    expect(sim.state.balance('USD')).toBe(100_000_000n - 20_200n);
    const ok = await sim.admin('POST', `/payouts/${a.id}/complete`, { status: 'success' });
    expect(ok.body.transaction.status).toBe('SUCCESS');
    const failed = await sim.admin('POST', `/payouts/${b.id}/complete`, { status: 'failed' });
    expect(failed.body.transaction.status).toBe('FAILED');
    expect(sim.state.balance('USD')).toBe(100_000_000n - 10_100n);
    expect((await sim.admin('POST', `/payouts/${b.id}/complete`, { status: 'success' })).status).toBe(400);
    expect((await sim.admin('POST', `/payouts/${b.id}/complete`, { status: 'done' })).status).toBe(400);
  });
});

describe('swaps', () => {
  let sim: TestSim;
  // `amount` in MAJOR units of the source (the documented samples): 100 = 100.00 USD.
  const quote = (body: Record<string, unknown> = {}) =>
    sim.api('POST', '/wallets/initialize-swap', {
      sourceCurrency: 'USD',
      amount: 100,
      targetCurrency: 'NGN',
      ...body,
    });
  const finalize = (quoteId: string) => sim.api('POST', '/wallets/finalize-swap', { quoteId });

  beforeEach(async () => {
    sim = await testSimulator({ quoteTtlSeconds: 250 });
  });
  afterEach(() => sim.app.close());

  it('quotes with lower-case codes and major-unit strings; amount may be a string', async () => {
    const res = await quote({ amount: '100', sourceCurrency: 'usd' });
    expect(res.body.data).toEqual({
      id: expect.any(String),
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
      sourceCurrency: 'usd',
      targetCurrency: 'ngn',
      sourceAmount: '100.00',
      targetAmount: '150000.00',
      amount: '150000.00',
      usdAmount: '100.00',
      fee: '0.50',
      expiration: '2026-01-01T00:04:10.000Z',
      expirationInSec: '250',
      conversionRate: { amount: '1500', currency: 'ngn' },
    });
  });

  it('finalize debits source (amount + fee), credits target, answers the swap transaction', async () => {
    const { id } = (await quote()).body.data;
    const res = await finalize(id);
    expect(res.body.data).toEqual({
      id: expect.any(String),
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      reference: expect.any(String),
      description: 'Swap USD to NGN',
      balanceAfter: 999899.5,
      amount: 100,
      centAmount: 10_000,
      fees: 0.5,
      centFees: 50,
      spotPrice: '1500',
      action: 'swap_usd_ngn',
      type: 'debit',
      status: 'success',
      channel: 'swap',
      companyId: expect.any(String),
    });
    expect(sim.state.balance('USD')).toBe(100_000_000n - 10_050n);
    expect(sim.state.balance('NGN')).toBe(50_000_000_000n + 15_000_000n);
    const tx = await sim.api('GET', `/transactions/${res.body.data.id}`);
    expect(tx.body.data).toMatchObject({
      type: 'DEBIT',
      status: 'SUCCESS',
      action: 'SWAP_USD_NGN',
      amount: '100.00',
      balanceAfter: '999899.50',
    });
  });

  it('converts BTC with 8 decimals', async () => {
    const res = await quote({ sourceCurrency: 'BTC', targetCurrency: 'USD', amount: '0.01' }); // 1,000,000 satoshi
    expect(res.body.data).toMatchObject({
      sourceAmount: '0.01000000',
      targetAmount: '1000.00',
      usdAmount: '1000.00',
      fee: '0.00005000',
    });
  });

  it('refuses an expired quote (injected clock)', async () => {
    const { id } = (await quote()).body.data;
    sim.advance(250_001);
    expect((await finalize(id)).body).toEqual({ statusCode: 400, message: 'Quote has expired', error: 'Bad Request' });
    expect(sim.state.balance('USD')).toBe(100_000_000n);
  });

  it('refuses a quote used twice, an unknown quote and insufficient balance', async () => {
    const { id } = (await quote()).body.data;
    expect((await finalize(id)).status).toBe(200);
    expect((await finalize(id)).body).toMatchObject({ statusCode: 400, message: 'Quote has already been used' });
    expect((await finalize('nope')).status).toBe(404);
    const big = (await quote({ amount: 1_000_000 })).body.data;
    expect((await finalize(big.id)).body.message).toBe('Insufficient balance');
  });

  it('refuses unknown or equal currencies and bad amounts', async () => {
    expect((await quote({ targetCurrency: 'EUR' })).status).toBe(400);
    expect((await quote({ targetCurrency: 'USD' })).status).toBe(400);
    expect((await quote({ amount: -5 })).status).toBe(400);
    expect((await quote({ amount: '10.001' })).body.message).toBe(
      'amount must be a positive decimal in USD with at most its fraction digits',
    );
    expect((await quote({ amount: undefined })).body.message).toBe('amount is required');
  });

  it('reads the amount in minor units when built so, and still answers the quote in major units', async () => {
    await sim.app.close();
    sim = await testSimulator({ quoteTtlSeconds: 250, swapAmountUnit: 'minor' });
    const res = await quote({ amount: 10_000 });
    expect(res.body.data).toMatchObject({ sourceAmount: '100.00', targetAmount: '150000.00', fee: '0.50' });
    const swap = (await finalize(res.body.data.id)).body.data;
    expect(swap).toMatchObject({ amount: 100, centAmount: 10_000 });
    expect((await quote({ amount: 10.5 })).body.message).toBe('amount must be a positive integer in minor units');
  });

  it('switches the reading at run time (PUT /__admin/settings); reset restores it', async () => {
    expect((await sim.admin('GET', '/settings')).body).toEqual({ swapAmountUnit: 'major' });
    expect((await quote({ amount: 100 })).body.data.sourceAmount).toBe('100.00');
    expect((await sim.admin('PUT', '/settings', { swapAmountUnit: 'minor' })).body).toEqual({
      swapAmountUnit: 'minor',
    });
    expect((await quote({ amount: 100 })).body.data.sourceAmount).toBe('1.00');
    const bad = await sim.admin('PUT', '/settings', { swapAmountUnit: 'cents', other: 1 });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toBe('swapAmountUnit must be one of major, minor; other is not a setting');
    expect((await sim.admin('GET', '/settings')).body).toEqual({ swapAmountUnit: 'minor' });
    await sim.admin('POST', '/reset');
    expect((await sim.admin('GET', '/settings')).body).toEqual({ swapAmountUnit: 'major' });
  });

  it('an amountFactor fault reads the amount ×factor (record and answer), logging the body as sent', async () => {
    await sim.admin('PUT', '/faults', { initializeSwap: { amountFactor: 100, times: 1 } });
    const wrong = (await quote({ amount: 1.5 })).body.data;
    expect(wrong.sourceAmount).toBe('150.00');
    expect(sim.state.quotes.get(wrong.id)?.sourceAmount).toBe(15_000n);
    expect((await sim.admin('GET', '/calls?operation=initializeSwap')).body.calls[0].body.amount).toBe(1.5);
    expect((await quote({ amount: 1.5 })).body.data.sourceAmount).toBe('1.50'); // times: 1 used up
    expect((await sim.admin('PUT', '/faults', { initializeSwap: { amountFactor: 0 } })).status).toBe(400);
  });
});
