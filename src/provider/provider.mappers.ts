/**
 * Wire → model mappers. The unit of every amount they read comes from the one table,
 * `provider-units.ts` (`unitOf(operation, 'answer', field)`): e.g. MAJOR units in `amount`/`fees`
 * and MINOR units in `centAmount`/`centFees` (preferred when present); get-transaction writes money
 * as major strings and codes in upper case.
 * A mapper that meets a missing or unreadable field throws `MalformedAnswerError`, which the
 * client turns into `provider_unavailable`.
 */
import { normaliseCurrency, parseRate, type Rounding } from '../common/money';
import { storableText } from '../common/storable-text';
import { cardMovementStatus } from './card-events.mapper';
import { type AmountUnit, fromWireAmount, unitOf } from './provider-units';
import type {
  ProviderBeneficiary,
  ProviderCard,
  ProviderCardCreation,
  ProviderCardTransaction,
  ProviderCardTransactionPage,
  ProviderCardUser,
  ProviderCollection,
  ProviderCountryRequirement,
  ProviderCustomer,
  ProviderDestination,
  ProviderDestinationField,
  ProviderPageMeta,
  ProviderPayout,
  ProviderRecord,
  ProviderSwap,
  ProviderSwapQuote,
  ProviderVirtualAccount,
} from './provider.models';
import type {
  WireBeneficiary,
  WireCardCreation,
  WireCardTransaction,
  WireCardTransactionList,
  WireCollection,
  WireCountryRequirement,
  WireCustomer,
  WireFieldDescriptor,
  WireMoney,
  WirePageMeta,
  WirePayoutTransaction,
  WireRecord,
  WireSwapQuote,
  WireSwapTransaction,
  WireVirtualAccount,
  WireVirtualCard,
} from './provider.types';

type Data = Record<string, unknown>;

/** The provider answered 200 with a body the gateway cannot read. Internal to `src/provider`. */
export class MalformedAnswerError extends Error {}

/** The currency of virtual cards, whose records do not name one (docs/provider.md#cards). */
export const CARD_CURRENCY = 'USD';

const CARD_SECRET_KEYS = new Set(['cardnumber', 'cvv2', 'cvv', 'pan']);

/**
 * The copy of a provider answer the gateway keeps (`raw`, stored in jsonb): a deep copy of `value`
 * without card secrets, whose text PostgreSQL can store.
 * - Every key named `cardNumber`, `cvv2`, `cvv` or `pan` (any case, `_`/`-` ignored) is removed at
 *   any depth, in objects and arrays.
 * - Every string, keys included, has each NUL character and each unpaired UTF-16 surrogate
 *   replaced by U+FFFD (`storableText`): jsonb refuses both, and an echo of hostile text must not
 *   leave a ledger row `unknown` after the provider was called.
 * Input is not changed.
 */
export function stripCardSecrets<T>(value: T): T {
  if (typeof value === 'string') return storableText(value) as T;
  if (Array.isArray(value)) return value.map((item: unknown) => stripCardSecrets(item)) as T;
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  const out: Data = {};
  for (const [key, item] of Object.entries(value as Data)) {
    if (!CARD_SECRET_KEYS.has(key.toLowerCase().replace(/[_-]/g, ''))) out[storableText(key)] = stripCardSecrets(item);
  }
  return out as T;
}

/** Replaces anything that looks like a card number (12–19 digits, spaces or dashes allowed) in free text. */
export function maskCardNumbers(text: string): string {
  return text.replace(/\b\d(?:[ -]?\d){11,18}\b/g, '[REDACTED]');
}

/** Typed, checked reads of one `data` object; field names are checked against the wire type `T`. */
class Fields<T> {
  constructor(
    private readonly data: Data,
    private readonly at = '',
  ) {}

  private fail(key: string, problem: string): never {
    throw new MalformedAnswerError(`${this.at}${key} ${problem}`);
  }

  private get(key: keyof T & string): unknown {
    const value = this.data[key];
    return value === null ? undefined : value;
  }

  has(key: keyof T & string): boolean {
    return this.get(key) !== undefined;
  }

  /** The text of a string (or finite number) field, made storable (no NUL, no lone surrogate: `storableText`). */
  optStr(key: keyof T & string): string | null {
    const value = this.get(key);
    if (value === undefined) return null;
    if (typeof value === 'string') return storableText(value);
    if (typeof value === 'number' && Number.isFinite(value)) return String(value);
    return this.fail(key, 'is not a string');
  }

  str(key: keyof T & string): string {
    return this.optStr(key) ?? this.fail(key, 'is missing');
  }

