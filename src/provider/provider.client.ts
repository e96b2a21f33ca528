import { randomUUID } from 'node:crypto';
import axios, { AxiosError, type AxiosInstance, type AxiosRequestConfig, isAxiosError } from 'axios';
import axiosRetry from 'axios-retry';
import { Agent, type Dispatcher } from 'undici';
import { ErrorCode, ProviderError, ValidationError } from '../common/errors';
import { idempotencyClaimPending, noteProviderCall } from '../common/idempotency/idempotency-context';
import { normaliseCurrency } from '../common/money';
import { currentRequestId } from '../common/request-context';
import type { ProviderCallOutcome } from '../metrics/metrics.service';
import { answerMismatch, type MoneyAmount, UNIT_HINT } from './answer-checks';
import type { ProviderResilience } from './provider-resilience';
import {
  type AmountUnitSettings,
  DEFAULT_UNIT_SETTINGS,
  int32AmountMaxMinor,
  toWireAmount,
  unitOf,
} from './provider-units';
import {
  CARD_CURRENCY,
  isObject,
  MalformedAnswerError,
  maskCardNumbers,
  toBeneficiary,
  toCard,
  toCardCreation,
  toCardTransaction,
  toCardTransactionPage,
  toCardUser,
  toCollection,
  toCountryRequirement,
  toCustomer,
  toPayout,
  toSwap,
  toSwapQuote,
  toVirtualAccount,
} from './provider.mappers';
import type {
  CardAmountInput,
  CreateBeneficiaryInput,
  CreateCardInput,
  CreateCustomerInput,
  CreateVirtualAccountInput,
  FinalizePayoutInput,
  FinalizeSwapInput,
  InitializeCollectionInput,
  InitializePayoutInput,
  InitializeSwapInput,
  ListCardTransactionsInput,
  ProviderBeneficiary,
  ProviderCallOptions,
  ProviderCard,
  ProviderCardCreation,
  ProviderCardTransaction,
  ProviderCardTransactionPage,
  ProviderCardUser,
  ProviderCollection,
  ProviderCountryRequirement,
  ProviderCustomer,
  ProviderPayout,
  ProviderSwap,
  ProviderSwapQuote,
  ProviderVirtualAccount,
  RegisterCardUserInput,
  UpdateCustomerInput,
} from './provider.models';
import type {
  WireCardIdRequest,
  WireCardTransactionsQuery,
  WireCreateBeneficiaryRequest,
  WireCreateCardRequest,
  WireCreateCustomerRequest,
  WireCreateVirtualAccountRequest,
  WireFinalizePayoutRequest,
  WireFinalizeSwapRequest,
  WireInitializeCollectionRequest,
  WireInitializePayoutRequest,
  WireInitializeSwapRequest,
  WireRegisterCardUserRequest,
  WireTopUpCardRequest,
  WireUpdateCustomerRequest,
  WireWithdrawFromCardRequest,
} from './provider.types';
import { undiciAdapter } from './undici-adapter';

export type { ProviderCallOutcome };

