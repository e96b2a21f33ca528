import { canTransition, sourcesOf } from '../transactions/transaction-state';

/**
 * The ledger moves card money movements need (src/transactions/transaction-state.ts): a top-up or
 * withdrawal may settle straight from `created` (its callback or listing row overtook the
 * provider's answer), so CardLedgerService.settle never walks a row through `pending` by hand.
 */
describe('card movements on the ledger state machine', () => {
  it.each(['card_topup', 'card_withdrawal'] as const)('%s: created → success in one move', (kind) => {
    expect(canTransition(kind, 'created', 'success')).toBe(true);
    expect(sourcesOf(kind, 'success').sort()).toEqual(['created', 'needs_review', 'pending', 'unknown']);
  });

  it.each(['card_topup', 'card_withdrawal'] as const)('%s: the other moves out of created are unchanged', (kind) => {
    expect(
      ['pending', 'success', 'failed', 'unknown', 'needs_review', 'reversed'].filter((to) =>
        canTransition(kind, 'created', to as 'pending'),
      ),
    ).toEqual(['pending', 'success', 'failed', 'unknown', 'needs_review']);
    expect(canTransition(kind, 'created', 'reversed')).toBe(false);
  });

  it('a spend is recorded in its status: no move from created', () => {
    expect(canTransition('card_spend', 'created', 'success')).toBe(false);
    expect(sourcesOf('card_spend', 'reversed').sort()).toEqual(['pending', 'success']);
  });
});
