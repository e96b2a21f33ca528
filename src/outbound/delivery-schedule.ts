/**
 * When an outbox message is tried again after a failed attempt: a fixed schedule, then the last
 * step repeated, with ±20 % jitter so that many messages failing together (a receiver down) do
 * not all come back at the same instant. After OUTBOX_MAX_ATTEMPTS attempts a message is
 * `failed`: kept with its last error, visible in GET .../messages, retried only on request.
 */
import { type BackoffSchedule, backoffDelayMs } from '../common/backoff';

/** Delay after attempt 1, 2, 3, ...: 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, 2 h, 4 h, then 8 h each. */
export const RETRY_SCHEDULE_MS: readonly number[] = Object.freeze([
  5_000,
  30_000,
  2 * 60_000,
  10 * 60_000,
  30 * 60_000,
  60 * 60_000,
  2 * 60 * 60_000,
  4 * 60 * 60_000,
  8 * 60 * 60_000,
]);

/** Fraction by which a delay may be shortened or lengthened at random. */
export const RETRY_JITTER = 0.2;

/** The outbox's schedule for the one backoff rule (src/common/backoff.ts). */
const OUTBOX_BACKOFF: BackoffSchedule = { stepsMs: RETRY_SCHEDULE_MS, jitter: RETRY_JITTER };

/**
 * Milliseconds to wait before the next attempt, after `attempts` attempts (≥ 1) have failed.
 * `random` returns [0, 1) (Math.random by default; fixed in tests).
 */
export function retryDelayMs(attempts: number, random: () => number = Math.random): number {
  return backoffDelayMs(OUTBOX_BACKOFF, attempts, random);
}

/** What happens to a message after a failed attempt number `attempts`. */
export function afterFailedAttempt(
  attempts: number,
  maxAttempts: number,
  now: Date,
  random: () => number = Math.random,
): { status: 'pending'; nextAttemptAt: Date } | { status: 'failed' } {
  if (attempts >= maxAttempts) return { status: 'failed' };
  return { status: 'pending', nextAttemptAt: new Date(now.getTime() + retryDelayMs(attempts, random)) };
}
