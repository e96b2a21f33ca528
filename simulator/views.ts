/**
 * How records are answered: field names and the provider's MIXED types (major units as numbers
 * here, as strings there; lower-case codes in most answers, upper-case in get-transaction).
 */
import { COUNTRIES } from './countries';
import { convert, jsonInt, major, majorNumber } from './money';
import {
  type Beneficiary,
  type Card,
  type CardTransaction,
  type CardUser,
  type Collection,
  COMPANY_ID,
  type Customer,
  type Payout,
  type SimulatorState,
  type Swap,
  type SwapQuote,
  type VirtualAccount,
} from './state';

/** The named fields of `record`, in that order (answers keep the provider's field order). */
function pick<T extends object, K extends keyof T>(record: T, ...keys: K[]): Pick<T, K> {
  return Object.fromEntries(keys.map((key) => [key, record[key]])) as Pick<T, K>;
}

/** Page meta of listings (docs/provider.md#conventions). */
export function pageMeta(page: number, take: number, itemCount: number) {
  const pageCount = Math.ceil(itemCount / take);
  return { page, take, itemCount, pageCount, hasPreviousPage: page > 1, hasNextPage: page < pageCount };
}

export const customerView = (c: Customer) =>
  pick(c, 'id', 'createdAt', 'updatedAt', 'firstName', 'lastName', 'email', 'phone', 'countryCode', 'blacklist');

/** Collection initialize answer: `amount` and `fees` as major-unit NUMBERS (65000 kobo → 650). */
export const collectionView = (c: Collection) => ({
  ...pick(c, 'id', 'createdAt', 'updatedAt', 'accountName', 'accountNumber', 'bankName'),
  type: 'credit',
  ...pick(c, 'description', 'customerId'),
  companyId: COMPANY_ID,
  reference: c.reference,
  channel: 'collection',
  amount: majorNumber(c.amount, c.currency),
  currency: c.requestCurrency,
  action: `deposit_${c.currency.toLowerCase()}`,
  status: c.status,
  fees: majorNumber(c.fee, c.currency),
  expiryInSeconds: c.expiryInSeconds,
  expiryDate: new Date(c.expiresAt).toISOString(),
});

export const beneficiaryView = (b: Beneficiary) =>
  pick(b, 'id', 'createdAt', 'updatedAt', 'currency', 'country', 'status', 'destination', 'reference');

const payoutCommon = (p: Payout) => ({
  ...pick(p, 'id', 'createdAt', 'updatedAt'),
  companyId: COMPANY_ID,
  ...pick(p, 'customerId', 'reference'),
  channel: 'payout',
  description: p.description,
  type: 'debit',
  status: p.status,
  action: `${p.country.toLowerCase()}_account_payout`,
});

/** Payout initialize answer: money as major-unit NUMBERS plus `centAmount`/`centFees`. */
export const payoutInitializeView = (p: Payout) => ({
  ...payoutCommon(p),
  fees: majorNumber(p.fee, p.currency),
  centFees: jsonInt(p.fee),
  amount: majorNumber(p.amount, p.currency),
  centAmount: jsonInt(p.amount),
  spotPrice: Number(p.exchangeRate),
});

/** Payout finalize answer: `amount`/`fees` as major-unit STRINGS, no cents; beneficiary is the id. */
export const payoutFinalizeView = (p: Payout) => ({
  ...payoutCommon(p),
  fees: major(p.fee, p.currency),
  amount: major(p.amount, p.currency),
  exchangeRate: p.exchangeRate,
  beneficiary: p.beneficiaryId,
  payoutAmount: majorNumber(p.payoutAmount, p.payoutCurrency),
  payoutCurrency: p.payoutCurrency,
});

const optMajor = (value: bigint | undefined, currency: string) => (value === undefined ? null : major(value, currency));

/** GET /transactions/:id for a payout: upper-case codes, major-unit strings, beneficiary expanded. */
export function payoutTransactionView(state: SimulatorState, p: Payout) {
  const b = state.beneficiaries.get(p.beneficiaryId);
  return {
    id: p.id,
    createdAt: p.createdAt,
    updatedAt: p.updatedAt,
    companyId: COMPANY_ID,
    customerId: p.customerId,
    reference: p.reference,
    channel: 'payout',
    description: p.description,
    type: 'DEBIT',
    status: p.status.toUpperCase(),
    action: `${p.country}_ACCOUNT_PAYOUT`,
    currency: p.currency,
    amount: major(p.amount, p.currency),
    fees: major(p.fee, p.currency),
    exchangeRate: p.exchangeRate,
    beneficiary: b
      ? { id: b.id, ...b.destination, country: b.country, currency: b.currency, reference: b.reference }
      : null,
    payoutAmount: majorNumber(p.payoutAmount, p.payoutCurrency),
    payoutCurrency: p.payoutCurrency,
    payoutUsdAmount: major(convert(p.amount, p.currency, 'USD'), 'USD'),
    balanceBefore: optMajor(p.balanceBefore, p.currency),
    balanceAfter: optMajor(p.balanceAfter, p.currency),
  };
}

