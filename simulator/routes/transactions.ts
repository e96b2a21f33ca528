import { envelope, notFound } from '../http';
import { major } from '../money';
import { op } from '../operations';
import type { SimulatorState } from '../state';
import { collectionTransactionView, payoutTransactionView, swapTransactionView } from '../views';
import { param, type RouteModule } from './context';

/**
 * A payout, collection or swap in the get-transaction shape (upper-case codes, string money), with
 * its disagreement switch applied (status, amount); undefined if unknown.
 */
export function transactionById(state: SimulatorState, id: string) {
  const view = recordById(state, id);
  const disagreement = state.disagreements.get(id);
  if (!view || !disagreement) return view;
  if (disagreement.missing) return undefined;
  return {
    ...view,
    ...(disagreement.status ? { status: disagreement.status.toUpperCase() } : {}),
    ...(disagreement.amount !== undefined ? { amount: major(disagreement.amount, view.currency) } : {}),
  };
}

function recordById(state: SimulatorState, id: string) {
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
