import { balanceEffect, cardExpiry, cardHolderProblems, topUpAmountProblems } from './card-rules';

describe('card rules', () => {
  it('top-up bounds are 300..250000 USD minor units, inclusive', () => {
    expect(topUpAmountProblems(299n)).toHaveLength(1);
    expect(topUpAmountProblems(300n)).toEqual([]);
    expect(topUpAmountProblems(250_000n)).toEqual([]);
    expect(topUpAmountProblems(250_001n)).toEqual([{ field: 'amount', message: expect.stringContaining('2,500.00') }]);
  });

  it('card holders: bvn for NG, dateOfBirth for GH, formats checked', () => {
    const today = new Date('2026-01-01T00:00:00Z');
    expect(cardHolderProblems({ country: 'NG' }, today).map((p) => p.field)).toEqual(['bvn']);
    expect(cardHolderProblems({ country: 'NG', bvn: '22222222222' }, today)).toEqual([]);
    expect(cardHolderProblems({ country: 'NG', bvn: '123' }, today).map((p) => p.field)).toEqual(['bvn']);
    expect(cardHolderProblems({ country: 'GH' }, today).map((p) => p.field)).toEqual(['dateOfBirth']);
    expect(cardHolderProblems({ country: 'GH', dateOfBirth: '1990-02-30' }, today).map((p) => p.field)).toEqual([
      'dateOfBirth',
    ]);
    expect(cardHolderProblems({ country: 'GH', dateOfBirth: '2027-01-01' }, today)).toHaveLength(1);
    expect(cardHolderProblems({ country: 'GH', dateOfBirth: '1990-04-01' }, today)).toEqual([]);
    expect(cardHolderProblems({ country: 'KE' }, today)).toEqual([]);
  });

  it('reads the expiry from MM/YYYY, MM/YY, else the expiry timestamp', () => {
    expect(cardExpiry('11/2029')).toEqual({ month: 11, year: 2029 });
    expect(cardExpiry('03/29')).toEqual({ month: 3, year: 2029 });
    expect(cardExpiry('13/2029', new Date('2030-06-15T00:00:00Z'))).toEqual({ month: 6, year: 2030 });
    expect(cardExpiry(null, null)).toBeNull();
  });

  it('moves the balance once per success, and back on a reversal of a success', () => {
    expect(balanceEffect('credit', 500n, 'pending', 'success')).toBe(500n);
    expect(balanceEffect('debit', 500n, null, 'success')).toBe(-500n);
    expect(balanceEffect('debit', 500n, 'success', 'reversed')).toBe(500n);
    expect(balanceEffect('credit', 500n, 'success', 'reversed')).toBe(-500n);
    expect(balanceEffect('debit', 500n, 'pending', 'reversed')).toBe(0n);
    expect(balanceEffect('credit', 500n, 'pending', 'failed')).toBe(0n);
    expect(balanceEffect('credit', 500n, 'success', 'success')).toBe(0n);
  });
});
