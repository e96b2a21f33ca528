import { canTransition, FINAL_STATUSES, sourcesOf, TRANSITIONS } from './transaction-state';

describe('transaction state machines', () => {
  it('moves payouts forward only', () => {
    expect(canTransition('payout', 'created', 'initiated')).toBe(true);
    expect(canTransition('payout', 'initiated', 'pending')).toBe(true);
    expect(canTransition('payout', 'pending', 'success')).toBe(true);
    expect(canTransition('payout', 'success', 'pending')).toBe(false);
    expect(canTransition('payout', 'success', 'failed')).toBe(false);
    expect(canTransition('payout', 'failed', 'success')).toBe(false);
  });

  it('leaves final statuses only through an explicit reversal, or a late deposit to review', () => {
    for (const kind of Object.keys(TRANSITIONS) as Array<keyof typeof TRANSITIONS>) {
      for (const from of FINAL_STATUSES) {
        for (const to of TRANSITIONS[kind][from] ?? []) {
          // A collection failed or expired whose deposit arrives anyway: money moved, a person decides.
          const lateDeposit = kind === 'collection' && (from === 'failed' || from === 'expired');
          expect([from, to]).toEqual(lateDeposit ? [from, 'needs_review'] : ['success', 'reversed']);
        }
      }
    }
  });

  it('lets reconciliation settle an unknown outcome', () => {
    expect(sourcesOf('payout', 'success')).toEqual(
      expect.arrayContaining(['unknown', 'initiated', 'pending', 'processing']),
    );
    expect(canTransition('swap', 'unknown', 'success')).toBe(true);
    expect(canTransition('collection', 'unknown', 'processing')).toBe(true);
  });
});
