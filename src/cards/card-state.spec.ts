import { CardStatus } from '../generated/prisma/enums';
import {
  CARD_ACTIONS,
  CARD_HOLDER_MOVES,
  CARD_MOVES,
  type CardMove,
  cardMoveOutcome,
  FINAL_CARD_STATUSES,
  MONEY_MOVING_CARD_STATUSES,
} from './card-state';

const ALL = Object.values(CardStatus);
const MOVES = Object.keys(CARD_MOVES) as CardMove[];

/** Every (from, move) pair the table applies, as "from -move-> to". */
function applied(): string[] {
  return MOVES.flatMap((move) =>
    ALL.filter((from) => cardMoveOutcome(move, from) === 'apply').map(
      (from) => `${from} -${move}-> ${CARD_MOVES[move].to}`,
    ),
  ).sort();
}

describe('card state machine (card-state.ts)', () => {
  it('allows exactly the listed moves', () => {
    expect(applied()).toEqual(
      [
        'created -accept-> pending',
        'created -refuse-> failed',
        'created -lose-> unknown',
        'created -activate-> active',
        'unknown -activate-> active',
        'pending -activate-> active',
        'created -fail-> failed',
        'unknown -fail-> failed',
        'pending -fail-> failed',
        'active -freeze-> frozen',
        'frozen -unfreeze-> active',
        'active -terminate-> terminated',
        'frozen -terminate-> terminated',
      ].sort(),
    );
  });

  it('API actions: active <-> frozen, active|frozen -> terminated, nothing else', () => {
    const allowed = CARD_ACTIONS.flatMap((action) =>
      ALL.filter((from) => cardMoveOutcome(action, from) === 'apply').map((from) => `${from}:${action}`),
    );
    expect(allowed.sort()).toEqual(['active:freeze', 'active:terminate', 'frozen:terminate', 'frozen:unfreeze']);
    expect(cardMoveOutcome('freeze', 'frozen')).toBe('unchanged');
    expect(cardMoveOutcome('unfreeze', 'active')).toBe('unchanged');
    expect(cardMoveOutcome('freeze', 'pending')).toBe('refused');
    expect(cardMoveOutcome('unfreeze', 'pending')).toBe('refused');
  });

  it('never moves a card out of a final status (terminated, failed)', () => {
    for (const from of FINAL_CARD_STATUSES) {
      for (const move of MOVES) expect(cardMoveOutcome(move, from)).not.toBe('apply');
    }
    expect(FINAL_CARD_STATUSES).toEqual(expect.arrayContaining(['terminated', 'failed']));
  });

  it('is forward-only for creation: an active card never goes back to pending', () => {
    expect(cardMoveOutcome('accept', 'active')).toBe('refused');
    expect(cardMoveOutcome('activate', 'active')).toBe('unchanged');
    expect(cardMoveOutcome('activate', 'frozen')).toBe('refused');
    expect(cardMoveOutcome('fail', 'active')).toBe('refused');
  });

  it('moves money only on active cards', () => {
    expect(MONEY_MOVING_CARD_STATUSES).toEqual(['active']);
  });

  it('card holder: written ahead (created), settled by the answer; KYC verdicts forward only; registering again after failure or no answer', () => {
    expect(CARD_HOLDER_MOVES.accept).toEqual({ from: ['created'], to: 'pending' });
    expect(CARD_HOLDER_MOVES.refuse).toEqual({ from: ['created'], to: 'failed' });
    expect(CARD_HOLDER_MOVES.lose).toEqual({ from: ['created'], to: 'unknown' });
    expect(CARD_HOLDER_MOVES.kycPassed).toEqual({ from: ['created', 'unknown', 'pending'], to: 'active' });
    expect(CARD_HOLDER_MOVES.kycFailed).toEqual({ from: ['created', 'unknown', 'pending'], to: 'failed' });
    expect(CARD_HOLDER_MOVES.register).toEqual({ from: ['failed', 'unknown'], to: 'created' });
    // Nothing leaves `active` (a late `failed` verdict is refused).
    for (const rule of Object.values(CARD_HOLDER_MOVES)) expect(rule.from).not.toContain('active');
  });
});
