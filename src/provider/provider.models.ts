/**
 * The NORMALISED provider types the rest of the gateway sees (docs/design.md#architecture: the
 * provider's quirks stop in `src/provider`). Everywhere here:
 * - money is `bigint` minor units (`…Minor`), never a float; currency codes are upper-case;
 * - statuses, types and actions are lower-case; timestamps are `Date`;
 * - exchange rates and spot prices are exact decimal strings (stored as Prisma `Decimal`);
 * - `raw` is the provider's `data` object as answered, for storage, with card secrets removed
 *   (`stripCardSecrets`): a full card number or CVV never reaches a model (docs/design.md#security-and-personal-data).
 * Fields the gateway needs for money or state (ids, references, statuses, amounts, currencies,
 * expiries) are required: an answer without them is malformed (`provider_unavailable`).
 * Descriptive fields the doc does not promise are `null` when absent.
 * Where the provider's shape needs no normalising (request bodies of plain strings, page meta), the
 * model is an alias of its wire type in `provider.types.ts`: each shape is declared once.
 */

import type {
  WireCreateCustomerRequest,
  WireCreateVirtualAccountRequest,
  WireDestination,
  WireFieldDescriptor,
  WireInitializePayoutRequest,
  WirePageMeta,
  WireRegisterCardUserRequest,
  WireUpdateCustomerRequest,
} from './provider.types';

/** Fields every provider record carries. */
export interface ProviderRecord {
  /** The provider's id; kept locally as `providerId`. Never validated as a UUID. */
  id: string;
  createdAt: Date | null;
  updatedAt: Date | null;
  /** The provider's `data` object minus card secrets, for storage. */
  raw: Record<string, unknown>;
}

/** Per-call options accepted by every `ProviderClient` method. */
export interface ProviderCallOptions {
  /** Sent as `x-request-id` (the same on every retry); a random UUID when absent. */
  requestId?: string;
}

/** Page meta of a provider listing (docs/provider.md#conventions): the wire shape as it is. */
export type ProviderPageMeta = WirePageMeta;

// ---- Customers ----

/** Input of `createCustomer`: the provider's body as it is (`countryCode`: dialling code, e.g. `+234`). */
export type CreateCustomerInput = WireCreateCustomerRequest;

/** Input of `updateCustomer`: the provider's PUT body as it is (firstName and email required). */
export type UpdateCustomerInput = WireUpdateCustomerRequest;

/** A customer at the provider. */
export interface ProviderCustomer extends ProviderRecord {
  email: string;
  firstName: string | null;
  lastName: string | null;
  phone: string | null;
  countryCode: string | null;
  /** The provider's `blacklist` flag. */
  blacklisted: boolean;
}

// ---- Collections ----

/** Input of `initializeCollection`. */
export interface InitializeCollectionInput {
  /** Country code, e.g. `NG`. */
  country: string;
  currency: string;
  customerEmail: string;
  /** Amount to collect, in minor units of `currency` (sent as minor units). */
  amountMinor: bigint;
  reference: string;
  description: string;
  /** The bank to issue the account detail at (the provider's `payload.type`). */
  bank: string;
  accountName: string;
}

/** A collection: an account detail to pay `amountMinor` into before `expiresAt`. */
export interface ProviderCollection extends ProviderRecord {
  reference: string;
  /** `processing` on creation. */
  status: string;
  currency: string;
  /** Read from the answer's MAJOR-unit `amount` (65000 kobo answers 650). */
  amountMinor: bigint;
  /** Read from the answer's MAJOR-unit `fees`; rounded half-even if finer than the currency. */
  feeMinor: bigint;
  accountName: string | null;
  accountNumber: string;
  bankName: string | null;
  customerId: string | null;
  description: string | null;
  expiresAt: Date;
  expiryInSeconds: number | null;
}

// ---- Beneficiaries ----

/** A payout destination: `type` (`BANK`, `MOBILEMONEY`, …) and the country's string fields, as the provider writes it. */
export type ProviderDestination = WireDestination;

/** Input of `createBeneficiary`. */
export interface CreateBeneficiaryInput {
  currency: string;
  country: string;
  reference: string;
  customerEmail: string;
  callbackUrl: string;
  /** Fields per `getSupportedCountry(country).destinations[type]`. */
  destination: ProviderDestination;
}

