/**
 * The provider's WIRE types, exactly as the provider documents them (docs/provider.md#operations): request bodies and the
 * `data` of each response. Nothing outside `src/provider` should import these; the rest of the
 * gateway sees `provider.models.ts` (which names the shapes that need no normalising by alias). Money fields are `number | string` where the doc says the
 * provider mixes them ("Monetary fields appear as numbers in some responses and as strings in
 * others"); codes are lower-case as the provider writes them. Which fields are always present is
 * "not shown", so the mappers check every field they read.
 */

/** A money value as the provider writes it: a JSON number or a decimal string. */
export type WireMoney = number | string;
/** ISO 8601 UTC timestamp with milliseconds (docs/provider.md#conventions). */
export type WireTimestamp = string;

/** Every response: `{status, message, data}` (docs/provider.md#conventions). */
export interface WireEnvelope<T> {
  status: boolean;
  message: string;
  data: T;
}

/** Error bodies clients of the provider expect (docs/provider.md#errors). */
export interface WireErrorBody {
  statusCode?: number;
  /** A string, or an array of strings in NestJS validation errors. */
  message?: string | string[];
  error?: string;
  status?: boolean;
}

/** Fields every stored record carries. */
export interface WireRecord {
  id: string;
  createdAt: WireTimestamp;
  updatedAt: WireTimestamp;
}

/** Page meta (docs/provider.md#conventions). */
export interface WirePageMeta {
  page: number;
  take: number;
  itemCount: number;
  pageCount: number;
  hasPreviousPage: boolean;
  hasNextPage: boolean;
}

// ---- Customers (docs/provider.md#customers) ----

/** POST /customers/ body. */
export interface WireCreateCustomerRequest {
  firstName: string;
  lastName: string;
  email: string;
  phone: string;
  /** Dialling code, with or without the leading plus. */
  countryCode: string;
}

/** PUT /customers/{customer_id} body: firstName and email required. */
export interface WireUpdateCustomerRequest {
  firstName: string;
  email: string;
  lastName?: string;
  phone?: string;
  countryCode?: string;
}

/** Customer record; `transactions` in the update answer, `customerId` and `meta` in the get answer. */
export interface WireCustomer extends WireRecord {
  firstName: string | null;
  lastName: string | null;
  email: string;
  phone: string | null;
  countryCode: string | null;
  blacklist: boolean;
  transactions?: unknown[];
  customerId?: string;
  meta?: WirePageMeta;
}

// ---- Collections (docs/provider.md#collections) ----

/** POST /wallets/collections/initialize body; `amount` in MINOR units (provider-units.ts). */
export interface WireInitializeCollectionRequest {
  country: string;
  currency: string;
  customerEmail: string;
  amount: WireMoney;
  reference: string;
  description: string;
  /** `type` names the bank. */
  payload: { type: string; accountName: string };
}

/** Collection record; `amount` and `fees` in MAJOR units (65000 kobo answers `amount: 650`). */
export interface WireCollection extends WireRecord {
  accountName: string;
  accountNumber: string;
  bankName: string;
  /** `credit`. */
  type: string;
  description: string;
  customerId: string;
  companyId: string;
  reference: string;
  /** `collection`. */
  channel: string;
  amount: WireMoney;
  currency: string;
  /** `deposit_<currency lower-case>`. */
  action: string;
  /** `processing` on creation. */
  status: string;
  fees: WireMoney;
  expiryInSeconds: number;
  expiryDate: WireTimestamp;
}

// ---- Beneficiaries and payouts (docs/provider.md#beneficiaries, #payouts) ----

/** Country-specific destination; BANK and MOBILEMONEY variants are documented. */
export interface WireDestination {
  /** `BANK`, `MOBILEMONEY`, … */
  type: string;
  [field: string]: string;
}

/** POST /beneficiaries body. */
export interface WireCreateBeneficiaryRequest {
  currency: string;
  reference: string;
  country: string;
  callbackUrl: string;
  destination: WireDestination;
  customerEmail: string;
}

/** Beneficiary record; `status` is `success` on creation. */
export interface WireBeneficiary extends WireRecord {
  currency: string;
  country: string;
  status: string;
  destination: WireDestination;
  reference: string;
}

