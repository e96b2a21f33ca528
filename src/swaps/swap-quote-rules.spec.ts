import { ErrorCode } from '../common/errors';
import {
  effectiveQuoteStatus,
  isQuoteExpired,
  QuoteExpiredError,
  quoteExecutionRefusal,
  quoteExpiresAt,
} from './swap-quote-rules';

const at = (iso: string) => new Date(iso);
const EXPIRES = at('2026-01-01T12:00:00.000Z');

describe('swap quote rules', () => {
  it('treats a quote as valid strictly before expiresAt', () => {
    expect(isQuoteExpired(EXPIRES, at('2026-01-01T11:59:59.999Z'))).toBe(false);
    expect(isQuoteExpired(EXPIRES, EXPIRES)).toBe(true);
    expect(isQuoteExpired(EXPIRES, at('2026-01-01T12:00:00.001Z'))).toBe(true);
  });

  it('takes the earlier of the provider expiration and requestedAt + expirationInSec', () => {
    const requestedAt = at('2026-01-01T11:55:00.000Z');
    // Provider clock behind ours: its expiration is later than 250 s after our request.
    expect(quoteExpiresAt({ expiresAt: at('2026-01-01T12:10:00.000Z'), expiresInSeconds: 250 }, requestedAt)).toEqual(
      at('2026-01-01T11:59:10.000Z'),
    );
    // Provider expiration earlier: kept.
    expect(quoteExpiresAt({ expiresAt: at('2026-01-01T11:56:00.000Z'), expiresInSeconds: 250 }, requestedAt)).toEqual(
      at('2026-01-01T11:56:00.000Z'),
    );
    // No seconds given: the provider's expiration.
    expect(quoteExpiresAt({ expiresAt: EXPIRES, expiresInSeconds: null }, requestedAt)).toEqual(EXPIRES);
  });

  it('shows an open quote past its expiry as expired, and leaves other statuses alone', () => {
    const now = at('2026-01-01T12:00:01.000Z');
    expect(effectiveQuoteStatus({ status: 'open', expiresAt: EXPIRES }, now)).toBe('expired');
    expect(effectiveQuoteStatus({ status: 'open', expiresAt: EXPIRES }, at('2026-01-01T11:00:00.000Z'))).toBe('open');
    expect(effectiveQuoteStatus({ status: 'executed', expiresAt: EXPIRES }, now)).toBe('executed');
  });

  it('lets an open, unexpired quote be executed', () => {
    expect(
      quoteExecutionRefusal({ id: 'q', status: 'open', expiresAt: EXPIRES }, at('2026-01-01T11:59:00.000Z')),
    ).toBeNull();
  });

  it('refuses an expired quote with 422 quote_expired', () => {
    for (const quote of [
      { id: 'q', status: 'open', expiresAt: EXPIRES },
      { id: 'q', status: 'expired', expiresAt: EXPIRES },
    ]) {
      const refusal = quoteExecutionRefusal(quote, at('2026-01-01T12:00:00.000Z'));
      expect(refusal).toBeInstanceOf(QuoteExpiredError);
      expect(refusal?.code).toBe(ErrorCode.QuoteExpired);
      expect(refusal?.status).toBe(422);
    }
  });

  it('refuses a quote executed, being executed or failed with 409 invalid_state_transition, even after expiry', () => {
    for (const status of ['executing', 'executed', 'failed']) {
      for (const now of [at('2026-01-01T11:00:00.000Z'), at('2026-01-01T13:00:00.000Z')]) {
        const refusal = quoteExecutionRefusal({ id: 'q', status, expiresAt: EXPIRES }, now);
        expect(refusal?.code).toBe(ErrorCode.InvalidStateTransition);
        expect(refusal?.status).toBe(409);
        expect(refusal?.extensions).toEqual({ from: status, to: 'executed' });
      }
    }
  });
});