/** GET /transactions/:id for a collection (a wallet credit). */
export const collectionTransactionView = (c: Collection) => ({
  id: c.id,
  createdAt: c.createdAt,
  updatedAt: c.updatedAt,
  companyId: COMPANY_ID,
  customerId: c.customerId,
  reference: c.reference,
  channel: 'collection',
  description: c.description,
  type: 'CREDIT',
  status: c.status.toUpperCase(),
  action: `DEPOSIT_${c.currency}`,
  currency: c.currency,
  amount: major(c.amount, c.currency),
  fees: major(c.fee, c.currency),
  balanceBefore: optMajor(c.balanceBefore, c.currency),
  balanceAfter: optMajor(c.balanceAfter, c.currency),
});

/** GET /transactions/:id for a swap (a debit of the source wallet). */
export const swapTransactionView = (s: Swap) => ({
  id: s.id,
  createdAt: s.createdAt,
  updatedAt: s.updatedAt,
  companyId: COMPANY_ID,
  reference: s.reference,
  channel: 'swap',
  description: swapDescription(s),
  type: 'DEBIT',
  status: s.status.toUpperCase(),
  action: `SWAP_${s.sourceCurrency}_${s.targetCurrency}`,
  currency: s.sourceCurrency,
  amount: major(s.amount, s.sourceCurrency),
  fees: major(s.fee, s.sourceCurrency),
  exchangeRate: s.rate,
  spotPrice: s.rate,
  balanceBefore: major(s.balanceBefore, s.sourceCurrency),
  balanceAfter: major(s.balanceAfter, s.sourceCurrency),
});

const swapDescription = (s: Swap) => `Swap ${s.sourceCurrency} to ${s.targetCurrency}`;

/** Swap quote: lower-case codes, every amount a major-unit STRING. */
export const quoteView = (q: SwapQuote, ttlSeconds: number) => ({
  id: q.id,
  createdAt: q.createdAt,
  updatedAt: q.createdAt,
  sourceCurrency: q.sourceCurrency.toLowerCase(),
  targetCurrency: q.targetCurrency.toLowerCase(),
  sourceAmount: major(q.sourceAmount, q.sourceCurrency),
  targetAmount: major(q.targetAmount, q.targetCurrency),
  amount: major(q.targetAmount, q.targetCurrency),
  usdAmount: major(convert(q.sourceAmount, q.sourceCurrency, 'USD'), 'USD'),
  fee: major(q.fee, q.sourceCurrency),
  expiration: new Date(q.expiresAt).toISOString(),
  expirationInSec: String(ttlSeconds),
  conversionRate: { amount: q.rate, currency: q.targetCurrency.toLowerCase() },
});

/** Swap finalize answer: money as major-unit NUMBERS of the source currency, `spotPrice` a string. */
export const swapView = (s: Swap) => ({
  id: s.id,
  createdAt: s.createdAt,
  updatedAt: s.updatedAt,
  reference: s.reference,
  description: swapDescription(s),
  balanceAfter: majorNumber(s.balanceAfter, s.sourceCurrency),
  amount: majorNumber(s.amount, s.sourceCurrency),
  centAmount: jsonInt(s.amount),
  fees: majorNumber(s.fee, s.sourceCurrency),
  centFees: jsonInt(s.fee),
  spotPrice: s.rate,
  action: `swap_${s.sourceCurrency.toLowerCase()}_${s.targetCurrency.toLowerCase()}`,
  type: 'debit',
  status: s.status,
  channel: 'swap',
  companyId: COMPANY_ID,
});

export const virtualAccountView = (v: VirtualAccount) => ({
  ...pick(v, 'id', 'createdAt', 'updatedAt'),
  currency: 'ngn',
  ...pick(v, 'bank', 'customerId', 'bankName', 'reference', 'accountName', 'accountNumber', 'status'),
});

/** Card creation answer: ONLY these fields (docs/provider.md#cards), customerId null as in the sample. */
export const cardCreationView = (c: Card) => ({
  ...pick(c, 'id', 'createdAt', 'updatedAt', 'cardType', 'cardBrand', 'cardUserId', 'reference', 'createdStatus'),
  customerId: null,
});