  /** Lower-case code (status, type, action, method). */
  optCode(key: keyof T & string): string | null {
    return this.optStr(key)?.toLowerCase() ?? null;
  }

  code(key: keyof T & string): string {
    return this.str(key).toLowerCase();
  }

  bool(key: keyof T & string, fallback?: boolean): boolean {
    const value = this.get(key);
    if (typeof value === 'boolean') return value;
    return value === undefined && fallback !== undefined ? fallback : this.fail(key, 'is not a boolean');
  }

  optInt(key: keyof T & string): number | null {
    const value = this.get(key);
    if (value === undefined) return null;
    const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
    return Number.isSafeInteger(n) ? (n as number) : this.fail(key, 'is not an integer');
  }

  int(key: keyof T & string): number {
    return this.optInt(key) ?? this.fail(key, 'is missing');
  }

  optDate(key: keyof T & string): Date | null {
    const text = this.optStr(key);
    if (text === null) return null;
    const date = new Date(text);
    return Number.isNaN(date.getTime()) ? this.fail(key, 'is not a timestamp') : date;
  }

  date(key: keyof T & string): Date {
    return this.optDate(key) ?? this.fail(key, 'is missing');
  }

  optCurrency(key: keyof T & string): string | null {
    const text = this.optStr(key);
    return text === null ? null : this.guard(key, () => normaliseCurrency(text));
  }

  currency(key: keyof T & string): string {
    return this.optCurrency(key) ?? this.fail(key, 'is missing');
  }

  /** A money field of `currency` in `unit` (from the unit table) → minor units; null when absent. */
  optAmount(key: keyof T & string, unit: AmountUnit, currency: string, rounding: Rounding): bigint | null {
    const value = this.money(key);
    return value === null ? null : this.guard(key, () => fromWireAmount(value, currency, unit, rounding, key));
  }

  amount(key: keyof T & string, unit: AmountUnit, currency: string, rounding: Rounding): bigint {
    return this.optAmount(key, unit, currency, rounding) ?? this.fail(key, 'is missing');
  }

  /** The first of `fields` present (e.g. `centAmount`, then `amount`), each in its own unit; null if none. */
  firstAmount(
    fields: Array<[key: keyof T & string, unit: AmountUnit]>,
    currency: string,
    rounding: Rounding,
  ): bigint | null {
    for (const [key, unit] of fields) {
      const value = this.optAmount(key, unit, currency, rounding);
      if (value !== null) return value;
    }
    return null;
  }

  optRate(key: keyof T & string): string | null {
    const value = this.money(key);
    return value === null ? null : this.guard(key, () => parseRate(value));
  }

  optObject(key: keyof T & string): Data | null {
    const value = this.get(key);
    if (value === undefined) return null;
    return isObject(value) ? value : this.fail(key, 'is not an object');
  }

  object(key: keyof T & string): Data {
    return this.optObject(key) ?? this.fail(key, 'is missing');
  }

  /** Reader of a nested object, naming the path in errors. */
  nested<U>(key: keyof T & string): Fields<U> {
    return new Fields<U>(this.object(key), `${this.at}${key}.`);
  }

  private money(key: keyof T & string): WireMoney | null {
    const value = this.get(key);
    if (value === undefined) return null;
    return typeof value === 'number' || typeof value === 'string' ? value : this.fail(key, 'is not a number or string');
  }

  private guard<R>(key: string, read: () => R): R {
    try {
      return read();
    } catch (error) {
      return this.fail(key, `is invalid (${(error as Error).message})`);
    }
  }
}

