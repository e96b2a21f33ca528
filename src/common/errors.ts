/**
 * Typed domain errors. Services throw these; one exception filter
 * (`ProblemDetailsFilter`) maps each `ErrorCode` to an HTTP status and an RFC 9457
 * `application/problem+json` body. Services never build HTTP responses themselves.
 */

/** Stable machine codes, returned to clients as `code` in problem+json bodies. */
export enum ErrorCode {
  ValidationFailed = 'validation_failed',
  Unauthorized = 'unauthorized',
  Forbidden = 'forbidden',
  NotFound = 'not_found',
  /** The path exists but not with this method: 405 with `Allow` listing the path's methods. */
  MethodNotAllowed = 'method_not_allowed',
  Conflict = 'conflict',
  IdempotencyKeyMissing = 'idempotency_key_missing',
  IdempotencyKeyReused = 'idempotency_key_reused',
  RequestInProgress = 'request_in_progress',
  InvalidStateTransition = 'invalid_state_transition',
  QuoteExpired = 'quote_expired',
  /**
   * The request matches the API description, but a rule the description cannot state as a schema
   * refuses it: one that depends on the provider's data, on other rows, or on the network at
   * request time (a payout country the provider does not serve, a collection's currency and bounds
   * in its country, a webhook URL whose host resolves inside). `errors: [{field, message}]`.
   */
  BusinessRuleFailed = 'business_rule_failed',
  PayloadTooLarge = 'payload_too_large',
  UriTooLong = 'uri_too_long',
  HeadersTooLarge = 'request_headers_too_large',
  RateLimited = 'rate_limited',
  ProviderRejected = 'provider_rejected',
  ProviderUnavailable = 'provider_unavailable',
  ProviderTimeout = 'provider_timeout',
  /**
   * The provider call was not made, or not accepted, for now: the circuit breaker is open (the
   * provider keeps failing), too many calls are in flight (bulkhead), or the provider answered 429.
   * Nothing moved; retry after `Retry-After` (also `retryAfter`, seconds, in the problem).
   */
  ProviderRetryLater = 'provider_retry_later',
  /** The provider's answer states another amount or currency than was asked (docs/design.md#money-guards-at-the-border). */
  ProviderAmountMismatch = 'provider_amount_mismatch',
  InternalError = 'internal_error',
  /** A payout's approval or rejection asked by the API client that created it (maker-checker). */
  ApproverIsCreator = 'approver_is_creator',
  /** A reconciliation report for the same period is already queued or running. */
  ReconciliationRunInProgress = 'reconciliation_run_in_progress',
  /** The instance is closing (rolling deploy): retry, another instance answers. */
  ShuttingDown = 'shutting_down',
  /** A bearer access token refused: bad signature, issuer, audience, lifetime, algorithm or key (RFC 6750 `invalid_token`). */
  InvalidToken = 'invalid_token',
  /** A person's access token on a route people may not call yet (only /v1/me is open to them). */
  UserNotAllowedHere = 'user_not_allowed_here',
  /** The route needs a recent or strong sign-in (RFC 9470 `insufficient_user_authentication`). */
  StepUpRequired = 'step_up_required',
  /** The token's email is not verified by the provider (`email_verified` is not true). */
  EmailNotVerified = 'email_not_verified',
  /** The OpenID provider's keys cannot be fetched and none are cached: tokens cannot be checked now. */
  IdentityProviderUnavailable = 'identity_provider_unavailable',
  /**
   * The gateway's own database could not be used (connection lost or refused, server restarting,
   * failover in progress, no pool connection within DATABASE_POOL_TIMEOUT_MS). Retry after
   * `Retry-After` with the same Idempotency-Key: a money request cut half way is finished by the
   * gateway as soon as the database is back, and the retry answers its one outcome.
   */
  DatabaseUnavailable = 'database_unavailable',
}

/**
 * Each code's HTTP status and problem title: the one table the exception filter reads (a new code
 * does not compile without its row).
 */