/** A beneficiary at the provider; `status` is `success` on creation. */
export interface ProviderBeneficiary extends ProviderRecord {
  reference: string;
  status: string;
  currency: string;
  country: string;
  destination: ProviderDestination;
}

/** One field a destination type needs (docs/provider.md#beneficiaries): `const` the only allowed value, `pattern` a regular expression. */
export type ProviderDestinationField = WireFieldDescriptor;

/** What a country needs for a beneficiary's destination. */
export interface ProviderCountryRequirement {
  /** Upper-case country code. */
  code: string;
  name: string;
  flag: string | null;
  dialCode: string | null;
  /** Destination type (e.g. `MOBILEMONEY`) → its fields. */
  destinations: Record<string, ProviderDestinationField[]>;
  raw: Record<string, unknown>;
}

// ---- Payouts and transactions ----

/** Input of `initializePayout`: the provider's body with the amount in minor units. */
export interface InitializePayoutInput extends Pick<
  WireInitializePayoutRequest,
  'reference' | 'customerEmail' | 'description' | 'beneficiaryId' | 'callbackUrl'
> {
  /** Amount in minor units of `sourceCurrency` (sent as minor units, int32). */
  amountMinor: bigint;
  /** Wallet currency to debit (the provider's `sourceWalletCurrency`). */
  sourceCurrency: string;
}

/** Input of `finalizePayout`. */
export interface FinalizePayoutInput {
  /** The provider's id of the initiated payout. */
  transactionId: string;
  /** Wallet currency of the payout: the finalize answer does not name it, and its `amount` is major units. */
  sourceCurrency: string;
  /** The payout's amount, minor units of `sourceCurrency`: the answer's amount must equal it (else 502 `provider_amount_mismatch`). */
  amountMinor?: bigint;
}

/** Fields payout and swap transactions share (docs/provider.md#payouts, #swaps). */
export interface ProviderLedgerRecord extends ProviderRecord {
  reference: string;
  status: string;
  /** `debit`. */
  type: string;
  /** e.g. `ng_account_payout`, `swap_usd_ngn`. */
  action: string;
  channel: string | null;
  description: string | null;
  /** Wallet currency debited (payout: the source wallet; swap: the source currency). */
  currency: string;
  /** `centAmount` when present, else the MAJOR-unit `amount`. */
  amountMinor: bigint;
  /** `centFees` when present, else the MAJOR-unit `fees`; rounded half-even. */
  feeMinor: bigint;
  spotPrice: string | null;
}

/**
 * A payout transaction (initialize: `initiated`; finalize: `pending`; get-transaction: any
 * status, lower-cased). Money is in the wallet `currency` unless named `payout…`.
 */
export interface ProviderPayout extends ProviderLedgerRecord {
  exchangeRate: string | null;
  /** The beneficiary id (finalize answers it as a string). */
  beneficiaryId: string | null;
  /** Destination details (get-transaction expands the beneficiary as an object). */
  beneficiaryDetails: Record<string, unknown> | null;
  /** Amount paid to the destination, minor units of `payoutCurrency` (rounded half-even). */
  payoutAmountMinor: bigint | null;
  payoutCurrency: string | null;
  balanceBeforeMinor: bigint | null;
  balanceAfterMinor: bigint | null;
  customerId: string | null;
  companyId: string | null;
}

// ---- Swaps ----

/** Input of `initializeSwap`. */
export interface InitializeSwapInput {
  sourceCurrency: string;
  targetCurrency: string;
  /** Amount to sell, minor units of `sourceCurrency` (sent in the unit SWAP_AMOUNT_UNIT names, provider-units.ts). */
  amountMinor: bigint;
}

/** A swap quote; finalize it before `expiresAt`. */
export interface ProviderSwapQuote extends ProviderRecord {
  sourceCurrency: string;
  targetCurrency: string;
  /** From the MAJOR-unit decimal string `sourceAmount`. */
  sourceAmountMinor: bigint;
  /** From the MAJOR-unit `targetAmount`, rounded half-even (a converted amount). */
  targetAmountMinor: bigint;
  /** From the MAJOR-unit `fee`, assumed in the source currency (undocumented), rounded half-even. */
  feeMinor: bigint;
  /** `conversionRate.amount`: units of `rateCurrency` per source unit, exact decimal string. */
  rate: string;
  rateCurrency: string | null;
  expiresAt: Date;
  expiresInSeconds: number | null;
}

