import { ValidationError } from '../common/errors';
import { ProviderUnits } from './provider-units';
import {
  MalformedAnswerError,
  maskCardNumbers,
  stripCardSecrets,
  toCard,
  toCardUser,
  toCollection,
  toPayout,
  toSwapQuote,
} from './provider.mappers';

describe('stripCardSecrets', () => {
  it('removes cardNumber, cvv2, cvv and pan at any depth, in any case, without touching the input', () => {
    const input = {
      id: 'card_1',
      cardNumber: '5399838383838381',
      CVV2: '123',
      last4: '8381',
      nested: { pan: '4111111111111111', card_number: '4000000000000002', keep: 1, deeper: [{ cvv: '999', ok: true }] },
      list: [{ cvv2: '321', brand: 'visa' }, 'plain', null],
      when: new Date(0),
    };
    const out = stripCardSecrets(input);
    expect(out).toEqual({
      id: 'card_1',
      last4: '8381',
      nested: { keep: 1, deeper: [{ ok: true }] },
      list: [{ brand: 'visa' }, 'plain', null],
      when: new Date(0),
    });
    expect(input.cardNumber).toBe('5399838383838381');
    expect(input.nested.deeper[0].cvv).toBe('999');
  });

  it('keeps a copy PostgreSQL can store: NUL and lone surrogates → U+FFFD, in keys and values', () => {
    const input = { lastName: 'O\u0000bi', ['k\u0000ey']: ['\ud800x', 'ok 😀'], nested: { name: 'a\udc00' } };
    expect(stripCardSecrets(input)).toEqual({
      lastName: 'O\ufffdbi',
      ['k\ufffdey']: ['\ufffdx', 'ok 😀'],
      nested: { name: 'a\ufffd' },
    });
    expect(input.lastName).toBe('O\u0000bi');
  });

  it('passes primitives through', () => {
    expect(stripCardSecrets('x')).toBe('x');
    expect(stripCardSecrets(5)).toBe(5);
    expect(stripCardSecrets(null)).toBeNull();
  });
});

describe('maskCardNumbers', () => {
  it('masks 12 to 19 digit runs (with spaces or dashes) and leaves short numbers alone', () => {
    expect(maskCardNumbers('card 5399838383838381 declined')).toBe('card [REDACTED] declined');
    expect(maskCardNumbers('card 5399 8383 8383 8381 declined')).toBe('card [REDACTED] declined');
    expect(maskCardNumbers('amount 65000 for ref 12345')).toBe('amount 65000 for ref 12345');
  });
});

describe('card event amounts (docs/provider.md#units: unit undocumented, one setting)', () => {
  it('has one setting, dollars by default', () => {
    const units = new ProviderUnits();
    expect(units.settings.CARD_EVENT_AMOUNT_UNIT).toBe('major');
    expect(units.cardEventAmountToMinor('virtualcard.topup.success', 25.5)).toBe(2550n);
    expect(units.cardEventAmountToMinor('virtualcard.transaction.debit', '25.50')).toBe(2550n);
    expect(() => units.cardEventAmountToMinor('virtualcard.withdrawal.success', '1.005')).toThrow(ValidationError);
  });

  it('reads cents when CARD_EVENT_AMOUNT_UNIT is minor', () => {
    const units = new ProviderUnits({ CARD_EVENT_AMOUNT_UNIT: 'minor' });
    expect(units.cardEventAmountToMinor('virtualcard.topup.success', 2550)).toBe(2550n);
    expect(units.cardEventAmountToMinor('virtualcard.transaction.credit', '2550')).toBe(2550n);
    expect(() => units.cardEventAmountToMinor('virtualcard.withdrawal.failed', '25.5')).toThrow(ValidationError);
  });
});

