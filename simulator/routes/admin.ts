import type { FastifyInstance } from 'fastify';
import { FaultTable, parseFaults } from '../faults';
import { badRequest, bodyOf, notFound, optString } from '../http';
import { deliverCallback } from '../callbacks';
import { jsonInt, major, parseMinor } from '../money';
import type { SimulatorState } from '../state';
import { cardTransactionView, collectionTransactionView, payoutTransactionView } from '../views';
import { addCardTransaction, cardById } from './cards';
import { param } from './context';

/**
 * The admin/test API under /__admin (no Bearer key): call log, faults, state, reset, and the
 * moves the real provider makes on its own (collection paid, payout completed, card spend).
 */
export function adminRoutes(
  app: FastifyInstance,
  state: SimulatorState,
  faults: FaultTable,
  webhookSecret?: string,
  webhookUrl?: string,
): void {
  app.get('/__admin/calls', async (request) => {
    const { operation } = request.query as { operation?: string };
    return { calls: operation ? state.calls.filter((c) => c.operation === operation) : state.calls };
  });
  app.delete('/__admin/calls', async () => {
    state.calls = [];
    return { ok: true };
  });

  app.get('/__admin/faults', async () => ({ faults: faults.list() }));
  app.put('/__admin/faults', async (request) => {
    faults.set(parseFaults(request.body));
    return { faults: faults.list() };
  });
  app.delete('/__admin/faults', async () => {
    faults.clear();
    return { ok: true };
  });

  app.get('/__admin/state', async () => ({
    balances: Object.fromEntries([...state.balances].map(([currency, minor]) => [currency, jsonInt(minor)])),
    counts: state.counts(),
  }));
  app.post('/__admin/reset', async () => {
    state.reset();
    faults.clear();
    return { ok: true };
  });
  app.post('/__admin/flush', async () => ({ ran: state.flushScheduled() }));

  /** Marks a `processing` collection paid: status success, wallet credited with amount − fee. */
  app.post('/__admin/collections/:id/pay', async (request) => {
    const collection = state.collections.get(param(request, 'id'));
    if (!collection) throw notFound('Collection');
    if (state.refreshCollection(collection).status !== 'processing')
      throw badRequest(`Collection is ${collection.status}`);
    const { before, after } = state.credit(collection.currency, collection.amount - collection.fee);
    Object.assign(collection, { status: 'success', balanceBefore: before, balanceAfter: after });
    state.touch(collection);
    // The deposit callback goes to the collection's callbackUrl, else the account's webhook URL.
    const url = collection.callbackUrl ?? webhookUrl;
    const callback =
      url && webhookSecret
        ? await deliverCallback(url, webhookSecret, {
            event: 'transaction.deposit.success',
            data: {
              id: collection.id,
              reference: collection.reference,
              status: 'success',
              amount: major(collection.amount, collection.currency),
              fees: major(collection.fee, collection.currency),
              currency: collection.currency.toLowerCase(),
              action: `deposit_${collection.currency.toLowerCase()}`,
              channel: 'collection',
              senderName: 'Simulated Payer',
            },
          })
        : null;
    return { transaction: collectionTransactionView(collection), callback };
  });

  /** Completes a `pending` payout: success, or failed (the wallet is refunded amount + fee). */
  app.post('/__admin/payouts/:id/complete', async (request) => {
    const payout = state.payouts.get(param(request, 'id'));
    if (!payout) throw notFound('Payout');
    const status = optString(bodyOf(request), 'status');
    if (status !== 'success' && status !== 'failed') throw badRequest('status must be success or failed');
    if (payout.status !== 'pending') throw badRequest(`Payout is ${payout.status}`);
    payout.status = status;
    if (status === 'failed') state.credit(payout.currency, payout.amount + payout.fee);
    state.touch(payout);
    // The provider then calls the payout's callbackUrl (provider-webhooks.md "Event names").
    const callback =
      payout.callbackUrl && webhookSecret
        ? await deliverCallback(payout.callbackUrl, webhookSecret, {
            event: `payout.transfer.${status}`,
            data: {
              id: payout.id,
              reference: payout.reference,
              status,
              amount: major(payout.amount, payout.currency),
              fees: major(payout.fee, payout.currency),
              action: payoutTransactionView(state, payout).action.toLowerCase(),
              channel: 'payout',
              type: 'debit',
            },
          })
        : null;
    return { transaction: payoutTransactionView(state, payout), callback };
  });

  /** A card spend: a `debit` card transaction of `amount` cents, settled at once (declined → 400). */
  app.post('/__admin/cards/:id/spend', async (request) => {
    const card = cardById(state, param(request, 'id'));
    const body = bodyOf(request);
    const amount = parseMinor(body.amount);
    if (amount === null) throw badRequest('amount must be a positive integer in cents');
    if (card.status !== 'active') throw badRequest(`Card is ${card.status}`);
    if (amount > card.balance) throw badRequest('Insufficient card balance');
    card.balance -= amount;
    state.touch(card);
    const txn = addCardTransaction(state, card, {
      reference: state.newId(),
      amount,
      method: 'spend',
      type: 'debit',
      status: 'success',
      narrative: optString(body, 'narrative') ?? 'Merchant',
    });
    return { transaction: cardTransactionView(txn) };
  });
}
