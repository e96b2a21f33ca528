import { ValidationError } from '../common/errors';
import { ProviderAmountMismatchError } from './answer-checks';
import { callbackAmountMismatch } from './ledger-events.mapper';

describe('callbackAmountMismatch (payout and deposit callbacks against their ledger row)', () => {
  const usd = { amountMinor: 5000n, currency: 'USD' };

  it('agrees when the major amount is the row’s, in the row’s currency, stated or not, any case', () => {
    expect(callbackAmountMismatch('payout.transfer.success', { amount: '50.00' }, usd)).toBeNull();
    expect(callbackAmountMismatch('payout.transfer.failed', { amount: 50, currency: 'usd' }, usd)).toBeNull();
    expect(callbackAmountMismatch('payout.transfer.success', { amount: '50', currency: ' USD ' }, usd)).toBeNull();
    expect(
      callbackAmountMismatch(
        'transaction.deposit.success',
        { amount: '650', currency: 'ngn' },
        { amountMinor: 65000n, currency: 'NGN' },
      ),
    ).toBeNull();
    expect(
      callbackAmountMismatch('transaction.deposit.success', { amount: '500' }, { amountMinor: 500n, currency: 'UGX' }),
    ).toBeNull();
  });

  it('says nothing when the event states no amount', () => {
    expect(callbackAmountMismatch('payout.transfer.success', { id: 'p1' }, usd)).toBeNull();
    expect(callbackAmountMismatch('payout.transfer.success', { amount: null, currency: 'ngn' }, usd)).toBeNull();
  });

  it('returns the mismatch for another amount, with both sides in minor units and the unit hint for ×100', () => {
    const error = callbackAmountMismatch('payout.transfer.success', { id: 'p1', amount: '5000.00' }, usd);
    expect(error).toBeInstanceOf(ProviderAmountMismatchError);
    expect(error).toMatchObject({
      operation: 'payout.transfer.success',
      asked: usd,
      answered: { amountMinor: 500000n, currency: 'USD' },
      providerId: 'p1',
      unitHint: true,
      raw: { id: 'p1', amount: '5000.00' },
    });
    const off = callbackAmountMismatch('payout.transfer.success', { id: 7, amount: '49.99' }, usd);
    expect(off).toMatchObject({ answered: { amountMinor: 4999n }, providerId: '7', unitHint: false });
  });

  it('returns the mismatch for another currency, known or not', () => {
    expect(callbackAmountMismatch('payout.transfer.success', { amount: '50.00', currency: 'ngn' }, usd)).toMatchObject({
      answered: { amountMinor: 5000n, currency: 'NGN' },
    });
    expect(callbackAmountMismatch('payout.transfer.success', { amount: '50.00', currency: 'xyz' }, usd)).toMatchObject({
      answered: { amountMinor: 5000n, currency: 'XYZ' },
    });
  });

  it('throws a ValidationError for an amount it cannot read exactly', () => {
    for (const amount of ['abc', '50.001', {}, true]) {
      expect(() => callbackAmountMismatch('payout.transfer.success', { amount }, usd)).toThrow(ValidationError);
    }
  });
});