/** Input of `finalizeSwap`. */
export interface FinalizeSwapInput {
  quoteId: string;
  /** The quote's source currency: the swap answer's major-unit fields are in it and do not name it. */
  sourceCurrency: string;
  /** The quote's source amount, minor units: the answer's amount must equal it (else 502 `provider_amount_mismatch`). */
  amountMinor?: bigint;
}

/** An executed swap (`success` at once; no swap events exist). */
export interface ProviderSwap extends ProviderLedgerRecord {
  balanceAfterMinor: bigint | null;
}

// ---- Virtual accounts ----

/** Input of `createVirtualAccount`: the provider's body as it is; `dateOfBirth` (yyyy-mm-dd) is required for `providus`. */
export type CreateVirtualAccountInput = WireCreateVirtualAccountRequest;

/** A virtual bank account; `status` `active` on creation. */
export interface ProviderVirtualAccount extends ProviderRecord {
  reference: string;
  status: string;
  currency: string;
  bank: string;
  bankName: string | null;
  accountName: string;
  accountNumber: string;
  customerId: string | null;
}

// ---- Virtual cards ----

/**
 * Input of `registerCardUser` (KYC for card issuing): the provider's body as it is (`idType` e.g.
 * `BVN`, `NIN`, `PASSPORT`; `bvn` required for Nigerian customers, `dateOfBirth` yyyy-mm-dd for Ghanaian ones).
 */
export type RegisterCardUserInput = WireRegisterCardUserRequest;

/** The register-card-user answer, whose body is "not shown": whatever id and status it has. */
export interface ProviderCardUser {
  id: string | null;
  /** Lower-case. */
  status: string | null;
  /** Whether `status` says KYC was refused at once (`failed`, `rejected` or `declined`). */
  kycRefused: boolean;
  raw: Record<string, unknown>;
}

/** Input of `createCard`. */
export interface CreateCardInput {
  customerEmail: string;
  /** e.g. `virtual`, `giftcard`. */
  cardType: string;
  /** Lower-case card network; required for one network only. */
  cardBrand?: string;
  reference: string;
  /** Initial funding, USD minor units (cents). */
  amountMinor: bigint;
  /** Needed only on the sandbox. */
  firstName?: string;
  lastName?: string;
}

/** A card-creation record (`createdStatus` `pending`); the card's details come later. */
export interface ProviderCardCreation extends ProviderRecord {
  reference: string;
  createdStatus: string;
  cardType: string | null;
  brand: string | null;
  cardUserId: string | null;
  customerId: string | null;
  /** The funding the answer states, USD minor units; null when it states none (the documented answer). */
  amountMinor: bigint | null;
}

/** A virtual card, without its full number or CVV (docs/design.md#security-and-personal-data). */
export interface ProviderCard extends ProviderRecord {
  reference: string | null;
  /** `active`, `frozen`, `terminated`, … */
  status: string;
  createdStatus: string | null;
  last4: string;
  /** Lower-case card network. */
  brand: string | null;
  cardType: string | null;
  cardName: string | null;
  /** The provider's `expiry` timestamp. */
  expiresAt: Date | null;
  /** The provider's `valid`: MM/YYYY. */
  validThru: string | null;
  /** Read from the MAJOR-unit `balance` (assumed USD, the cards' currency). */
  balanceMinor: bigint;
  currency: string;
  customerId: string | null;
  customerEmail: string | null;
  billingAddress: Record<string, unknown> | null;
}

/** Input of `topUpCard` and `withdrawFromCard`. */
export interface CardAmountInput {
  cardId: string;
  /** USD minor units (cents); sent as cents. */
  amountMinor: bigint;
  reference: string;
}

/** A card top-up, withdrawal or spend. */
export interface ProviderCardTransaction extends ProviderRecord {
  reference: string;
  cardId: string;
  /** `pending` on creation; `success` in listings; null for a spelling the provider documents nowhere (`cardMovementStatus`). */
  status: CardMovementStatus | null;
  type: string;
  /** `topup` or `withdrawal`. */
  method: string | null;
  narrative: string | null;
  currency: string;
  /** `centAmount`, else the MAJOR-unit `amount`. */
  amountMinor: bigint;
}