/** One field a destination needs (docs/provider.md#beneficiaries). */
export interface WireFieldDescriptor {
  name: string;
  type: string;
  required: boolean;
  const?: string;
  enum?: string[];
  pattern?: string;
}

/** GET /wallets/payout/supported-countries/{country_code} data. */
export interface WireCountryRequirement {
  code: string;
  name: string;
  flag: string;
  dialCode: string;
  /** Destination type (e.g. MOBILEMONEY) → its field descriptors. */
  destination: Record<string, WireFieldDescriptor[]>;
}

/** POST /wallets/payout/initialize body; `amount` (int32) in MINOR units of the source wallet (provider-units.ts). */
export interface WireInitializePayoutRequest {
  amount: WireMoney;
  reference: string;
  customerEmail: string;
  description: string;
  beneficiaryId: string;
  /** Wallet currency to debit (provider default `USD`). */
  sourceWalletCurrency: string;
  callbackUrl: string;
}

/** POST /wallets/payout/finalize body. */
export interface WireFinalizePayoutRequest {
  transactionId: string;
}

/**
 * Payout transaction (docs/provider.md#payouts): from initialize (`initiated`),
 * finalize (`pending`) and get-transaction (upper-case `type`/`status`/`action`, string money).
 * `amount`/`fees` are MAJOR units of the wallet currency; `centAmount`/`centFees` MINOR.
 */
export interface WirePayoutTransaction extends WireRecord {
  companyId: string;
  customerId?: string;
  reference: string;
  channel: string;
  description: string;
  type: string;
  status: string;
  action: string;
  fees: WireMoney;
  centFees?: number;
  amount: WireMoney;
  centAmount?: number;
  spotPrice?: number;
  exchangeRate?: string;
  /** Beneficiary id (finalize) or the destination details (get-transaction). */
  beneficiary?: string | Record<string, unknown>;
  /** MAJOR units of `payoutCurrency`. */
  payoutAmount?: WireMoney;
  payoutCurrency?: string;
  payoutUsdAmount?: string;
  balanceBefore?: string;
  balanceAfter?: string;
  currency?: string;
}

// ---- Swaps (docs/provider.md#swaps) ----

/** POST /wallets/initialize-swap body; `amount` in the unit SWAP_AMOUNT_UNIT names (provider-units.ts; default major). */
export interface WireInitializeSwapRequest {
  sourceCurrency: string;
  amount: WireMoney;
  targetCurrency: string;
}

/** Swap quote; amounts are MAJOR-unit decimal strings. */
export interface WireSwapQuote extends WireRecord {
  sourceCurrency: string;
  targetCurrency: string;
  sourceAmount: string;
  targetAmount: string;
  amount: string;
  usdAmount: string;
  fee: string;
  expiration: WireTimestamp;
  expirationInSec: string;
  conversionRate: { amount: string; currency: string };
}

/** POST /wallets/finalize-swap body. */
export interface WireFinalizeSwapRequest {
  quoteId: string;
}

/** Swap transaction; `amount`/`fees`/`balanceAfter` MAJOR, `centAmount`/`centFees` MINOR. */
export interface WireSwapTransaction extends WireRecord {
  reference: string;
  description: string;
  balanceAfter: WireMoney;
  amount: WireMoney;
  centAmount: number;
  fees: WireMoney;
  centFees: number;
  spotPrice: string;
  /** `swap_<source>_<target>`. */
  action: string;
  type: string;
  status: string;
  channel: string;
  companyId: string;
}

// ---- Virtual accounts (docs/provider.md#virtual-accounts) ----

/** POST /virtual-accounts body; `dateOfBirth` (yyyy-mm-dd) required for `providus`. */
export interface WireCreateVirtualAccountRequest {
  firstName: string;
  lastName: string;
  bvn?: string;
  dateOfBirth?: string;
  customerEmail: string;
  reference: string;
  /** `safehaven` or `providus`. */
  bank: string;
  phoneNumber: string;
}

/** Virtual account record; lower-case `currency`, `status` `active`. */
export interface WireVirtualAccount extends WireRecord {
  currency: string;
  bank: string;
  customerId: string;
  bankName: string;
  reference: string;
  accountName: string;
  accountNumber: string;
  status: string;
}

// ---- Virtual cards (docs/provider.md#cards) ----