/** A pino-like logger: structured object first, message second. */
export interface ProviderLogger {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** Construction options of `ProviderClient`. */
export interface ProviderClientOptions {
  /** Base URL including the version prefix, e.g. `http://127.0.0.1:4010/api/v1`. */
  baseUrl: string;
  /** Secret key, sent as `Authorization: Bearer`. Never logged. */
  apiKey: string;
  /** Time allowed per attempt for the provider to answer, in milliseconds. */
  timeoutMs: number;
  /** One line per call (and a debug line per retry); never headers or bodies. */
  logger?: ProviderLogger;
  /** Called once per logical call with its final outcome and total seconds (retries included). */
  onCall?: (operation: string, outcome: ProviderCallOutcome, seconds: number) => void;
  /** Retries of reads (GET); writes are retried only when they provably never left. Default 2 × 100 ms base. */
  retry?: { retries: number; baseDelayMs: number };
  /** The undocumented units (SWAP_AMOUNT_UNIT, CARD_EVENT_AMOUNT_UNIT); default `DEFAULT_UNIT_SETTINGS` (major). */
  units?: Partial<AmountUnitSettings>;
  /** Called once per answer refused for stating another amount or currency than was asked (a metric). */
  onAmountMismatch?: (operation: string) => void;
  /** Circuit breaker and bulkhead every call goes through (provider-resilience.ts); none when absent. */
  resilience?: ProviderResilience;
  /**
   * The connections the calls go out on (undici, through `undiciAdapter`); their owner closes
   * them (provider.module.ts, at shutdown). Default: an undici keep-alive `Agent` of the client's own.
   */
  connections?: Dispatcher;
}

type Method = 'GET' | 'POST' | 'PUT';
type Data = Record<string, unknown>;

interface CallSpec extends ProviderCallOptions {
  params?: object;
  /** The answer's `data` may be absent (register-card-user: "Response body: not shown"). */
  dataOptional?: boolean;
}

/** Connection failures raised before any byte of the request left: safe to retry even a write. */
const NEVER_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']);
const DEFAULT_RETRY = { retries: 2, baseDelayMs: 100 };
const MAX_MESSAGE_LENGTH = 500;
const OUTCOME: Partial<Record<ErrorCode, ProviderCallOutcome>> = {
  [ErrorCode.ProviderRejected]: 'rejected',
  [ErrorCode.ProviderUnavailable]: 'unavailable',
  [ErrorCode.ProviderTimeout]: 'timeout',
  [ErrorCode.ProviderRetryLater]: 'retry_later',
};
/** Seconds to wait after a provider 429 that says nothing (no usable Retry-After). */
export const DEFAULT_PROVIDER_RETRY_AFTER_S = 5;
/** The longest wait passed on from a provider's Retry-After, in seconds. */
const MAX_PROVIDER_RETRY_AFTER_S = 300;
const enc = encodeURIComponent;

function errorCode(error: AxiosError): string | undefined {
  return error.code ?? (error.cause as { code?: string } | undefined)?.code;
}

/**
 * Retry rule (docs/design.md#stack: axios-retry). GET: any failure without an answer (network error,
 * timeout) or a 5xx. POST/PUT: only connection failures before anything was sent, never a
 * timeout or a 5xx: the provider may have acted on the request.
 */
function isRetryable(error: AxiosError): boolean {
  if (error.code === AxiosError.ERR_CANCELED) return false;
  if (error.config?.method?.toUpperCase() === 'GET') return !error.response || error.response.status >= 500;
  return !error.response && NEVER_SENT_CODES.has(errorCode(error) ?? '');
}

/**
 * Seconds from a Retry-After header (delay-seconds or an HTTP-date, RFC 9110 §10.2.3), between 1 and
 * MAX_PROVIDER_RETRY_AFTER_S; DEFAULT_PROVIDER_RETRY_AFTER_S when absent or unreadable.
 */
export function retryAfterSeconds(header: unknown, now = Date.now()): number {
  const text = typeof header === 'string' ? header.trim() : '';
  let seconds = /^\d+$/.test(text) ? Number(text) : text ? Math.ceil((Date.parse(text) - now) / 1000) : NaN;
  if (!Number.isFinite(seconds)) seconds = DEFAULT_PROVIDER_RETRY_AFTER_S;
  return Math.min(MAX_PROVIDER_RETRY_AFTER_S, Math.max(1, seconds));
}

function attemptsOf(config: AxiosRequestConfig | undefined): number {
  return (config?.['axios-retry']?.retryCount ?? 0) + 1;
}

/** The provider's own words from an error or `status:false` body, masked and bounded; null if none. */
function providerMessage(body: unknown): string | null {
  let parsed = body;
  if (typeof body === 'string') {
    try {
      parsed = JSON.parse(body);
    } catch {
      return null;
    }
  }
  if (!isObject(parsed)) return null;
  const { message, error } = parsed;
  const text = Array.isArray(message)
    ? message.map(String).join('; ')
    : typeof message === 'string'
      ? message
      : typeof error === 'string'
        ? error
        : '';
  return text.trim() ? maskCardNumbers(text.trim()).slice(0, MAX_MESSAGE_LENGTH) : null;
}

/**
 * The one door to the provider (docs/provider.md; docs/design.md#modules): one typed method per
 * operation, normalised inputs and models (`provider.models.ts`), money in minor units.
 *
 * Every method throws only `ProviderError` (src/common/errors.ts), never an axios error:
 * - `provider_rejected` (422): HTTP 4xx (NestJS `{statusCode,message,error}`, `{status:false,message}`
 *   or any non-JSON body), or HTTP 200 with `status:false`; carries the provider's message.
 * - `provider_unavailable` (502): HTTP 5xx or 3xx, connection refused or reset, or a 2xx body that
 *   is not a valid envelope or lacks a field the model needs.
 * - `provider_timeout` (504): no answer within `timeoutMs`; a write's outcome is then unknown.
 * - `provider_retry_later` (503, `retryAfter`): HTTP 429 (the provider's Retry-After, else
 *   DEFAULT_PROVIDER_RETRY_AFTER_S), or the call was refused before it was sent by the circuit
 *   breaker or the bulkhead (`resilience`). Nothing happened upstream.
 * The calls go out through axios (retries by axios-retry) on undici's keep-alive connections
 * (`undiciAdapter`, undici-adapter.ts; `connections`), which follow no redirect.
 * Every call carries `x-request-id`: the one given, else the current HTTP request's
 * (src/common/request-context.ts), else a new UUID; the same on each retry.
 * Money answers are checked against the request (docs/design.md#money-guards-at-the-border): an
 * answer stating another amount or currency throws `ProviderAmountMismatchError` (502
 * `provider_amount_mismatch`, answer-checks.ts), logged at warn with both values. Every amount
 * is sent and read in the unit `provider-units.ts` gives it.
 * Bad inputs (an amount beyond a safe integer, an unknown currency) reject with `ValidationError`
 * before any request is sent. A call made under an Idempotency-Key whose deferred claim is not made
 * yet (idempotency-context.ts) rejects with a plain Error before anything is sent: a bug of the
 * caller, which must write ahead (and so claim the key) first.
 */
export class ProviderClient {
  private readonly http: AxiosInstance;
  private readonly timeoutMs: number;
  private readonly logger?: ProviderLogger;
  private readonly onCall?: ProviderClientOptions['onCall'];
  private readonly onAmountMismatch?: ProviderClientOptions['onAmountMismatch'];
  private readonly resilience?: ProviderResilience;
  /** The unit settings in force (validated env, else the documented defaults). */
  readonly units: Readonly<AmountUnitSettings>;

