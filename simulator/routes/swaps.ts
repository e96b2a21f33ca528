import { badRequest, bodyOf, envelope, notFound, requireFields, str } from '../http';
import { convert, feeOf, isCurrency, parseMajor, parseMinor, rate } from '../money';
import { op } from '../operations';
import type { Swap, SwapQuote } from '../state';
import { quoteView, swapView } from '../views';
import type { RouteModule } from './context';

/** Swap fee: 0.5% of the source amount (50 basis points), charged on top, in the source currency. */
export const SWAP_FEE_BP = 50n;

/**
 * initializeSwap (a quote that expires after quoteTtlSeconds) and finalizeSwap (executes it once).
 * The request's `amount` is read in `config.swapAmountUnit` (the provider gives no unit, docs/provider.md#units; its
 * samples read as major: amount 10 → sourceAmount "10"); the quote always answers its amounts as
 * major decimal strings and finalize as `amount` (major) + `centAmount` (minor), as documented. A
 * gateway sending the other unit thus sees the quote's sourceAmount ×100 (or ÷100) of its request.
 */
export const swapRoutes: RouteModule = (api, { state, config }) => {
  api.post('/wallets/initialize-swap', op('initializeSwap'), async (request) => {
    const body = bodyOf(request);
    requireFields(body, ['sourceCurrency', 'amount', 'targetCurrency']);
    const source = str(body, 'sourceCurrency').toUpperCase();
    const target = str(body, 'targetCurrency').toUpperCase();
    if (!isCurrency(source) || !isCurrency(target) || source === target)
      throw badRequest(`Unsupported currency pair ${source}/${target}`);
    const amount = config.swapAmountUnit === 'major' ? parseMajor(body.amount, source) : parseMinor(body.amount);
    if (amount === null) {
      throw badRequest(
        config.swapAmountUnit === 'major'
          ? `amount must be a positive decimal in ${source} with at most its fraction digits`
          : 'amount must be a positive integer in minor units',
      );
    }
    const targetAmount = convert(amount, source, target);
    if (targetAmount === 0n) throw badRequest('amount is too small to swap');
    const quote: SwapQuote = {
      id: state.newId(),
      createdAt: state.iso(),
      sourceCurrency: source,
      targetCurrency: target,
      sourceAmount: amount,
      targetAmount,
      fee: feeOf(amount, SWAP_FEE_BP),
      rate: rate(source, target),
      expiresAt: state.now() + config.quoteTtlSeconds * 1000,
    };
    state.quotes.set(quote.id, quote);
    return envelope(quoteView(quote, config.quoteTtlSeconds), 'Swap quote generated successfully');
  });

  api.post('/wallets/finalize-swap', op('finalizeSwap'), async (request) => {
    const quote = state.quotes.get(str(bodyOf(request), 'quoteId'));
    if (!quote) throw notFound('Quote');
    if (quote.swapId) throw badRequest('Quote has already been used');
    if (state.now() > quote.expiresAt) throw badRequest('Quote has expired');
    const { before, after } = state.debit(quote.sourceCurrency, quote.sourceAmount + quote.fee);
    state.credit(quote.targetCurrency, quote.targetAmount);
    const swap: Swap = {
      ...state.stamp(),
      reference: `swap-${quote.id}`,
      quoteId: quote.id,
      sourceCurrency: quote.sourceCurrency,
      targetCurrency: quote.targetCurrency,
      amount: quote.sourceAmount,
      fee: quote.fee,
      targetAmount: quote.targetAmount,
      rate: quote.rate,
      balanceBefore: before,
      balanceAfter: after,
      status: 'success',
    };
    quote.swapId = swap.id;
    state.swaps.set(swap.id, swap);
    return envelope(swapView(swap), 'Swap completed successfully');
  });
};
