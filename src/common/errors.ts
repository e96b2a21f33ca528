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
  Conflict = 'conflict',
  IdempotencyKeyMissing = 'idempotency_key_missing',
  IdempotencyKeyReused = 'idempotency_key_reused',
  RequestInProgress = 'request_in_progress',
  InvalidStateTransition = 'invalid_state_transition',
  QuoteExpired = 'quote_expired',
  PayloadTooLarge = 'payload_too_large',
  UriTooLong = 'uri_too_long',
  HeadersTooLarge = 'request_headers_too_large',
  RateLimited = 'rate_limited',
  ProviderRejected = 'provider_rejected',
  ProviderUnavailable = 'provider_unavailable',
  ProviderTimeout = 'provider_timeout',
  /** The provider's answer states another amount or currency than was asked (DESIGN.md "Money guards at the border"). */
  ProviderAmountMismatch = 'provider_amount_mismatch',
  InternalError = 'internal_error',
}

/** HTTP status for each code: the one table the exception filter reads. */
export const HTTP_STATUS_BY_CODE: Record<ErrorCode, number> = {
  [ErrorCode.ValidationFailed]: 400,
  [ErrorCode.IdempotencyKeyMissing]: 400,
  [ErrorCode.Unauthorized]: 401,
  [ErrorCode.Forbidden]: 403,
  [ErrorCode.NotFound]: 404,
  [ErrorCode.Conflict]: 409,
  [ErrorCode.IdempotencyKeyReused]: 409,
  [ErrorCode.RequestInProgress]: 409,
  [ErrorCode.InvalidStateTransition]: 409,
  [ErrorCode.PayloadTooLarge]: 413,
  [ErrorCode.UriTooLong]: 414,
  [ErrorCode.HeadersTooLarge]: 431,
  [ErrorCode.QuoteExpired]: 422,
  [ErrorCode.ProviderRejected]: 422,
  [ErrorCode.RateLimited]: 429,
  [ErrorCode.InternalError]: 500,
  [ErrorCode.ProviderUnavailable]: 502,
  [ErrorCode.ProviderTimeout]: 504,
  [ErrorCode.ProviderAmountMismatch]: 502,
};

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

/** 400 `validation_failed` with the failing fields. */
export class ValidationError extends DomainError {
  constructor(
    readonly errors: FieldError[],
    message = 'The request is invalid.',
  ) {
    super(ErrorCode.ValidationFailed, message, { errors });
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
 * - `provider_rejected` (422): the provider answered and said no (HTTP 4xx, or `status: false`).
 * - `provider_unavailable` (502): HTTP 5xx, connection failure, or a body that is not the envelope.
 * - `provider_timeout` (504): no answer within PROVIDER_TIMEOUT_MS. The outcome of a write is unknown.
 */
export class ProviderError extends DomainError {
  constructor(
    code: ErrorCode.ProviderRejected | ErrorCode.ProviderUnavailable | ErrorCode.ProviderTimeout,
    message: string,
    /** Name of the provider operation, e.g. `createCustomer`. */
    readonly operation: string,
    /** HTTP status the provider answered with, when it answered. */
    readonly providerStatus?: number,
  ) {
    super(code, message, { operation });
  }
}