  /** Holds the API key only inside its axios instance's default headers. */
  constructor(options: ProviderClientOptions) {
    this.timeoutMs = options.timeoutMs;
    this.logger = options.logger;
    this.onCall = options.onCall;
    this.onAmountMismatch = options.onAmountMismatch;
    this.resilience = options.resilience;
    this.units = Object.freeze({ ...DEFAULT_UNIT_SETTINGS, ...options.units });
    this.http = axios.create({
      adapter: undiciAdapter(options.connections ?? new Agent()),
      baseURL: options.baseUrl,
      timeout: options.timeoutMs,
      headers: {
        Authorization: `Bearer ${options.apiKey}`,
        accept: 'application/json',
        'content-type': 'application/json',
      },
      responseType: 'text',
      transformResponse: [(data: unknown) => data],
      transitional: { clarifyTimeoutError: true, silentJSONParsing: true, forcedJSONParsing: false },
      maxRedirects: 0,
      maxContentLength: 5 * 1024 * 1024,
    });
    const retry = { ...DEFAULT_RETRY, ...options.retry };
    axiosRetry(this.http, {
      retries: retry.retries,
      shouldResetTimeout: true,
      retryCondition: isRetryable,
      retryDelay: (count) => retry.baseDelayMs * 2 ** (count - 1) * (1 + 0.2 * Math.random()),
      onRetry: (count, error, config) =>
        options.logger?.debug(
          {
            method: config.method?.toUpperCase(),
            path: config.url,
            requestId: config.headers?.['x-request-id'] as unknown,
            attempt: count + 1,
            reason: error.response?.status ?? errorCode(error),
          },
          'provider call retried',
        ),
    });
  }

  // ---- Customers (docs/provider.md#customers) ----

  /** POST /customers/ → the new customer. */
  async createCustomer(input: CreateCustomerInput, opts?: ProviderCallOptions): Promise<ProviderCustomer> {
    const { firstName, lastName, email, phone, countryCode } = input;
    const body: WireCreateCustomerRequest = { firstName, lastName, email, phone, countryCode };
    return this.call('createCustomer', 'POST', '/customers/', body, toCustomer, opts);
  }

