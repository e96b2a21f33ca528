import type { Dispatched } from '../callbacks';
import { destinationProblems, findCountry } from '../countries';
import { beneficiaryEvent, payoutEvent } from '../events';
import { badRequest, bodyOf, envelope, notFound, optString, requireFields, str } from '../http';
import { convert, feeOf, INT32_MAX, isCurrency, isFailureAmount, parseMinor, rate } from '../money';
import { op } from '../operations';
import type { Beneficiary, Payout } from '../state';
import { beneficiaryView, countryView, payoutFinalizeView, payoutInitializeView } from '../views';
import { param, type RouteContext, type RouteModule } from './context';

/** Payout fee: 1% of the amount (100 basis points), at least 100 minor units. */
export const PAYOUT_FEE_BP = 100n;
export const PAYOUT_MIN_FEE = 100n;

/** Why a payout of a trigger amount fails (money.ts `isFailureAmount`). */
export const PAYOUT_FAILURE_REASON = 'Beneficiary account could not be credited (simulated)';

/** How a pending payout ends by itself: failed when its major amount's integer part ends in 13, else success. */
export function payoutOutcome(payout: Payout): 'success' | 'failed' {
  return isFailureAmount(payout.amount, payout.currency) ? 'failed' : 'success';
}

/**
 * Completes a `pending` payout as `status` (failed refunds the wallet amount + fee) and dispatches
 * `payout.transfer.<status>` to its callbackUrl, else the account webhook URL.
 */
export function completePayout(
  { state, callbacks }: Pick<RouteContext, 'state' | 'callbacks'>,
  payout: Payout,
  status: 'success' | 'failed',
): Dispatched {
  payout.status = status;
  if (status === 'failed') state.credit(payout.currency, payout.amount + payout.fee);
  state.touch(payout);
  const { event, data } = payoutEvent(state, payout, status === 'failed' ? PAYOUT_FAILURE_REASON : undefined);
  return callbacks.dispatch(event, data, { url: payout.callbackUrl });
}

/**
 * getSupportedCountry, createBeneficiary (then `beneficiary.status.success` when
 * `beneficiaryCallbackDelayMs` is set), initializePayout, finalizePayout (then, with
 * `payoutCompleteDelayMs`, the payout completes by itself: see `payoutOutcome`).
 */
export const payoutRoutes: RouteModule = (api, ctx) => {
  const { state, config, callbacks } = ctx;
  api.get('/wallets/payout/supported-countries/:country_code', op('getSupportedCountry'), async (request) => {
    const requirement = countryView(param(request, 'country_code').toUpperCase());
    if (!requirement) throw notFound('Country');
    return envelope(requirement, 'Country requirements retrieved successfully');
  });

  api.post('/beneficiaries', op('createBeneficiary'), async (request) => {
    const body = bodyOf(request);
    requireFields(body, ['currency', 'reference', 'country', 'destination', 'customerEmail']);
    const customer = state.requireCustomer(body.customerEmail);
    const country = findCountry(body.country);
    if (!country) throw badRequest(`Country ${String(body.country)} is not supported`);
    if (str(body, 'currency').toUpperCase() !== country.currency)
      throw badRequest(`currency must be ${country.currency} for ${country.code}`);
    const problems = destinationProblems(country, body.destination);
    if (problems.length) throw badRequest(problems.join('; '));
    const reference = str(body, 'reference');
    state.claimReference('beneficiary', reference);
    const beneficiary: Beneficiary = {
      ...state.stamp(),
      customerId: customer.id,
      reference,
      country: country.code,
      currency: country.currency,
      status: 'success',
      destination: { ...(body.destination as Record<string, string>) },
      callbackUrl: optString(body, 'callbackUrl'),
    };
    state.beneficiaries.set(beneficiary.id, beneficiary);
    if (config.beneficiaryCallbackDelayMs !== undefined) {
      const { event, data } = beneficiaryEvent(beneficiary);
      callbacks.dispatch(event, data, { url: beneficiary.callbackUrl, afterMs: config.beneficiaryCallbackDelayMs });
    }
    return envelope(beneficiaryView(beneficiary), 'Beneficiary created successfully');
  });

  api.post('/wallets/payout/initialize', op('initializePayout'), async (request) => {
    const body = bodyOf(request);
    requireFields(body, ['amount', 'reference', 'customerEmail', 'beneficiaryId']);
    const customer = state.requireCustomer(body.customerEmail);
    const beneficiary = state.beneficiaries.get(str(body, 'beneficiaryId'));
    if (!beneficiary) throw notFound('Beneficiary');
    const amount = parseMinor(body.amount);
    if (amount === null || amount > INT32_MAX) throw badRequest('amount must be a positive int32 in minor units');
    const currency = (optString(body, 'sourceWalletCurrency') ?? 'USD').toUpperCase();
    if (!isCurrency(currency)) throw badRequest(`Unsupported wallet currency ${currency}`);
    const fee = feeOf(amount, PAYOUT_FEE_BP, PAYOUT_MIN_FEE);
    state.ensureBalance(currency, amount + fee);
    const reference = str(body, 'reference');
    state.claimReference('payout', reference);
    const payout: Payout = {
      ...state.stamp(),
      initiatedAt: state.now(),
      customerId: customer.id,
      reference,
      description: optString(body, 'description') ?? '',
      beneficiaryId: beneficiary.id,
      country: beneficiary.country,
      currency,
      amount,
      fee,
      status: 'initiated',
      payoutCurrency: beneficiary.currency,
      payoutAmount: convert(amount, currency, beneficiary.currency),
      exchangeRate: rate(currency, beneficiary.currency),
      callbackUrl: optString(body, 'callbackUrl'),
    };
    state.payouts.set(payout.id, payout);
    return envelope(payoutInitializeView(payout), 'Payout initiated successfully');
  });

  api.post('/wallets/payout/finalize', op('finalizePayout'), async (request) => {
    const payout = state.payouts.get(str(bodyOf(request), 'transactionId'));
    if (!payout) throw notFound('Transaction');
    if (payout.status !== 'initiated') throw badRequest(`Transaction cannot be finalized: it is ${payout.status}`);
    if (state.now() - payout.initiatedAt > config.payoutRateWindowSeconds * 1000) {
      payout.status = 'expired';
      state.touch(payout);
      throw badRequest('Rate has expired; initialize the payout again');
    }
    const { before, after } = state.debit(payout.currency, payout.amount + payout.fee);
    Object.assign(payout, { balanceBefore: before, balanceAfter: after, status: 'pending' });
    state.touch(payout);
    if (config.payoutCompleteDelayMs !== undefined) {
      state.later(config.payoutCompleteDelayMs, () => {
        if (payout.status === 'pending') completePayout(ctx, payout, payoutOutcome(payout));
      });
    }
    return envelope(payoutFinalizeView(payout), 'Payout is being processed');
  });
};