export const ERROR_CODES: Record<ErrorCode, { status: number; title: string }> = {
  [ErrorCode.ValidationFailed]: { status: 400, title: 'Validation failed' },
  [ErrorCode.IdempotencyKeyMissing]: { status: 400, title: 'Idempotency-Key header required' },
  [ErrorCode.Unauthorized]: { status: 401, title: 'Unauthorized' },
  [ErrorCode.Forbidden]: { status: 403, title: 'Forbidden' },
  [ErrorCode.ApproverIsCreator]: { status: 403, title: 'The approver must be another API client than the creator' },
  [ErrorCode.NotFound]: { status: 404, title: 'Not found' },
  [ErrorCode.MethodNotAllowed]: { status: 405, title: 'Method not allowed' },
  [ErrorCode.Conflict]: { status: 409, title: 'Conflict' },
  [ErrorCode.IdempotencyKeyReused]: { status: 409, title: 'Idempotency key reused with another request' },
  [ErrorCode.RequestInProgress]: { status: 409, title: 'Request with this idempotency key in progress' },
  [ErrorCode.InvalidStateTransition]: { status: 409, title: 'Invalid state transition' },
  [ErrorCode.ReconciliationRunInProgress]: {
    status: 409,
    title: 'A reconciliation run for this period is in progress',
  },
  [ErrorCode.PayloadTooLarge]: { status: 413, title: 'Payload too large' },
  [ErrorCode.UriTooLong]: { status: 414, title: 'URI too long' },
  [ErrorCode.HeadersTooLarge]: { status: 431, title: 'Request header fields too large' },
  [ErrorCode.QuoteExpired]: { status: 422, title: 'Quote expired' },
  [ErrorCode.BusinessRuleFailed]: { status: 422, title: 'Refused by a business rule' },
  [ErrorCode.ProviderRejected]: { status: 422, title: 'Provider rejected the request' },
  [ErrorCode.RateLimited]: { status: 429, title: 'Too many requests' },
  [ErrorCode.InternalError]: { status: 500, title: 'Internal server error' },
  [ErrorCode.ProviderUnavailable]: { status: 502, title: 'Provider unavailable' },
  [ErrorCode.ProviderTimeout]: { status: 504, title: 'Provider timeout' },
  [ErrorCode.ShuttingDown]: { status: 503, title: 'Service shutting down' },
  [ErrorCode.DatabaseUnavailable]: { status: 503, title: 'Database unavailable, retry later' },
  [ErrorCode.ProviderRetryLater]: { status: 503, title: 'Provider unavailable for now, retry later' },
  [ErrorCode.ProviderAmountMismatch]: { status: 502, title: 'Provider answered another amount than was asked' },
  [ErrorCode.InvalidToken]: { status: 401, title: 'Invalid access token' },
  [ErrorCode.UserNotAllowedHere]: { status: 403, title: 'Not open to signed-in people yet' },
  [ErrorCode.StepUpRequired]: { status: 401, title: 'A recent or stronger sign-in is required' },
  [ErrorCode.EmailNotVerified]: { status: 403, title: 'Email not verified' },
  [ErrorCode.IdentityProviderUnavailable]: { status: 503, title: 'Identity provider unavailable' },
};

/** HTTP status for each code (from ERROR_CODES). */
export const HTTP_STATUS_BY_CODE = Object.fromEntries(
  Object.entries(ERROR_CODES).map(([code, { status }]) => [code, status]),
) as Record<ErrorCode, number>;

/** One failing input field, as listed in a `validation_failed` problem's `errors` array. */
export interface FieldError {
  /** Dotted path of the field in the request, e.g. `destination.accountNumber`. */
  field: string;
  message: string;
}

/** Base class of every error the gateway answers with on purpose. */
export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Extra members merged into the problem+json body (e.g. `errors`, `retryAfter`). */
    readonly extensions: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }

  get status(): number {
    return HTTP_STATUS_BY_CODE[this.code];
  }
}

/**
 * A refusal that carries an RFC 6750 / RFC 9470 challenge: answered with `WWW-Authenticate: <challenge>`
 * beside the problem body (ProblemDetailsFilter).
 */
