import { SimulatorState } from './state';

describe(SimulatorState.name, () => {
  it('snapshot and restore keep records, bigint balances and used references across a restart', () => {
    const before = new SimulatorState();
    const customer = { ...before.stamp(), firstName: 'Ada', lastName: 'Obi', email: 'ada@example.com' };
    before.customers.set(customer.id, { ...customer, phone: null, countryCode: null, blacklist: false });
    before.credit('USD', 12_345n);
    before.claimReference('card', 'ref-1');
    before.nextSeq();

    const after = new SimulatorState();
    after.restore(before.snapshot());
    expect(after.customerByEmail('ADA@example.com')?.id).toBe(customer.id);
    expect(after.balance('USD')).toBe(before.balance('USD'));
    expect(() => after.claimReference('card', 'ref-1')).toThrow(/Duplicate reference/);
    expect(after.nextSeq()).toBe(2);
    expect(after.calls).toEqual([]);
  });
});