/** True for a plain JSON object (not null, not an array). */
export function isObject(value: unknown): value is Data {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function base(data: Data, f: Fields<WireRecord>): ProviderRecord {
  return {
    id: f.str('id'),
    createdAt: f.optDate('createdAt'),
    updatedAt: f.optDate('updatedAt'),
    raw: stripCardSecrets(data),
  };
}

/** Customer (docs/provider.md#customers): `blacklist` → `blacklisted`. */
export function toCustomer(data: Data): ProviderCustomer {
  const f = new Fields<WireCustomer>(data);
  return {
    ...base(data, f),
    email: f.str('email'),
    firstName: f.optStr('firstName'),
    lastName: f.optStr('lastName'),
    phone: f.optStr('phone'),
    countryCode: f.optStr('countryCode'),
    blacklisted: f.bool('blacklist', false),
  };
}

/** Collection (docs/provider.md#collections): units of `amount`/`fees` per the unit table (major). */
export function toCollection(data: Data): ProviderCollection {
  const f = new Fields<WireCollection>(data);
  const currency = f.currency('currency');
  const unit = (field: 'amount' | 'fees') => unitOf('initializeCollection', 'answer', field);
  return {
    ...base(data, f),
    reference: f.str('reference'),
    status: f.code('status'),
    currency,
    amountMinor: f.amount('amount', unit('amount'), currency, 'reject'),
    feeMinor: f.optAmount('fees', unit('fees'), currency, 'half-even') ?? 0n,
    accountName: f.optStr('accountName'),
    accountNumber: f.str('accountNumber'),
    bankName: f.optStr('bankName'),
    customerId: f.optStr('customerId'),
    description: f.optStr('description'),
    expiresAt: f.date('expiryDate'),
    expiryInSeconds: f.optInt('expiryInSeconds'),
  };
}

function toDestination(value: Data, at: string): ProviderDestination {
  const entries = Object.entries(value).map(([key, item]) => {
    if (typeof item !== 'string' && typeof item !== 'number')
      throw new MalformedAnswerError(`${at}.${key} is not a string`);
    return [key, String(item)] as const;
  });
  const destination = Object.fromEntries(entries) as ProviderDestination;
  if (!destination.type) throw new MalformedAnswerError(`${at}.type is missing`);
  return destination;
}

/** Beneficiary (docs/provider.md#beneficiaries). */
export function toBeneficiary(data: Data): ProviderBeneficiary {
  const f = new Fields<WireBeneficiary>(data);
  return {
    ...base(data, f),
    reference: f.str('reference'),
    status: f.code('status'),
    currency: f.currency('currency'),
    country: f.str('country').toUpperCase(),
    destination: toDestination(f.object('destination'), 'destination'),
  };
}

/** Country requirement (docs/provider.md#beneficiaries). */
export function toCountryRequirement(data: Data): ProviderCountryRequirement {
  const f = new Fields<WireCountryRequirement>(data);
  const destinations: Record<string, ProviderDestinationField[]> = {};
  for (const [type, list] of Object.entries(f.object('destination'))) {
    if (!Array.isArray(list)) throw new MalformedAnswerError(`destination.${type} is not an array`);
    destinations[type] = list.map((item, i) => {
      if (!isObject(item)) throw new MalformedAnswerError(`destination.${type}[${i}] is not an object`);
      const d = new Fields<WireFieldDescriptor>(item, `destination.${type}[${i}].`);
      const field: ProviderDestinationField = {
        name: d.str('name'),
        type: d.str('type'),
        required: d.bool('required', false),
      };
      const constant = d.optStr('const');
      const pattern = d.optStr('pattern');
      if (constant !== null) field.const = constant;
      if (Array.isArray(item.enum)) field.enum = item.enum.map(String);
      if (pattern !== null) field.pattern = pattern;
      return field;
    });
  }
  return {
    code: f.str('code').toUpperCase(),
    name: f.str('name'),
    flag: f.optStr('flag'),
    dialCode: f.optStr('dialCode'),
    destinations,
    raw: stripCardSecrets(data),
  };
}

/** The operations whose answer is a payout or swap transaction record. */
export type LedgerOperation = 'initializePayout' | 'finalizePayout' | 'getTransaction' | 'finalizeSwap';

/**
 * Fields shared by payout and swap transactions: reference, codes, and amount and fee in minor
 * units of `currency` (`centAmount`/`centFees` when present, else `amount`/`fees`; units per the
 * unit table for `operation`).
 */
function ledgerFields(
  f: Fields<WirePayoutTransaction> | Fields<WireSwapTransaction>,
  currency: string,
  operation: LedgerOperation,
) {
  const fields = f as Fields<WirePayoutTransaction & WireSwapTransaction>;
  const unit = (field: 'centAmount' | 'amount' | 'centFees' | 'fees') => unitOf(operation, 'answer', field);
  return {
    reference: fields.str('reference'),
    status: fields.code('status'),
    type: fields.code('type'),
    action: fields.code('action'),
    channel: fields.optCode('channel'),
    description: fields.optStr('description'),
    currency,
    amountMinor:
      fields.firstAmount(
        [
          ['centAmount', unit('centAmount')],
          ['amount', unit('amount')],
        ],
        currency,
        'reject',
      ) ?? failMissing('amount'),
    feeMinor:
      fields.firstAmount(
        [
          ['centFees', unit('centFees')],
          ['fees', unit('fees')],
        ],
        currency,
        'half-even',
      ) ?? 0n,
  };
}

/**
 * Payout transaction (docs/provider.md#payouts) from initialize, finalize or
 * get-transaction (`operation`, for the unit table). `walletCurrency` is used when the answer has
 * no `currency` (initialize, finalize).
 */
export function toPayout(
  data: Data,
  operation: 'initializePayout' | 'finalizePayout' | 'getTransaction',
  walletCurrency?: string,
): ProviderPayout {
  const f = new Fields<WirePayoutTransaction>(data);
  const currency =
    f.optCurrency('currency') ?? (walletCurrency ? normaliseCurrency(walletCurrency) : f.currency('currency'));
  const payoutCurrency = f.optCurrency('payoutCurrency');
  const beneficiary = data.beneficiary;
  return {
    ...base(data, f),
    ...ledgerFields(f, currency, operation),
    spotPrice: f.optRate('spotPrice'),
    exchangeRate: f.optRate('exchangeRate'),
    beneficiaryId:
      typeof beneficiary === 'string'
        ? beneficiary
        : isObject(beneficiary) && typeof beneficiary.id === 'string'
          ? beneficiary.id
          : null,
    beneficiaryDetails: isObject(beneficiary) ? stripCardSecrets(beneficiary) : null,
    payoutAmountMinor:
      payoutCurrency && operation !== 'initializePayout'
        ? f.optAmount('payoutAmount', unitOf(operation, 'answer', 'payoutAmount'), payoutCurrency, 'half-even')
        : null,
    payoutCurrency,
    balanceBeforeMinor:
      operation === 'getTransaction'
        ? f.optAmount('balanceBefore', unitOf(operation, 'answer', 'balanceBefore'), currency, 'half-even')
        : null,
    balanceAfterMinor:
      operation === 'getTransaction'
        ? f.optAmount('balanceAfter', unitOf(operation, 'answer', 'balanceAfter'), currency, 'half-even')
        : null,
    customerId: f.optStr('customerId'),
    companyId: f.optStr('companyId'),
  };
}

/** Swap quote (docs/provider.md#swaps): units of its amounts per the unit table (major decimal strings). */
export function toSwapQuote(data: Data): ProviderSwapQuote {
  const f = new Fields<WireSwapQuote>(data);
  const unit = (field: 'sourceAmount' | 'targetAmount' | 'fee') => unitOf('initializeSwap', 'answer', field);
  const sourceCurrency = f.currency('sourceCurrency');
  const targetCurrency = f.currency('targetCurrency');
  const rate = f.nested<WireSwapQuote['conversionRate']>('conversionRate');
  return {
    ...base(data, f),
    sourceCurrency,
    targetCurrency,
    sourceAmountMinor: f.amount('sourceAmount', unit('sourceAmount'), sourceCurrency, 'reject'),
    targetAmountMinor: f.amount('targetAmount', unit('targetAmount'), targetCurrency, 'half-even'),
    feeMinor: f.optAmount('fee', unit('fee'), sourceCurrency, 'half-even') ?? 0n,
    rate: rate.optRate('amount') ?? failMissing('conversionRate.amount'),
    rateCurrency: rate.optCurrency('currency'),
    expiresAt: f.date('expiration'),
    expiresInSeconds: f.optInt('expirationInSec'),
  };
}

/** Swap transaction (docs/provider.md#swaps), money in `sourceCurrency`. */
export function toSwap(data: Data, sourceCurrency: string): ProviderSwap {
  const f = new Fields<WireSwapTransaction>(data);
  const currency = normaliseCurrency(sourceCurrency);
  return {
    ...base(data, f),
    ...ledgerFields(f, currency, 'finalizeSwap'),
    balanceAfterMinor: f.optAmount(
      'balanceAfter',
      unitOf('finalizeSwap', 'answer', 'balanceAfter'),
      currency,
      'half-even',
    ),
    spotPrice: f.optRate('spotPrice'),
  };
}

/** Virtual account (docs/provider.md#virtual-accounts): lower-case `currency` → upper-case. */
export function toVirtualAccount(data: Data): ProviderVirtualAccount {
  const f = new Fields<WireVirtualAccount>(data);
  return {
    ...base(data, f),
    reference: f.str('reference'),
    status: f.code('status'),
    currency: f.currency('currency'),
    bank: f.code('bank'),
    bankName: f.optStr('bankName'),
    accountName: f.str('accountName'),
    accountNumber: f.str('accountNumber'),
    customerId: f.optStr('customerId'),
  };
}

/** Card user statuses that mean KYC was refused at once. */
const REFUSED_CARD_USER_STATUSES = ['failed', 'rejected', 'declined'];

/** Register-card-user answer ("not shown"): any `id` and `status` it carries. */
export function toCardUser(data: Data): ProviderCardUser {
  const f = new Fields<{ id: string; status: string }>(data);
  const status = f.optCode('status');
  return {
    id: f.optStr('id'),
    status,
    kycRefused: REFUSED_CARD_USER_STATUSES.includes(status ?? ''),
    raw: stripCardSecrets(data),
  };
}

/**
 * Card-creation record (docs/provider.md#cards, creation response). The documented answer
 * carries no amount; `amountMinor` is read (`centAmount`, else `amount`, units per the unit table)
 * only if it does, so that the funding can be checked against the request.
 */
export function toCardCreation(data: Data): ProviderCardCreation {
  const f = new Fields<WireCardCreation>(data);
  const unit = (field: 'centAmount' | 'amount') => unitOf('createCard', 'answer', field);
  return {
    ...base(data, f),
    reference: f.str('reference'),
    createdStatus: f.code('createdStatus'),
    cardType: f.optCode('cardType'),
    brand: f.optCode('cardBrand'),
    cardUserId: f.optStr('cardUserId'),
    customerId: f.optStr('customerId'),
    amountMinor: f.firstAmount(
      [
        ['centAmount', unit('centAmount')],
        ['amount', unit('amount')],
      ],
      CARD_CURRENCY,
      'reject',
    ),
  };
}

/**
 * Full card record (the answer of `operation`) → `ProviderCard`, dropping `cardNumber` and `cvv2`
 * (last4 falls back to the number's tail); `balance` unit per the unit table.
 */
export function toCard(data: Data, operation: 'freezeCard' | 'unfreezeCard' | 'terminateCard'): ProviderCard {
  const f = new Fields<WireVirtualCard>(data);
  const last4 = f.optStr('last4') ?? f.optStr('cardNumber')?.replace(/\D/g, '').slice(-4) ?? failMissing('last4');
  return {
    ...base(data, f),
    reference: f.optStr('reference'),
    status: f.code('status'),
    createdStatus: f.optCode('createdStatus'),
    last4,
    brand: f.optCode('cardBrand'),
    cardType: f.optCode('cardType'),
    cardName: f.optStr('cardName'),
    expiresAt: f.optDate('expiry'),
    validThru: f.optStr('valid'),
    balanceMinor: f.optAmount('balance', unitOf(operation, 'answer', 'balance'), CARD_CURRENCY, 'half-even') ?? 0n,
    currency: CARD_CURRENCY,
    customerId: f.optStr('customerId'),
    customerEmail: f.optStr('customerEmail'),
    billingAddress: f.optObject('billingAddress'),
  };
}

/**
 * Card transaction (docs/provider.md#cards) from the answer of `operation`:
 * `centAmount`, else `amount`, units per the unit table (minor, major).
 */
export function toCardTransaction(
  data: Data,
  operation: 'topUpCard' | 'withdrawFromCard' | 'listCardTransactions',
): ProviderCardTransaction {
  const f = new Fields<WireCardTransaction>(data);
  const currency = f.optCurrency('currency') ?? CARD_CURRENCY;
  const unit = (field: 'centAmount' | 'amount') => unitOf(operation, 'answer', field);
  return {
    ...base(data, f),
    reference: f.str('reference'),
    cardId: f.str('cardId'),
    status: cardMovementStatus(f.code('status')),
    type: f.code('type'),
    method: f.optCode('method'),
    narrative: f.optStr('narrative'),
    currency,
    amountMinor:
      f.firstAmount(
        [
          ['centAmount', unit('centAmount')],
          ['amount', unit('amount')],
        ],
        currency,
        'reject',
      ) ?? failMissing('amount'),
  };
}

function toPageMeta(data: Data): ProviderPageMeta {
  const f = new Fields<WirePageMeta>(data, 'meta.');
  return {
    page: f.int('page'),
    take: f.int('take'),
    itemCount: f.int('itemCount'),
    pageCount: f.int('pageCount'),
    hasPreviousPage: f.bool('hasPreviousPage', false),
    hasNextPage: f.bool('hasNextPage', false),
  };
}

/** Card transaction listing: `{cardTransactions, meta}`. */
export function toCardTransactionPage(data: Data): ProviderCardTransactionPage {
  const f = new Fields<WireCardTransactionList>(data);
  const list = data.cardTransactions;
  if (!Array.isArray(list)) throw new MalformedAnswerError('cardTransactions is not an array');
  return {
    transactions: list.map((item, i) => {
      if (!isObject(item)) throw new MalformedAnswerError(`cardTransactions[${i}] is not an object`);
      return toCardTransaction(item, 'listCardTransactions');
    }),
    meta: toPageMeta(f.object('meta')),
    raw: stripCardSecrets(data),
  };
}

function failMissing(key: string): never {
  throw new MalformedAnswerError(`${key} is missing`);
}