  /** PUT /customers/{customerId} (firstName and email required by the provider) → the customer. */
  async updateCustomer(
    customerId: string,
    input: UpdateCustomerInput,
    opts?: ProviderCallOptions,
  ): Promise<ProviderCustomer> {
    const { firstName, email, lastName, phone, countryCode } = input;
    const body: WireUpdateCustomerRequest = { firstName, email, lastName, phone, countryCode };
    return this.call('updateCustomer', 'PUT', `/customers/${enc(customerId)}`, body, toCustomer, opts);
  }

  /** GET /customers/{customerId} → the customer (retried on network errors and 5xx). */
  async getCustomer(customerId: string, opts?: ProviderCallOptions): Promise<ProviderCustomer> {
    return this.call('getCustomer', 'GET', `/customers/${enc(customerId)}`, undefined, toCustomer, opts);
  }

  // ---- Collections (docs/provider.md#collections) ----

  /**
   * POST /wallets/collections/initialize; `amount` sent and read in the units of the unit table.
   * @throws ProviderAmountMismatchError when the answer echoes another amount or currency.
   */
  async initializeCollection(
    input: InitializeCollectionInput,
    opts?: ProviderCallOptions,
  ): Promise<ProviderCollection> {
    const currency = normaliseCurrency(input.currency);
    const body: WireInitializeCollectionRequest = {
      country: input.country.toUpperCase(),
      currency,
      customerEmail: input.customerEmail,
      amount: toWireAmount(input.amountMinor, currency, unitOf('initializeCollection', 'request', 'amount')),
      reference: input.reference,
      description: input.description,
      payload: { type: input.bank, accountName: input.accountName },
    };
    const collection = await this.call(
      'initializeCollection',
      'POST',
      '/wallets/collections/initialize',
      body,
      toCollection,
      opts,
    );
    return this.checked('initializeCollection', { amountMinor: input.amountMinor, currency }, collection);
  }

  // ---- Beneficiaries and payouts (docs/provider.md#beneficiaries, #payouts) ----

  /** POST /beneficiaries → the beneficiary (`success`). */
  async createBeneficiary(input: CreateBeneficiaryInput, opts?: ProviderCallOptions): Promise<ProviderBeneficiary> {
    const body: WireCreateBeneficiaryRequest = {
      currency: normaliseCurrency(input.currency),
      reference: input.reference,
      country: input.country.toUpperCase(),
      callbackUrl: input.callbackUrl,
      destination: input.destination,
      customerEmail: input.customerEmail,
    };
    return this.call('createBeneficiary', 'POST', '/beneficiaries', body, toBeneficiary, opts);
  }

  /** GET /wallets/payout/supported-countries/{countryCode} → the destination fields the country needs. */
  async getSupportedCountry(countryCode: string, opts?: ProviderCallOptions): Promise<ProviderCountryRequirement> {
    const path = `/wallets/payout/supported-countries/${enc(countryCode.toUpperCase())}`;
    return this.call('getSupportedCountry', 'GET', path, undefined, toCountryRequirement, opts);
  }

  /**
   * Refuses an amount `operation` cannot take, before anything is written or sent: its `amount` is
   * an int32 in the unit table's unit (docs/provider.md#payouts
   * and #cards: `amount (int32)`), so at most 2,147,483,647 of that
   * unit (21,474,836.47 USD in cents). The provider would refuse a larger one, after the ledger's
   * write-ahead row.
   * @throws ValidationError (400, field `amount`) beyond it, or for an unknown currency.
   */
  checkAmountFits(operation: 'initializePayout' | 'withdrawFromCard', amountMinor: bigint, currency: string): void {
    const max = int32AmountMaxMinor(currency, unitOf(operation, 'request', 'amount'));
    if (amountMinor > max) {
      throw new ValidationError([
        {
          field: 'amount',
          message: `amount must be at most ${max} minor units of ${normaliseCurrency(currency)}: the provider takes an int32 amount`,
        },
      ]);
    }
  }

