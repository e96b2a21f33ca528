import type { StatusChangeSource, TransactionStatus } from '../generated/prisma/client';
import { movableFrom } from './ledger.service';
import { TRANSITIONS } from './transaction-state';

const SOURCES: StatusChangeSource[] = ['api', 'webhook', 'reconciliation', 'manual'];

describe('who may move a ledger row (movableFrom)', () => {
  const kinds = Object.keys(TRANSITIONS) as Array<keyof typeof TRANSITIONS>;
  const targets = (kind: keyof typeof TRANSITIONS) =>
    [...new Set(Object.values(TRANSITIONS[kind]).flat())] as TransactionStatus[];

  it('lets only a manual move leave needs_review, and a manual move leave nothing else', () => {
    for (const kind of kinds) {
      for (const to of targets(kind)) {
        for (const source of SOURCES) {
          const from = movableFrom(kind, to, source);
          if (source === 'manual') expect(from.every((status) => status === 'needs_review')).toBe(true);
          else expect(from).not.toContain('needs_review');
        }
      }
    }
  });

  it('keeps every other move of the state table for the automatic sources', () => {
    expect(movableFrom('payout', 'success', 'webhook')).toEqual(
      expect.arrayContaining(['unknown', 'initiated', 'pending', 'processing']),
    );
    expect(movableFrom('swap', 'needs_review', 'reconciliation')).toEqual(['created', 'unknown']);
    expect(movableFrom('swap', 'success', 'manual')).toEqual(['needs_review']);
    expect(movableFrom('payout', 'pending', 'manual')).toEqual([]);
  });
});