export class BearerChallengeError extends DomainError {
  constructor(
    code: ErrorCode,
    message: string,
    /** The WWW-Authenticate value, e.g. `Bearer error="invalid_token", error_description="…"`. */
    readonly challenge: string,
    extensions: Record<string, unknown> = {},
  ) {
    super(code, message, extensions);
  }
}

/** Quotes `value` for an auth-param of a WWW-Authenticate header (RFC 9110 quoted-string). */
export function quoteAuthParam(value: string): string {
  return `"${value.replace(/[\\"]/g, '\\$&').replace(/[^\x20-\x7e]/g, '?')}"`;
}

/** 400 `validation_failed` with the failing fields. */
export class ValidationError extends DomainError {
  constructor(
    readonly errors: FieldError[],
    message = 'The request is invalid.',
  ) {
    super(ErrorCode.ValidationFailed, message, { errors });
  }
}

/**
 * 422 `business_rule_failed` with the failing fields: a well-formed request (valid by the API
 * description) refused by a rule that depends on the provider's data, other rows or the network.
 * Bad input that the description states (types, bounds, patterns, enums, "Required when …")
 * stays ValidationError (400).
 */
export class BusinessRuleError extends DomainError {
  constructor(
    readonly errors: FieldError[],
    message = 'The request is refused by a business rule.',
  ) {
    super(ErrorCode.BusinessRuleFailed, message, { errors });
  }
}

/** 404 `not_found`. */
export class NotFoundError extends DomainError {
  constructor(resource: string, id: string) {
    super(ErrorCode.NotFound, `${resource} ${id} was not found.`);
  }
}

/** 409 `conflict` (e.g. a duplicate email), or another 409 code given explicitly. */
export class ConflictError extends DomainError {
  constructor(message: string, code: ErrorCode = ErrorCode.Conflict, extensions: Record<string, unknown> = {}) {
    super(code, message, extensions);
  }
}

/** 409 `invalid_state_transition`: the entity's state machine does not allow the move. */
export class InvalidStateTransitionError extends DomainError {
  constructor(entity: string, from: string, to: string) {
    super(ErrorCode.InvalidStateTransition, `${entity} cannot move from ${from} to ${to}.`, { from, to });
  }
}

/**
 * A failure talking to the upstream provider.
 * - `provider_rejected` (422): the provider answered and said no (HTTP 4xx but 429, or `status: false`).
 * - `provider_unavailable` (502): HTTP 5xx, connection failure, or a body that is not the envelope.
 * - `provider_timeout` (504): no answer within PROVIDER_TIMEOUT_MS. The outcome of a write is unknown.
 * - `provider_retry_later` (503, `retryAfter` seconds): the call was never sent (circuit breaker
 *   open, bulkhead full) or the provider refused it for its rate limit (HTTP 429). Nothing happened.
 */
export class ProviderError extends DomainError {
  constructor(
    code:
      | ErrorCode.ProviderRejected
      | ErrorCode.ProviderUnavailable
      | ErrorCode.ProviderTimeout
      | ErrorCode.ProviderRetryLater,
    message: string,
    /** Name of the provider operation, e.g. `createCustomer`. */
    readonly operation: string,
    /** HTTP status the provider answered with, when it answered. */
    readonly providerStatus?: number,
    /** With `provider_retry_later`: seconds to wait (sent as `Retry-After`). */
    retryAfter?: number,
  ) {
    super(code, message, retryAfter === undefined ? { operation } : { operation, retryAfter });
  }
}

/**
 * Whether the provider provably did not act on the call that failed with `error`: it refused it
 * (`provider_rejected`), or the call was never sent or not accepted (`provider_retry_later`:
 * breaker open, bulkhead full, HTTP 429). A money movement it was for ends `failed`, never
 * `unknown` (the write-ahead rule: only a call that may have been acted upon leaves a row unknown).
 */
export function providerDidNotAct(error: unknown): error is ProviderError {
  return (
    error instanceof ProviderError &&
    (error.code === ErrorCode.ProviderRejected || error.code === ErrorCode.ProviderRetryLater)
  );
}