describe('mappers', () => {
  const stamp = '2024-05-01T10:00:00.000Z';

  it('collection: major-unit amount (65000 kobo answers 650) and fees, numbers or strings', () => {
    const base = {
      id: 'col_1',
      reference: 'r1',
      status: 'PROCESSING',
      currency: 'ngn',
      accountNumber: '0123456789',
      expiryDate: stamp,
      createdAt: stamp,
    };
    expect(toCollection({ ...base, amount: 650, fees: 3.25 })).toMatchObject({
      amountMinor: 65000n,
      feeMinor: 325n,
      currency: 'NGN',
      status: 'processing',
      expiresAt: new Date(stamp),
      updatedAt: null,
    });
    expect(toCollection({ ...base, amount: '650.00', fees: '3.255' })).toMatchObject({
      amountMinor: 65000n,
      feeMinor: 326n,
    });
    expect(() => toCollection({ ...base, amount: '650.001' })).toThrow(MalformedAnswerError);
    expect(() => toCollection({ ...base, amount: undefined })).toThrow(/amount is missing/);
    expect(() => toCollection({ ...base, amount: 650, expiryDate: 'soon' })).toThrow(/expiryDate is not a timestamp/);
    expect(() => toCollection({ ...base, amount: 650, currency: 'zzz' })).toThrow(/currency is invalid/);
  });

  it('payout: prefers centAmount/centFees, else reads major amounts in the wallet currency', () => {
    const base = { id: 'tx_1', reference: 'p1', status: 'initiated', type: 'debit', action: 'ng_account_payout' };
    expect(
      toPayout({ ...base, amount: 100.5, centAmount: 10050, fees: '1', centFees: 100 }, 'initializePayout', 'usd'),
    ).toMatchObject({
      currency: 'USD',
      amountMinor: 10050n,
      feeMinor: 100n,
    });
    expect(toPayout({ ...base, amount: '100.50', fees: 1 }, 'finalizePayout', 'USD')).toMatchObject({
      amountMinor: 10050n,
      feeMinor: 100n,
    });
    expect(() => toPayout({ ...base, amount: 1 }, 'getTransaction')).toThrow(/currency is missing/);
    expect(toPayout({ ...base, amount: '5', currency: 'ugx', fees: '0' }, 'getTransaction')).toMatchObject({
      currency: 'UGX',
      amountMinor: 5n,
    });
  });

  it('swap quote: rounds the converted target amount half-even, keeps the rate exact', () => {
    const quote = toSwapQuote({
      id: 'q1',
      sourceCurrency: 'usd',
      targetCurrency: 'ngn',
      sourceAmount: '10',
      targetAmount: '15402.505',
      fee: '0.1',
      expiration: stamp,
      expirationInSec: '250',
      conversionRate: { amount: '1540.2505', currency: 'ngn' },
    });
    expect(quote).toMatchObject({
      sourceAmountMinor: 1000n,
      targetAmountMinor: 1540250n,
      feeMinor: 10n,
      rate: '1540.2505',
      rateCurrency: 'NGN',
      expiresInSeconds: 250,
    });
  });

  it('card: never keeps the full number or CVV; last4 falls back to the number tail', () => {
    const card = toCard(
      {
        id: 'c1',
        status: 'ACTIVE',
        cardNumber: '5399-8383-8383-8381',
        cvv2: '123',
        balance: '25.5',
        valid: '09/2027',
      },
      'freezeCard',
    );
    expect(card).toMatchObject({
      last4: '8381',
      balanceMinor: 2550n,
      currency: 'USD',
      status: 'active',
      validThru: '09/2027',
    });
    expect(JSON.stringify(card.raw)).not.toMatch(/5399|cvv|"123"/);
    expect(Object.values(card)).not.toContain('123');
  });
});

describe('toCardUser', () => {
  it('lower-cases the status and says whether it refuses KYC at once', () => {
    expect(toCardUser({ id: 'cu_1', status: 'PENDING' })).toMatchObject({
      id: 'cu_1',
      status: 'pending',
      kycRefused: false,
    });
    for (const status of ['FAILED', 'rejected', 'Declined']) {
      expect(toCardUser({ id: 'cu_1', status }).kycRefused).toBe(true);
    }
    expect(toCardUser({})).toMatchObject({ id: null, status: null, kycRefused: false });
  });
});
