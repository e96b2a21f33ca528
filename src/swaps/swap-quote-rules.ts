import { DomainError, ErrorCode, InvalidStateTransitionError } from '../common/errors';

/**
 * Statuses of a stored SwapQuote (a plain string column):
 * - `open`: issued by the provider, not yet executed (usable until `expiresAt`);
 * - `executing`: claimed by one POST /v1/swaps; the finalize call is under way, or its outcome is
 *   unknown (timeout, 5xx) and reconciliation decides;
 * - `executed`: the provider executed it (the swap's ledger row is `success`);
 * - `failed`: the provider refused to execute it; a quote is not offered a second time;
 * - `expired`: lapsed before execution (shown for an `open` quote past `expiresAt`; an expiry job may store it);
 * - `needs_review`: its finalize was never answered and it has expired: whether the provider executed it
 *   cannot be learnt, so its swap is `needs_review` too; resolving the swap by hand moves it to
 *   `executed` or `failed` (ReconciliationService.settleUnanswered, POST /v1/transactions/{id}/resolve).
 */
export const SWAP_QUOTE_STATUSES = ['open', 'executing', 'executed', 'failed', 'expired', 'needs_review'] as const;
export type SwapQuoteStatus = (typeof SWAP_QUOTE_STATUSES)[number];

/** 422 `quote_expired`: the quote lapsed; ask for a new one (POST /v1/swap-quotes). */
export class QuoteExpiredError extends DomainError {
  constructor(quoteId: string, expiresAt: Date) {
    super(ErrorCode.QuoteExpired, `Swap quote ${quoteId} expired at ${expiresAt.toISOString()}; request a new quote.`, {
      expiresAt: expiresAt.toISOString(),
    });
  }
}

/** Whether a quote valid until `expiresAt` has lapsed at `now` (it is valid strictly before `expiresAt`). */
export function isQuoteExpired(expiresAt: Date, now: Date = new Date()): boolean {
  return now.getTime() >= expiresAt.getTime();
}

/**
 * The moment a provider quote lapses, on the gateway's clock: the provider's `expiration`, or
 * `requestedAt + expirationInSec` when that is earlier (the provider's clock may run behind ours;
 * `requestedAt` is taken before the call, so transit time counts against the quote, not for it).
 * docs/provider.md#swaps, #limits (a quote should be finalized before it expires).
 */
export function quoteExpiresAt(
  upstream: { expiresAt: Date; expiresInSeconds: number | null },
  requestedAt: Date,
): Date {
  if (upstream.expiresInSeconds === null || upstream.expiresInSeconds < 0) return upstream.expiresAt;
  const local = new Date(requestedAt.getTime() + upstream.expiresInSeconds * 1000);
  return local < upstream.expiresAt ? local : upstream.expiresAt;
}

/** The status to show: an `open` quote past its expiry is `expired` (it can no longer be executed). */
export function effectiveQuoteStatus(quote: { status: string; expiresAt: Date }, now: Date = new Date()): string {
  return quote.status === 'open' && isQuoteExpired(quote.expiresAt, now) ? 'expired' : quote.status;
}

/**
 * Why a quote cannot be executed now, or null if it can (`open` and not expired). Checked before
 * the provider is called:
 * - `expired` (stored, or `open` past `expiresAt`) → QuoteExpiredError (422 `quote_expired`);
 * - `executing`, `executed`, `failed`, `needs_review` → InvalidStateTransitionError (409 `invalid_state_transition`).
 */
export function quoteExecutionRefusal(
  quote: { id: string; status: string; expiresAt: Date },
  now: Date = new Date(),
): DomainError | null {
  const status = effectiveQuoteStatus(quote, now);
  if (status === 'open') return null;
  if (status === 'expired') return new QuoteExpiredError(quote.id, quote.expiresAt);
  return new InvalidStateTransitionError('Swap quote', status, 'executed');
}
