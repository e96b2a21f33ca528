import { ValidationError } from '../common/errors';
import {
  CARD_EVENTS,
  cardMovementOf,
  cardMovementOfListing,
  cardMovementStatus,
  readCardEvent,
} from './card-events.mapper';
import { ProviderUnits } from './provider-units';
import type { ProviderCardTransaction } from './provider.models';

const units = new ProviderUnits();

describe('cardMovementStatus', () => {
  it('maps provider card-transaction statuses; unknown ones are left alone', () => {
    expect(cardMovementStatus('SUCCESS')).toBe('success');
    expect(cardMovementStatus('pending')).toBe('pending');
    expect(cardMovementStatus('processing')).toBe('pending');
    expect(cardMovementStatus('Completed')).toBe('success');
    expect(cardMovementStatus('declined')).toBe('failed');
    expect(cardMovementStatus('reversed')).toBe('reversed');
    expect(cardMovementStatus('weird')).toBeNull();
    expect(cardMovementStatus(null)).toBeNull();
  });
});

describe('cardMovementOf (the one builder of a card movement)', () => {
  const listed: ProviderCardTransaction = {
    id: 'ctx_1',
    createdAt: new Date('2026-01-01T00:00:00Z'),
    updatedAt: null,
    raw: { id: 'ctx_1' },
    reference: 'ref-1',
    cardId: 'card_1',
    status: 'success',
    type: 'credit',
    method: 'withdrawal',
    narrative: 'ATM',
    currency: 'USD',
    amountMinor: 1050n,
  };

  it('a top-up credits and a withdrawal debits the card, whatever `type` says', () => {
    expect(cardMovementOfListing({ ...listed, method: 'topup' })).toMatchObject({
      kind: 'card_topup',
      direction: 'credit',
    });
    expect(cardMovementOfListing(listed)).toEqual({
      providerId: 'ctx_1',
      reference: 'ref-1',
      kind: 'card_withdrawal',
      direction: 'debit',
      status: 'success',
      amountMinor: 1050n,
      currency: 'USD',
      narrative: 'ATM',
      failureReason: null,
      createdAt: new Date('2026-01-01T00:00:00Z'),
      raw: { id: 'ctx_1' },
    });
  });

  it('any other method is a spend, its direction from `type`', () => {
    expect(cardMovementOf({ ...listed, method: null, type: 'credit' }, 'pending')).toMatchObject({
      kind: 'card_spend',
      direction: 'credit',
      status: 'pending',
    });
    expect(cardMovementOf({ ...listed, method: 'pos', type: 'debit' }, 'failed', 'declined')).toMatchObject({
      kind: 'card_spend',
      direction: 'debit',
      failureReason: 'declined',
    });
  });

  it('a listing row whose status is unknown is no movement', () => {
    expect(cardMovementOfListing({ ...listed, status: null })).toBeNull();
  });
});