  /**
   * POST /wallets/payout/initialize; `amount` in the unit table's unit (minor) → the payout (`initiated`).
   * @throws ProviderAmountMismatchError when the answer states another amount or wallet currency.
   */
  async initializePayout(input: InitializePayoutInput, opts?: ProviderCallOptions): Promise<ProviderPayout> {
    const sourceCurrency = normaliseCurrency(input.sourceCurrency);
    const body: WireInitializePayoutRequest = {
      amount: toWireAmount(input.amountMinor, sourceCurrency, unitOf('initializePayout', 'request', 'amount')),
      reference: input.reference,
      customerEmail: input.customerEmail,
      description: input.description,
      beneficiaryId: input.beneficiaryId,
      sourceWalletCurrency: sourceCurrency,
      callbackUrl: input.callbackUrl,
    };
    const payout = await this.call(
      'initializePayout',
      'POST',
      '/wallets/payout/initialize',
      body,
      (d) => toPayout(d, 'initializePayout', sourceCurrency),
      opts,
    );
    return this.checked('initializePayout', { amountMinor: input.amountMinor, currency: sourceCurrency }, payout);
  }

  /**
   * POST /wallets/payout/finalize → the payout (`pending`), money read in `sourceCurrency`.
   * @throws ProviderAmountMismatchError when `amountMinor` is given and the answer states another amount.
   */
  async finalizePayout(input: FinalizePayoutInput, opts?: ProviderCallOptions): Promise<ProviderPayout> {
    const sourceCurrency = normaliseCurrency(input.sourceCurrency);
    const body: WireFinalizePayoutRequest = { transactionId: input.transactionId };
    const payout = await this.call(
      'finalizePayout',
      'POST',
      '/wallets/payout/finalize',
      body,
      (d) => toPayout(d, 'finalizePayout', sourceCurrency),
      opts,
    );
    if (input.amountMinor === undefined) return payout;
    return this.checked('finalizePayout', { amountMinor: input.amountMinor, currency: sourceCurrency }, payout);
  }

  /** GET /transactions/{transactionId} (upper-case codes, major string money) → normalised payout. */
  async getTransaction(transactionId: string, opts?: ProviderCallOptions): Promise<ProviderPayout> {
    return this.call(
      'getTransaction',
      'GET',
      `/transactions/${enc(transactionId)}`,
      undefined,
      (d) => toPayout(d, 'getTransaction'),
      opts,
    );
  }

  // ---- Swaps (docs/provider.md#swaps) ----

  /**
   * POST /wallets/initialize-swap → a quote. `amount` is sent in SWAP_AMOUNT_UNIT (undocumented,
   * default major: 10000n USD → 100); the quote's `sourceAmount` is read as the unit table says
   * (major), so a provider reading the request in the other unit answers ×100 and is refused.
   * @throws ProviderAmountMismatchError when the quote's source amount or currency differs from the request.
   */
  async initializeSwap(input: InitializeSwapInput, opts?: ProviderCallOptions): Promise<ProviderSwapQuote> {
    const sourceCurrency = normaliseCurrency(input.sourceCurrency);
    const body: WireInitializeSwapRequest = {
      sourceCurrency,
      amount: toWireAmount(
        input.amountMinor,
        sourceCurrency,
        unitOf('initializeSwap', 'request', 'amount', this.units),
      ),
      targetCurrency: normaliseCurrency(input.targetCurrency),
    };
    const quote = await this.call('initializeSwap', 'POST', '/wallets/initialize-swap', body, toSwapQuote, opts);
    return this.checked('initializeSwap', { amountMinor: input.amountMinor, currency: sourceCurrency }, quote, {
      amountMinor: quote.sourceAmountMinor,
      currency: quote.sourceCurrency,
    });
  }

  /**
   * POST /wallets/finalize-swap → the swap transaction (`success`).
   * @throws ProviderAmountMismatchError when `amountMinor` is given and the answer states another amount.
   */
  async finalizeSwap(input: FinalizeSwapInput, opts?: ProviderCallOptions): Promise<ProviderSwap> {
    const sourceCurrency = normaliseCurrency(input.sourceCurrency);
    const body: WireFinalizeSwapRequest = { quoteId: input.quoteId };
    const swap = await this.call(
      'finalizeSwap',
      'POST',
      '/wallets/finalize-swap',
      body,
      (d) => toSwap(d, sourceCurrency),
      opts,
    );
    if (input.amountMinor === undefined) return swap;
    return this.checked('finalizeSwap', { amountMinor: input.amountMinor, currency: sourceCurrency }, swap);
  }

