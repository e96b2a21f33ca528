import { envelope, notFound } from '../http';
import { op } from '../operations';
import type { SimulatorState } from '../state';
import { collectionTransactionView, payoutTransactionView, swapTransactionView } from '../views';
import { param, type RouteModule } from './context';

/** A payout, collection or swap in the get-transaction shape (upper-case codes, string money); undefined if unknown. */
export function transactionById(state: SimulatorState, id: string) {
  const payout = state.payouts.get(id);
  if (payout) return payoutTransactionView(state, payout);
  const collection = state.collections.get(id);
  if (collection) return collectionTransactionView(state.refreshCollection(collection));
  const swap = state.swaps.get(id);
  return swap ? swapTransactionView(swap) : undefined;
}

/** getTransaction. */
export const transactionRoutes: RouteModule = (api, { state }) => {
  api.get('/transactions/:transaction_id', op('getTransaction'), async (request) => {
    const transaction = transactionById(state, param(request, 'transaction_id'));
    if (!transaction) throw notFound('Transaction');
    return envelope(transaction, 'Transaction retrieved successfully');
  });
};
