/**
 * The callbacks the simulator sends: event names and `data` fields as docs/provider.md#events
 * lists them. Money is a MAJOR-unit decimal string ("10.00"); card-event amounts are
 * USD dollars (the gateway's CARD_EVENT_AMOUNT_UNIT is 'major'); ids are provider ids. Never a card
 * number or CVV.
 */
import { major } from './money';
import {
  type Beneficiary,
  type Card,
  type CardTransaction,
  type CardUser,
  type Collection,
  COMPANY_ID,
  type Payout,
  type SimulatorState,
} from './state';
import { payoutTransactionView } from './views';

/** An event: its name and data. */
export interface SimEvent {
  event: string;
  data: Record<string, unknown>;
}

/** `payout.transfer.success|failed`: id, reference, status, amount/fees (major strings), action, channel, type, companyId. */
export function payoutEvent(state: SimulatorState, p: Payout, reason?: string): SimEvent {
  return {
    event: `payout.transfer.${p.status}`,
    data: {
      id: p.id,
      reference: p.reference,
      status: p.status,
      amount: major(p.amount, p.currency),
      fees: major(p.fee, p.currency),
      currency: p.currency.toLowerCase(),
      action: payoutTransactionView(state, p).action.toLowerCase(),
      channel: 'payout',
      type: 'debit',
      companyId: COMPANY_ID,
      ...(reason ? { reason } : {}),
    },
  };
}

/** `transaction.deposit.success` (a collection paid): every field a string. */
export function depositEvent(c: Collection): SimEvent {
  return {
    event: 'transaction.deposit.success',
    data: {
      id: c.id,
      reference: c.reference,
      status: 'success',
      amount: major(c.amount, c.currency),
      fees: major(c.fee, c.currency),
      currency: c.currency.toLowerCase(),
      action: `deposit_${c.currency.toLowerCase()}`,
      channel: 'collection',
      senderName: 'Simulated Payer',
    },
  };
}

/** `beneficiary.status.success`: id, reference, status. */
export function beneficiaryEvent(b: Beneficiary): SimEvent {
  return { event: `beneficiary.status.${b.status}`, data: { id: b.id, reference: b.reference, status: b.status } };
}

/** `virtualcard.user.kyc.success|failed`: the card user's id, customerEmail, status, reason when failed. */
export function kycEvent(u: CardUser, customerEmail: string, reason?: string): SimEvent {
  const status = u.status === 'failed' ? 'failed' : 'success';
  return {
    event: `virtualcard.user.kyc.${status}`,
    data: { id: u.id, customerEmail, status, ...(reason ? { reason } : {}) },
  };
}

/**
 * `virtualcard.created.success` {id, reference, status, createdStatus, cardUserId, last4, cardBrand,
 * valid} or `virtualcard.created.failed` {id, reference, reason}.
 */
export function cardCreatedEvent(c: Card, reason?: string): SimEvent {
  if (c.createdStatus === 'failed')
    return { event: 'virtualcard.created.failed', data: { id: c.id, reference: c.reference, reason } };
  return {
    event: 'virtualcard.created.success',
    data: {
      id: c.id,
      reference: c.reference,
      status: c.status,
      createdStatus: c.createdStatus,
      cardUserId: c.cardUserId,
      last4: c.cardNumber.slice(-4),
      cardBrand: c.cardBrand,
      valid: c.valid,
    },
  };
}

/** Event name per card-transaction kind and outcome. */
function cardTransactionEventName(t: CardTransaction): string {
  if (t.method === 'topup' || t.method === 'withdrawal') return `virtualcard.${t.method}.${t.status}`;
  if (t.status === 'declined' || t.status === 'reversed') return `virtualcard.transaction.${t.status}`;
  return `virtualcard.transaction.${t.type}`;
}

/**
 * Card top-up/withdrawal settled (`virtualcard.topup|withdrawal.success|failed`) or card spending
 * (`virtualcard.transaction.debit|credit|declined|reversed`): id (card transaction id), cardId,
 * amount (USD dollars, "10.00"), narrative, status, reference, reason when there is one.
 */
export function cardTransactionEvent(t: CardTransaction): SimEvent {
  return {
    event: cardTransactionEventName(t),
    data: {
      id: t.id,
      cardId: t.cardId,
      amount: major(t.amount, 'USD'),
      currency: 'usd',
      narrative: t.narrative,
      status: t.status,
      reference: t.reference,
      ...(t.reason ? { reason: t.reason } : {}),
    },
  };
}