  // ---- Virtual accounts (docs/provider.md#virtual-accounts) ----

  /** POST /virtual-accounts → the account (`active`). */
  async createVirtualAccount(
    input: CreateVirtualAccountInput,
    opts?: ProviderCallOptions,
  ): Promise<ProviderVirtualAccount> {
    const { firstName, lastName, bvn, dateOfBirth, customerEmail, reference, bank, phoneNumber } = input;
    const body: WireCreateVirtualAccountRequest = {
      firstName,
      lastName,
      bvn,
      dateOfBirth,
      customerEmail,
      reference,
      bank,
      phoneNumber,
    };
    return this.call('createVirtualAccount', 'POST', '/virtual-accounts', body, toVirtualAccount, opts);
  }

  // ---- Virtual cards (docs/provider.md#cards) ----

  /** POST /virtualcards/registercarduser (KYC) → whatever the provider answers (body "not shown"). */
  async registerCardUser(input: RegisterCardUserInput, opts?: ProviderCallOptions): Promise<ProviderCardUser> {
    const body: WireRegisterCardUserRequest = { ...input };
    return this.call('registerCardUser', 'POST', '/virtualcards/registercarduser', body, toCardUser, {
      ...opts,
      dataOptional: true,
    });
  }

  /**
   * POST /virtualcards/create; `amount` sent in cents (unit table) → the creation record (`pending`).
   * @throws ProviderAmountMismatchError when the answer states a funding amount other than the request's.
   */
  async createCard(input: CreateCardInput, opts?: ProviderCallOptions): Promise<ProviderCardCreation> {
    const body: WireCreateCardRequest = {
      customerEmail: input.customerEmail,
      cardBrand: input.cardBrand,
      cardType: input.cardType,
      reference: input.reference,
      amount: toWireAmount(input.amountMinor, CARD_CURRENCY, unitOf('createCard', 'request', 'amount')),
      firstName: input.firstName,
      lastName: input.lastName,
    };
    const creation = await this.call('createCard', 'POST', '/virtualcards/create', body, toCardCreation, opts);
    if (creation.amountMinor === null) return creation;
    return this.checked('createCard', { amountMinor: input.amountMinor, currency: CARD_CURRENCY }, creation, {
      amountMinor: creation.amountMinor,
      currency: CARD_CURRENCY,
    });
  }

  /** POST /virtualcards/freeze → the card (`frozen`), without number or CVV. */
  async freezeCard(cardId: string, opts?: ProviderCallOptions): Promise<ProviderCard> {
    return this.cardAction('freezeCard', 'freeze', cardId, opts);
  }

  /** POST /virtualcards/unfreeze → the card (`active`), without number or CVV. */
  async unfreezeCard(cardId: string, opts?: ProviderCallOptions): Promise<ProviderCard> {
    return this.cardAction('unfreezeCard', 'unfreeze', cardId, opts);
  }

  /** POST /virtualcards/terminate → the card (`terminated`), without number or CVV. */
  async terminateCard(cardId: string, opts?: ProviderCallOptions): Promise<ProviderCard> {
    return this.cardAction('terminateCard', 'terminate', cardId, opts);
  }

  /**
   * POST /virtualcards/topup; `amount` sent in cents (unit table) → the card transaction (`pending`).
   * @throws ProviderAmountMismatchError when the answer states another amount or currency.
   */
  async topUpCard(input: CardAmountInput, opts?: ProviderCallOptions): Promise<ProviderCardTransaction> {
    const body: WireTopUpCardRequest = {
      amount: toWireAmount(input.amountMinor, CARD_CURRENCY, unitOf('topUpCard', 'request', 'amount')),
      cardId: input.cardId,
      reference: input.reference,
    };
    const movement = await this.call(
      'topUpCard',
      'POST',
      '/virtualcards/topup',
      body,
      (d) => toCardTransaction(d, 'topUpCard'),
      opts,
    );
    return this.checked('topUpCard', { amountMinor: input.amountMinor, currency: CARD_CURRENCY }, movement);
  }

