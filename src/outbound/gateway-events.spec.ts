import { minorToJson } from '../common/money';
import type { Transaction, TransactionKind, TransactionStatus } from '../generated/prisma/client';
import { TRANSITIONS } from '../transactions/transaction-state';
import { toTransactionEventData } from '../transactions/transaction.mapper';
import { GATEWAY_EVENT_TYPES, isGatewayEventType, LEDGER_EVENT_TYPES, ledgerEventType } from './gateway-events';

describe('gateway events', () => {
  it('maps ledger moves to event types', () => {
    expect(ledgerEventType('payout', 'success')).toBe('payout.succeeded');
    expect(ledgerEventType('payout', 'failed')).toBe('payout.failed');
    expect(ledgerEventType('collection', 'success')).toBe('collection.paid');
    expect(ledgerEventType('collection', 'expired')).toBe('collection.expired');
    expect(ledgerEventType('swap', 'success')).toBe('swap.succeeded');
    expect(ledgerEventType('swap', 'failed')).toBe('swap.failed');
    expect(ledgerEventType('card_topup', 'success')).toBe('card.topup.succeeded');
    expect(ledgerEventType('card_withdrawal', 'failed')).toBe('card.withdrawal.failed');
    expect(ledgerEventType('card_spend', 'success')).toBe('card.spend.succeeded');
    for (const status of ['created', 'initiated', 'pending', 'processing', 'unknown'] as TransactionStatus[]) {
      expect(ledgerEventType('payout', status)).toBeNull();
    }
  });

  it('announces only statuses each state machine can reach', () => {
    for (const [kind, byStatus] of Object.entries(LEDGER_EVENT_TYPES) as Array<[TransactionKind, object]>) {
      const reachable = new Set(Object.values(TRANSITIONS[kind]).flat());
      for (const status of Object.keys(byStatus))
        expect([kind, status, reachable.has(status as TransactionStatus)]).toEqual([kind, status, true]);
    }
  });

  it('lists every event type once, card lifecycle included', () => {
    expect(new Set(GATEWAY_EVENT_TYPES).size).toBe(GATEWAY_EVENT_TYPES.length);
    expect(GATEWAY_EVENT_TYPES).toEqual(
      expect.arrayContaining(['card.created', 'card.creation_failed', 'payout.succeeded']),
    );
    expect(isGatewayEventType('payout.succeeded')).toBe(true);
    expect(isGatewayEventType('payout.exploded')).toBe(false);
  });

  it('gives a public view of the row with amounts in minor units, as strings beyond safe integers', () => {
    expect(minorToJson(150000n)).toBe(150000);
    expect(minorToJson(9007199254740993n)).toBe('9007199254740993');
    const row = {
      id: 'a3a0d7c4-2f6e-4a8f-9a52-2f7d2c0b9f11',
      kind: 'payout',
      direction: 'debit',
      status: 'success',
      amount: 150000n,
      fee: 1500n,
      currency: 'USD',
      counterAmount: 19500000n,
      counterCurrency: 'KES',
      exchangeRate: null,
      customerId: 'c1',
      beneficiaryId: 'b1',
      cardId: null,
      providerId: 'prov-1',
      reference: 'wg_ref',
      description: 'Invoice 42',
      failureReason: null,
      confirmRequestedAt: null,
      providerPayload: { secret: 'provider stuff' },
      createdAt: new Date('2026-11-23T10:00:00.000Z'),
      updatedAt: new Date('2026-11-23T10:05:00.000Z'),
      completedAt: new Date('2026-11-23T10:05:00.000Z'),
    } as unknown as Transaction;
    expect(toTransactionEventData(row)).toEqual({
      id: row.id,
      kind: 'payout',
      direction: 'debit',
      status: 'success',
      amount: 150000,
      fee: 1500,
      currency: 'USD',
      reference: 'wg_ref',
      customerId: 'c1',
      beneficiaryId: 'b1',
      cardId: null,
      failureReason: null,
      createdAt: '2026-11-23T10:00:00.000Z',
      completedAt: '2026-11-23T10:05:00.000Z',
    });
  });
});
