import { collectionLimitProblems, COLLECTION_LIMITS, limitInMinorUnits } from './collection-limits';

describe('collection limits', () => {
  it('converts the documented major-unit bounds to minor units per currency exponent', () => {
    expect(limitInMinorUnits(COLLECTION_LIMITS.NG)).toEqual({ min: 10_000n, max: 200_000_000n });
    expect(limitInMinorUnits(COLLECTION_LIMITS.KE)).toEqual({ min: 2_000n, max: 14_500_000n });
    // UGX has no minor unit: the bounds are the same numbers.
    expect(limitInMinorUnits(COLLECTION_LIMITS.UG)).toEqual({ min: 500n, max: 4_000_000n });
  });

  it('accepts amounts on and inside the bounds', () => {
    expect(collectionLimitProblems('NG', 'NGN', 10_000n)).toEqual([]);
    expect(collectionLimitProblems('NG', 'NGN', 200_000_000n)).toEqual([]);
    expect(collectionLimitProblems('KE', 'KES', 2_000n)).toEqual([]);
    expect(collectionLimitProblems('KE', 'KES', 14_500_000n)).toEqual([]);
    expect(collectionLimitProblems('UG', 'UGX', 500n)).toEqual([]);
    expect(collectionLimitProblems('UG', 'UGX', 4_000_000n)).toEqual([]);
  });

  it('refuses amounts just outside the bounds, naming the amount field', () => {
    for (const [country, currency, amount] of [
      ['NG', 'NGN', 9_999n],
      ['NG', 'NGN', 200_000_001n],
      ['KE', 'KES', 1_999n],
      ['KE', 'KES', 14_500_001n],
      ['UG', 'UGX', 499n],
      ['UG', 'UGX', 4_000_001n],
    ] as const) {
      const problems = collectionLimitProblems(country, currency, amount);
      expect(problems).toHaveLength(1);
      expect(problems[0].field).toBe('amount');
    }
  });

  it('states the bounds in major and minor units', () => {
    expect(collectionLimitProblems('NG', 'NGN', 100n)[0].message).toBe(
      'amount must be between 100.00 and 2000000.00 NGN (10000 to 200000000 minor units) for collections in NG',
    );
  });

  it('does not read a minor-unit amount as major units (100 NGN is 10000 kobo, not 100)', () => {
    expect(collectionLimitProblems('NG', 'NGN', 100n)).not.toEqual([]);
    expect(collectionLimitProblems('UG', 'UGX', 500n)).toEqual([]);
  });

  it('refuses a currency other than the country one', () => {
    expect(collectionLimitProblems('NG', 'KES', 10_000n)).toEqual([
      { field: 'currency', message: 'collections in NG are in NGN' },
    ]);
  });

  it('refuses non-positive amounts', () => {
    expect(collectionLimitProblems('NG', 'NGN', 0n)[0].field).toBe('amount');
    expect(collectionLimitProblems('GH', 'GHS', -1n)[0].field).toBe('amount');
  });

  it('leaves countries without documented limits to the provider', () => {
    expect(collectionLimitProblems('GH', 'GHS', 1n)).toEqual([]);
  });
});
