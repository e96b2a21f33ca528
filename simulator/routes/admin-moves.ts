import type { FastifyInstance } from 'fastify';
import { outcomeOf } from '../callbacks';
import { cardTransactionEvent, depositEvent } from '../events';
import { badRequest, type Body, bodyOf, notFound, optString } from '../http';
import { parseMinor } from '../money';
import type { Card, CardTransaction, Payout, SimulatorState } from '../state';
import { cardTransactionView, collectionTransactionView, payoutTransactionView } from '../views';
import { addCardTransaction, cardById } from './cards';
import { param, type RouteContext } from './context';
import { completePayout, payoutOutcome } from './payouts';

/** A gateway payout id: a UUID (the gateway's payout reference is `wg-payout-` + its 32 hex digits). */
const GATEWAY_PAYOUT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The payout `id` names, whichever id the caller has: the simulator's own (what the gateway keeps as
 * the payout's `providerId`), the `reference` the payout was initialized with, or the gateway's payout
 * id (a UUID; the gateway initializes each payout with reference `wg-payout-<that id without dashes>`).
 * Undefined when none matches.
 */
export function payoutByAnyId(state: SimulatorState, id: string): Payout | undefined {
  const found = state.payouts.get(id);
  if (found) return found;
  const gatewayReference = GATEWAY_PAYOUT_ID.test(id) ? `wg-payout-${id.replace(/-/g, '').toLowerCase()}` : undefined;
  for (const payout of state.payouts.values()) {
    if (payout.reference === id || payout.reference === gatewayReference) return payout;
  }
  return undefined;
}

/** Why an admin decline is refused when the body names no reason. */
export const DEFAULT_DECLINE_REASON = 'Insufficient funds';

/**
 * The moves the real provider makes on its own, under /__admin, each followed by its callback
 * (answered as `callback`: the delivery-log entry once delivered or given up, or at once when a
 * fault switch defers it):
 * - POST /collections/:id/pay → `transaction.deposit.success`;
 * - POST /payouts/:id/complete `{status?: success|failed}` → `payout.transfer.*` (no status: failed
 *   when the major amount's integer part ends in 13, else success);
 * - POST /cards/:id/spend `{amount (cents), narrative}` → `virtualcard.transaction.debit`;
 * - POST /cards/:id/decline `{amount, narrative, reason}` → `virtualcard.transaction.declined` (no balance change);
 * - POST /cards/:id/credit `{amount, narrative}` → `virtualcard.transaction.credit` (e.g. a merchant refund);
 * - POST /card-transactions/:id/reverse `{reason?}` → `virtualcard.transaction.reversed` (money back on the card).
 */
export function adminMoveRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const { state, callbacks } = ctx;

  /** Marks a `processing` collection paid: status success, wallet credited with amount − fee. */
  app.post('/__admin/collections/:id/pay', async (request) => {
    const collection = state.collections.get(param(request, 'id'));
    if (!collection) throw notFound('Collection');
    if (state.refreshCollection(collection).status !== 'processing')
      throw badRequest(`Collection is ${collection.status}`);
    const { before, after } = state.credit(collection.currency, collection.amount - collection.fee);
    Object.assign(collection, { status: 'success', balanceBefore: before, balanceAfter: after });
    state.touch(collection);
    const { event, data } = depositEvent(collection);
    const callback = await callbacks.send(event, data, { url: collection.callbackUrl });
    return { transaction: collectionTransactionView(collection), callback };
  });

  /**
   * Completes a `pending` payout: success, or failed (the wallet is refunded amount + fee). `:id` is
   * the payout's id here (the gateway's `providerId`), its `reference`, or the gateway's own payout
   * id (payoutByAnyId).
   */
  app.post('/__admin/payouts/:id/complete', async (request) => {
    const payout = payoutByAnyId(state, param(request, 'id'));
    if (!payout) throw notFound('Payout');
    const status = optString(bodyOf(request), 'status') ?? payoutOutcome(payout);
    if (status !== 'success' && status !== 'failed') throw badRequest('status must be success or failed');
    if (payout.status !== 'pending') throw badRequest(`Payout is ${payout.status}`);
    const callback = await outcomeOf(completePayout(ctx, payout, status));
    return { transaction: payoutTransactionView(state, payout), callback };
  });

  /** Sends the card transaction's event; answers `{transaction, callback}`. */
  const answer = async (txn: CardTransaction) => {
    const { event, data } = cardTransactionEvent(txn);
    const callback = await callbacks.send(event, data, { url: txn.callbackUrl });
    return { transaction: cardTransactionView(txn), callback };
  };
  /** A spending move on a card: records it, then as `answer`. */
  const spending = (card: Card, fields: Parameters<typeof addCardTransaction>[2]) =>
    answer(addCardTransaction(state, card, { ...fields, callbackUrl: card.callbackUrl }));
  const amountOf = (body: Body) => {
    const amount = parseMinor(body.amount);
    if (amount === null) throw badRequest('amount must be a positive integer in cents');
    return amount;
  };

  /** A card spend: a `debit` card transaction of `amount` cents, settled at once (refused → 400). */
  app.post('/__admin/cards/:id/spend', async (request) => {
    const card = cardById(state, param(request, 'id'));
    const body = bodyOf(request);
    const amount = amountOf(body);
    if (card.status !== 'active') throw badRequest(`Card is ${card.status}`);
    if (amount > card.balance) throw badRequest('Insufficient card balance');
    card.balance -= amount;
    state.touch(card);
    return spending(card, {
      reference: state.newId(),
      amount,
      method: 'spend',
      type: 'debit',
      status: 'success',
      narrative: optString(body, 'narrative') ?? 'Merchant',
    });
  });

  /** A declined card spend: a `declined` debit card transaction; the balance does not change. */
  app.post('/__admin/cards/:id/decline', async (request) => {
    const card = cardById(state, param(request, 'id'));
    const body = bodyOf(request);
    return spending(card, {
      reference: state.newId(),
      amount: amountOf(body),
      method: 'spend',
      type: 'debit',
      status: 'declined',
      narrative: optString(body, 'narrative') ?? 'Merchant',
      reason: optString(body, 'reason') ?? DEFAULT_DECLINE_REASON,
    });
  });

  /** A merchant credit (e.g. a refund): a settled `credit` card transaction; the card balance rises. */
  app.post('/__admin/cards/:id/credit', async (request) => {
    const card = cardById(state, param(request, 'id'));
    const body = bodyOf(request);
    const amount = amountOf(body);
    if (card.status !== 'active' && card.status !== 'frozen') throw badRequest(`Card is ${card.status}`);
    card.balance += amount;
    state.touch(card);
    return spending(card, {
      reference: state.newId(),
      amount,
      method: 'credit',
      type: 'credit',
      status: 'success',
      narrative: optString(body, 'narrative') ?? 'Merchant refund',
    });
  });

  /** Reverses a settled card spend: its status becomes `reversed` and the money goes back on the card. */
  app.post('/__admin/card-transactions/:id/reverse', async (request) => {
    const id = param(request, 'id');
    const txn = state.cardTransactions.find((t) => t.id === id);
    if (!txn) throw notFound('Card transaction');
    if (txn.method !== 'spend' || txn.status !== 'success')
      throw badRequest(`Only a settled spend can be reversed (this is a ${txn.status} ${txn.method})`);
    const card = cardById(state, txn.cardId);
    txn.status = 'reversed';
    txn.reason = optString(bodyOf(request), 'reason') ?? 'Reversed by the merchant';
    state.touch(txn);
    card.balance += txn.amount;
    state.touch(card);
    return answer(txn);
  });
}