describe('readCardEvent', () => {
  it('reads every card event name, and nothing else', () => {
    for (const name of CARD_EVENTS) expect(readCardEvent(units, name, { id: '1', amount: 1 })).not.toBeNull();
    expect(readCardEvent(units, 'payout.success', {})).toBeNull();
  });

  it('card.created: details on success (brand lower-case), a `pending` creation in progress', () => {
    const event = readCardEvent(units, 'virtualcard.created.success', {
      id: 'card_1',
      createdStatus: 'success',
      last4: ' 4242 ',
      cardBrand: 'VISA',
      cardName: 'Ada',
      valid: '11/2029',
      expiry: '2029-11-30T00:00:00.000Z',
      billingAddress: { city: 'Lagos' },
    });
    expect(event).toEqual({
      type: 'card.created',
      result: 'success',
      inProgress: false,
      reason: null,
      details: {
        last4: '4242',
        brand: 'visa',
        nameOnCard: 'Ada',
        validThru: '11/2029',
        expiresAt: new Date('2029-11-30T00:00:00.000Z'),
        billingAddress: { city: 'Lagos' },
      },
    });
    expect(readCardEvent(units, 'virtualcard.created.success', { createdStatus: 'PENDING' })).toMatchObject({
      inProgress: true,
    });
    expect(readCardEvent(units, 'virtualcard.created.success', { status: 'pending' })).toMatchObject({
      inProgress: true,
    });
    expect(readCardEvent(units, 'virtualcard.created.failed', { reason: 'KYC', createdStatus: 'pending' })).toEqual({
      type: 'card.created',
      result: 'failed',
      inProgress: false,
      reason: 'KYC',
      details: null,
    });
  });

  it('card.topup / card.withdrawal: amount in CARD_EVENT_AMOUNT_UNIT, the event status, reason else narrative', () => {
    expect(
      readCardEvent(units, 'virtualcard.topup.success', { id: 't1', amount: '25.50', status: 'PROCESSING' }),
    ).toEqual({ type: 'card.topup', result: 'success', status: 'pending', amountMinor: 2550n, reason: null });
    expect(
      readCardEvent(new ProviderUnits({ CARD_EVENT_AMOUNT_UNIT: 'minor' }), 'virtualcard.withdrawal.failed', {
        amount: 2550,
        narrative: 'insufficient',
      }),
    ).toEqual({ type: 'card.withdrawal', result: 'failed', status: null, amountMinor: 2550n, reason: 'insufficient' });
    expect(readCardEvent(units, 'virtualcard.topup.failed', { reason: 'x' })).toMatchObject({ amountMinor: null });
    expect(() => readCardEvent(units, 'virtualcard.topup.success', { amount: '1.005' })).toThrow(ValidationError);
  });

  it('card.spend: debit, credit and declined as movements (a decline without an amount moved 0)', () => {
    const debit = readCardEvent(units, 'virtualcard.transaction.debit', {
      id: 42,
      cardId: 'card_1',
      amount: 12.5,
      narrative: 'Coffee',
      status: 'reversed',
    });
    expect(debit).toEqual({
      type: 'card.spend',
      cardProviderId: 'card_1',
      movement: {
        providerId: '42',
        reference: null,
        kind: 'card_spend',
        direction: 'debit',
        status: 'success',
        amountMinor: 1250n,
        currency: 'USD',
        narrative: 'Coffee',
        failureReason: null,
        createdAt: null,
        raw: { id: 42, cardId: 'card_1', amount: 12.5, narrative: 'Coffee', status: 'reversed' },
      },
    });
    expect(
      readCardEvent(units, 'virtualcard.transaction.credit', { id: 'c', cardId: 'k', amount: 1, status: 'pending' }),
    ).toMatchObject({ movement: { direction: 'credit', status: 'pending', amountMinor: 100n } });
    expect(readCardEvent(units, 'virtualcard.transaction.declined', { id: 'd', cardId: 'k' })).toMatchObject({
      movement: { status: 'failed', amountMinor: 0n, failureReason: 'declined' },
    });
    expect(readCardEvent(units, 'virtualcard.transaction.debit', { cardId: 'k', amount: 1 })).toEqual({
      type: 'card.spend',
      cardProviderId: 'k',
      movement: null,
    });
  });

  it('card.spend_reversed names the spend; card_holder.kyc the user id and the e-mail lower-case', () => {
    expect(
      readCardEvent(units, 'virtualcard.transaction.reversed', { id: 's1', cardId: 'k', reference: 'r1' }),
    ).toEqual({ type: 'card.spend_reversed', cardProviderId: 'k', providerId: 's1', reference: 'r1' });
    expect(
      readCardEvent(units, 'virtualcard.user.kyc.failed', { id: 'cu_1', customerEmail: 'Ada@X.test', reason: 'blur' }),
    ).toEqual({
      type: 'card_holder.kyc',
      result: 'failed',
      providerUserId: 'cu_1',
      email: 'ada@x.test',
      reason: 'blur',
    });
  });
});