export const BILLING_ADDRESS = {
  city: 'San Francisco',
  street: '256 Chapman Road STE 105-4',
  zipCode: '94103',
  countryCode: 'US',
  country: 'United States',
};

/** The full card record, INCLUDING cardNumber and cvv2 (the provider sends them; the gateway must strip them). */
export const cardView = (state: SimulatorState, c: Card) => ({
  ...pick(c, 'id', 'createdAt', 'updatedAt'),
  balance: majorNumber(c.balance, 'USD'),
  cardNumber: c.cardNumber,
  last4: c.cardNumber.slice(-4),
  ...pick(c, 'cardName', 'cardType', 'cardBrand', 'cvv2', 'expiry', 'valid', 'status', 'reference', 'createdStatus'),
  customerId: c.customerId,
  billingAddress: BILLING_ADDRESS,
  customerEmail: state.customers.get(c.customerId)?.email ?? null,
});

/**
 * A card transaction. Top-up/withdraw answers carry `amount` (major) and `centAmount` as NUMBERS;
 * listings carry both as STRINGS (the doc: "number or string").
 */
export const cardTransactionView = (t: CardTransaction, asStrings = false) => ({
  ...pick(t, 'id', 'createdAt', 'updatedAt'),
  amount: asStrings ? major(t.amount, 'USD') : majorNumber(t.amount, 'USD'),
  centAmount: asStrings ? t.amount.toString() : jsonInt(t.amount),
  ...pick(t, 'type', 'method', 'narrative', 'status'),
  currency: 'usd',
  ...pick(t, 'reference', 'cardId'),
});

/** Supported-country answer (the internal currency left out). */
export function countryView(code: string) {
  const country = COUNTRIES[code];
  if (!country) return undefined;
  const { currency: _currency, ...requirement } = country;
  return requirement;
}

export const cardUserView = (u: CardUser, email: string) => ({
  ...pick(u, 'id', 'createdAt', 'updatedAt', 'customerId'),
  customerEmail: email,
  ...pick(u, 'firstName', 'lastName', 'phoneNumber', 'idType', 'country', 'status'),
  kycPassed: u.status === 'active',
});

/**
 * One money movement for GET /__admin/records: `amount` (and `fee`) in MINOR units as strings,
 * upper-case `currency`. Kinds: payout, swap (amount of the source currency), collection, card
 * (the initial amount moved from the USD wallet at creation) and card_transaction (USD cents).
 */
export interface MoneyRecordView {
  id: string;
  kind: 'payout' | 'swap' | 'collection' | 'card' | 'card_transaction';
  reference: string;
  status: string;
  amount: string;
  currency: string;
  fee?: string;
  createdAt: string;
  updatedAt: string;
  /** card_transaction: topup, withdrawal, spend or credit; and its card. */
  method?: string;
  cardId?: string;
}

/** Every money movement the simulator holds, oldest kind first (payouts, swaps, collections, cards, card transactions). */
export function moneyRecordsView(state: SimulatorState): MoneyRecordView[] {
  const at = (r: { createdAt: string; updatedAt: string }) => ({ createdAt: r.createdAt, updatedAt: r.updatedAt });
  return [
    ...[...state.payouts.values()].map((p) => ({
      id: p.id,
      kind: 'payout' as const,
      reference: p.reference,
      status: p.status,
      amount: p.amount.toString(),
      currency: p.currency,
      fee: p.fee.toString(),
      ...at(p),
    })),
    ...[...state.swaps.values()].map((s) => ({
      id: s.id,
      kind: 'swap' as const,
      reference: s.reference,
      status: s.status,
      amount: s.amount.toString(),
      currency: s.sourceCurrency,
      fee: s.fee.toString(),
      ...at(s),
    })),
    ...[...state.collections.values()].map((c) => ({
      id: c.id,
      kind: 'collection' as const,
      reference: c.reference,
      status: state.refreshCollection(c).status,
      amount: c.amount.toString(),
      currency: c.currency,
      fee: c.fee.toString(),
      ...at(c),
    })),
    ...[...state.cards.values()]
      .filter((c) => c.initialAmount > 0n)
      .map((c) => ({
        id: c.id,
        kind: 'card' as const,
        reference: c.reference,
        status: c.createdStatus,
        amount: c.initialAmount.toString(),
        currency: 'USD',
        ...at(c),
      })),
    ...state.cardTransactions.map((t) => ({
      id: t.id,
      kind: 'card_transaction' as const,
      reference: t.reference,
      status: t.status,
      amount: t.amount.toString(),
      currency: 'USD',
      ...at(t),
      method: t.method,
      cardId: t.cardId,
    })),
  ];
}