  /**
   * POST /virtualcards/withdraw; `amount` (int32) sent in cents (unit table) → the card transaction (`pending`).
   * @throws ProviderAmountMismatchError when the answer states another amount or currency.
   */
  async withdrawFromCard(input: CardAmountInput, opts?: ProviderCallOptions): Promise<ProviderCardTransaction> {
    const body: WireWithdrawFromCardRequest = {
      amount: toWireAmount(input.amountMinor, CARD_CURRENCY, unitOf('withdrawFromCard', 'request', 'amount')),
      cardId: input.cardId,
      reference: input.reference,
    };
    const movement = await this.call(
      'withdrawFromCard',
      'POST',
      '/virtualcards/withdraw',
      body,
      (d) => toCardTransaction(d, 'withdrawFromCard'),
      opts,
    );
    return this.checked('withdrawFromCard', { amountMinor: input.amountMinor, currency: CARD_CURRENCY }, movement);
  }

  /** GET /virtualcards/cards/{cardId}/transactions?order&page&take → one page of card transactions. */
  async listCardTransactions(
    cardId: string,
    input: ListCardTransactionsInput = {},
    opts?: ProviderCallOptions,
  ): Promise<ProviderCardTransactionPage> {
    const params: WireCardTransactionsQuery = {
      order: input.order,
      page: input.page,
      take: input.take === undefined ? undefined : String(input.take),
    };
    const path = `/virtualcards/cards/${enc(cardId)}/transactions`;
    return this.call('listCardTransactions', 'GET', path, undefined, toCardTransactionPage, { ...opts, params });
  }

  private async cardAction(
    operation: 'freezeCard' | 'unfreezeCard' | 'terminateCard',
    action: string,
    cardId: string,
    opts?: ProviderCallOptions,
  ): Promise<ProviderCard> {
    const body: WireCardIdRequest = { cardId };
    return this.call(operation, 'POST', `/virtualcards/${action}`, body, (d) => toCard(d, operation), opts);
  }

  /**
   * The answer check (answer-checks.ts): `answered` (by default the record's `amountMinor` and
   * `currency`) must equal `asked`. On a difference: one warn line with both values (and the hint
   * `unit misconfigured?` when they differ by exactly the minor-unit factor), one `onAmountMismatch`,
   * and `ProviderAmountMismatchError`.
   */
  private checked<
    T extends { id: string; raw: Record<string, unknown>; amountMinor?: bigint | null; currency?: string },
  >(
    operation: string,
    asked: MoneyAmount,
    record: T,
    answered: MoneyAmount = { amountMinor: record.amountMinor as bigint, currency: record.currency as string },
  ): T {
    const mismatch = answerMismatch(operation, asked, answered, record);
    if (!mismatch) return record;
    this.logger?.warn(
      {
        operation,
        providerId: record.id,
        asked: { amountMinor: asked.amountMinor.toString(), currency: asked.currency },
        answered: { amountMinor: answered.amountMinor.toString(), currency: answered.currency },
        ...(mismatch.unitHint ? { hint: UNIT_HINT } : {}),
      },
      `provider ${operation} answered another amount than was asked${mismatch.unitHint ? ` (${UNIT_HINT})` : ''}`,
    );
    try {
      this.onAmountMismatch?.(operation);
    } catch (error) {
      this.logger?.warn({ operation, error: (error as Error).message }, 'provider onAmountMismatch hook failed');
    }
    throw mismatch;
  }

  /**
   * One provider call: request (with retries per `isRetryable`), envelope unwrap, mapping,
   * error mapping, one log line and one `onCall`.
   */
  private async call<T>(
    operation: string,
    method: Method,
    path: string,
    body: object | undefined,
    map: (data: Data) => T,
    spec: CallSpec = {},
  ): Promise<T> {
    // Write-ahead of the Idempotency-Key: a request whose deferred claim is not made yet sends nothing.
    if (idempotencyClaimPending()) throw new Error(`provider ${operation} called before the Idempotency-Key claim`);
    // From here the provider may act: a row written ahead is never released after a database outage.
    noteProviderCall();
    const requestId = spec.requestId ?? currentRequestId() ?? randomUUID();
    const started = performance.now();
    let status: number | undefined;
    let attempts = 1;
    let result: T;
    try {
      const send = () =>
        this.http.request<string>({
          method,
          url: path,
          data: body,
          params: spec.params,
          headers: { 'x-request-id': requestId },
        });
      const response = await (this.resilience ? this.resilience.execute(operation, send) : send());
      status = response.status;
      attempts = attemptsOf(response.config);
      result = map(this.unwrap(operation, status, response.data, spec.dataOptional ?? false));
    } catch (error) {
      if (isAxiosError(error)) {
        status = error.response?.status;
        attempts = attemptsOf(error.config);
      }
      const failure = this.toProviderError(operation, error, status);
      this.finish({ operation, method, path, requestId, status: status ?? null, attempt: attempts }, started, failure);
      throw failure;
    }
    this.finish({ operation, method, path, requestId, status, attempt: attempts }, started);
    return result;
  }