/** Input of `listCardTransactions`. */
export interface ListCardTransactionsInput {
  /** Provider default `ASC`. */
  order?: 'ASC' | 'DESC';
  page?: number;
  take?: number;
}

/** One page of a card's transactions. */
export interface ProviderCardTransactionPage {
  transactions: ProviderCardTransaction[];
  meta: ProviderPageMeta;
  raw: Record<string, unknown>;
}

// ---- Card movements and card events ----

/**
 * A card movement's status in the gateway's terms (the ledger's statuses), read from the
 * provider's spellings by `cardMovementStatus`: `pending` / `processing` → `pending`;
 * `success` / `successful` / `completed` → `success`; `failed` / `declined` → `failed`; `reversed`.
 */
export type CardMovementStatus = 'pending' | 'success' | 'failed' | 'reversed';

/** The three kinds of card money movement (the ledger's kinds). */
export type CardMovementKind = 'card_topup' | 'card_withdrawal' | 'card_spend';

/**
 * A card money movement as the provider reports it (a row of its card-transaction listing, or a
 * spend callback), in the gateway's terms; built by the one `cardMovementOf` (card-events.mapper.ts).
 */
export interface CardMovement {
  /** The provider's card-transaction id. */
  providerId: string;
  /** The provider's reference, when it gives one (the gateway's own for top-ups and withdrawals). */
  reference: string | null;
  kind: CardMovementKind;
  /** `credit` adds to the card's balance, `debit` takes from it. */
  direction: 'credit' | 'debit';
  status: CardMovementStatus;
  /** Minor units of `currency` (USD cents). */
  amountMinor: bigint;
  currency: string;
  narrative: string | null;
  /** Why a `failed` movement failed (a decline's reason); null otherwise. */
  failureReason: string | null;
  createdAt: Date | null;
  /** What the provider sent for it, card secrets removed. */
  raw: Record<string, unknown>;
}

/** Card details a creation callback carries (never the number or CVV). */
export interface CardEventDetails {
  last4: string | null;
  /** Lower-case card network. */
  brand: string | null;
  nameOnCard: string | null;
  /** MM/YYYY (or MM/YY), the provider's `valid`. */
  validThru: string | null;
  /** The provider's `expiry` timestamp; null when absent (an unreadable one is an invalid Date). */
  expiresAt: Date | null;
  billingAddress: Record<string, unknown> | null;
}

/**
 * A card callback (docs/provider.md#events, `virtualcard.*`) in the gateway's terms:
 * - `card.created`: `virtualcard.created.success|failed`; `inProgress` when a success names its
 *   creation still `pending` (no result yet); `details` on success only.
 * - `card.topup` / `card.withdrawal`: `virtualcard.topup|withdrawal.success|failed` settling the
 *   gateway's movement; `status` is the event's own status when it states one (`pending`: still in
 *   progress); `amountMinor` null when the event names no amount; `reason` the failure reason.
 * - `card.spend`: `virtualcard.transaction.debit|credit|declined` (a decline is a `failed`
 *   movement; one without an amount moved nothing: 0); `movement` null when the event has no id.
 * - `card.spend_reversed`: `virtualcard.transaction.reversed`, naming the spend given back.
 * - `card_holder.kyc`: `virtualcard.user.kyc.success|failed` (by card user id, else e-mail, lower-case).
 * The card, movement and card user are named by the provider's ids; the inbox row keeps the event's
 * `id` and `reference` too.
 */
export type CardEvent =
  | {
      type: 'card.created';
      result: 'success' | 'failed';
      inProgress: boolean;
      reason: string | null;
      details: CardEventDetails | null;
    }
  | {
      type: 'card.topup' | 'card.withdrawal';
      result: 'success' | 'failed';
      status: CardMovementStatus | null;
      amountMinor: bigint | null;
      reason: string | null;
    }
  | { type: 'card.spend'; cardProviderId: string | null; movement: CardMovement | null }
  | {
      type: 'card.spend_reversed';
      cardProviderId: string | null;
      providerId: string | null;
      reference: string | null;
    }
  | {
      type: 'card_holder.kyc';
      result: 'success' | 'failed';
      providerUserId: string | null;
      email: string | null;
      reason: string | null;
    };