/** POST /virtualcards/registercarduser body. */
export interface WireRegisterCardUserRequest {
  customerEmail: string;
  idNumber: string;
  idType: string;
  firstName: string;
  lastName: string;
  phoneNumber: string;
  city: string;
  state: string;
  zipCode: string;
  line1: string;
  houseName: string;
  bvn?: string;
  userPhoto: string;
  dateOfBirth?: string;
  country?: string;
  idImage?: string;
}

/** Register-card-user response body: "not shown". */
export type WireCardUser = Record<string, unknown>;

/** POST /virtualcards/create body; `amount` in MINOR units (cents). */
export interface WireCreateCardRequest {
  customerEmail: string;
  cardBrand?: string;
  cardType: string;
  reference: string;
  amount: WireMoney;
  firstName?: string;
  lastName?: string;
}

/** Card-creation answer: only these fields (docs/provider.md#cards). */
export interface WireCardCreation extends WireRecord {
  cardType: string;
  cardBrand: string;
  cardUserId: string;
  reference: string;
  createdStatus: string;
  customerId: string | null;
  /** Not in the documented answer; checked against the request if it ever appears (provider-units.ts). */
  amount?: WireMoney;
  centAmount?: WireMoney;
}

/** POST /virtualcards/freeze|unfreeze|terminate body. */
export interface WireCardIdRequest {
  cardId: string;
}

/** Full card record. Holds the full `cardNumber` and `cvv2`: never stored or logged. */
export interface WireVirtualCard extends WireRecord {
  balance: WireMoney;
  cardNumber: string;
  last4: string;
  cardName: string;
  cardType: string;
  cardBrand: string;
  cvv2: string;
  expiry: WireTimestamp;
  /** MM/YYYY. */
  valid: string;
  status: string;
  reference: string;
  createdStatus: string;
  customerId: string | null;
  cardUserId?: string;
  billingAddress: { city: string; street: string; zipCode: string; countryCode: string; country: string };
  customerEmail: string;
}

/** POST /virtualcards/topup body; `amount` in cents. */
export interface WireTopUpCardRequest {
  amount: WireMoney;
  cardId: string;
  reference: string;
}

/** POST /virtualcards/withdraw body; `amount` (int32) in cents (provider-units.ts). */
export interface WireWithdrawFromCardRequest {
  amount: WireMoney;
  cardId: string;
  reference: string;
}

/** Card transaction; `amount` MAJOR, `centAmount` MINOR, lower-case `currency`. */
export interface WireCardTransaction extends WireRecord {
  amount: WireMoney;
  centAmount: WireMoney;
  type: string;
  /** `topup` or `withdrawal`. */
  method: string;
  narrative: string | null;
  status: string;
  currency: string;
  reference: string;
  cardId: string;
}

/** GET /virtualcards/cards/{card_id}/transactions query. */
export interface WireCardTransactionsQuery {
  order?: 'ASC' | 'DESC';
  page?: number;
  take?: string;
}

/** GET /virtualcards/cards/{card_id}/transactions data. */
export interface WireCardTransactionList {
  cardTransactions: WireCardTransaction[];
  meta: WirePageMeta;
}

// ---- Card events (docs/provider.md#events, `virtualcard.*`) ----

/** `data` of `virtualcard.created.success|failed`: the card record (success) or its id, reference and reason. */
export interface WireCardCreatedEvent {
  id: string;
  reference: string;
  status: string;
  /** `pending` while the creation runs. */
  createdStatus: string;
  reason: string;
  last4: string;
  cardBrand: string;
  cardName: string;
  /** MM/YYYY. */
  valid: string;
  expiry: WireTimestamp;
  billingAddress: Record<string, unknown>;
}

/** `data` of `virtualcard.topup|withdrawal.*` and `virtualcard.transaction.*`; `amount` in CARD_EVENT_AMOUNT_UNIT (provider-units.ts). */
export interface WireCardMoneyEvent {
  id: string;
  cardId: string;
  amount: WireMoney;
  status: string;
  reference: string;
  narrative: string;
  reason: string;
}

/** `data` of `virtualcard.user.kyc.success|failed`: `id` is the provider's card user id. */
export interface WireCardKycEvent {
  id: string;
  customerEmail: string;
  status: string;
  reason: string;
}