  /** Checks the `{status, message, data}` envelope and returns `data`. */
  private unwrap(operation: string, status: number, text: unknown, dataOptional: boolean): Data {
    let body: unknown;
    try {
      body = typeof text === 'string' ? JSON.parse(text) : text;
    } catch {
      throw new MalformedAnswerError('the body is not JSON');
    }
    if (!isObject(body) || typeof body.status !== 'boolean')
      throw new MalformedAnswerError('the body is not a {status, message, data} envelope');
    if (body.status === false) {
      throw new ProviderError(
        ErrorCode.ProviderRejected,
        providerMessage(body) ?? 'The provider refused the request.',
        operation,
        status,
      );
    }
    if ((body.data === undefined || body.data === null) && dataOptional) return {};
    if (!isObject(body.data)) throw new MalformedAnswerError('`data` is missing or not an object');
    return body.data;
  }

  private toProviderError(operation: string, error: unknown, status: number | undefined): ProviderError {
    if (error instanceof ProviderError) return error;
    if (error instanceof MalformedAnswerError) {
      return new ProviderError(
        ErrorCode.ProviderUnavailable,
        `The provider's answer is malformed: ${error.message}.`,
        operation,
        status,
      );
    }
    if (!isAxiosError(error))
      return new ProviderError(
        ErrorCode.ProviderUnavailable,
        'The provider call failed unexpectedly.',
        operation,
        status,
      );
    const response = error.response;
    if (response?.status === 429) {
      const wait = retryAfterSeconds(response.headers['retry-after']);
      return new ProviderError(
        ErrorCode.ProviderRetryLater,
        `The provider is limiting the rate of calls (HTTP 429); nothing was done. Retry in ${wait} s.`,
        operation,
        429,
        wait,
      );
    }
    if (response && response.status >= 400 && response.status < 500) {
      const message = providerMessage(response.data) ?? `The provider refused the request (HTTP ${response.status}).`;
      return new ProviderError(ErrorCode.ProviderRejected, message, operation, response.status);
    }
    if (response)
      return new ProviderError(
        ErrorCode.ProviderUnavailable,
        `The provider answered HTTP ${response.status}.`,
        operation,
        response.status,
      );
    const code = errorCode(error);
    if (code === 'ETIMEDOUT' || code === 'ECONNABORTED') {
      return new ProviderError(
        ErrorCode.ProviderTimeout,
        `The provider did not answer within ${this.timeoutMs} ms.`,
        operation,
      );
    }
    return new ProviderError(
      ErrorCode.ProviderUnavailable,
      `The provider could not be reached (${code ?? 'network error'}).`,
      operation,
    );
  }

  /** The call's one log line (no headers, no bodies) and its `onCall`. */
  private finish(
    line: {
      operation: string;
      method: Method;
      path: string;
      requestId: string;
      status: number | null;
      attempt: number;
    },
    started: number,
    failure?: ProviderError,
  ): void {
    const durationMs = Math.round((performance.now() - started) * 10) / 10;
    const outcome: ProviderCallOutcome = failure ? (OUTCOME[failure.code] ?? 'unavailable') : 'ok';
    const { logger, onCall } = this;
    const level = outcome === 'ok' ? 'info' : outcome === 'rejected' || outcome === 'retry_later' ? 'warn' : 'error';
    logger?.[level](
      { ...line, durationMs, outcome, ...(failure && { error: failure.message }) },
      `provider ${line.operation} ${outcome}`,
    );
    try {
      onCall?.(line.operation, outcome, durationMs / 1000);
    } catch (error) {
      logger?.warn({ operation: line.operation, error: (error as Error).message }, 'provider onCall hook failed');
    }
  }
}
