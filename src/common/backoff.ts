/**
 * Retry backoff, one rule for every retry loop of the gateway (the inbox's failed callbacks, the
 * outbox's deliveries): after `attempts` failed attempts, wait the schedule's step for that attempt
 * (the last step repeated once the table ends), lengthened or shortened at random by up to
 * ±`jitter`, so that many items failing together (a receiver down) do not all come back at once.
 */
export interface BackoffSchedule {
  /** Delay after attempt 1, 2, 3, … in milliseconds; the last one repeats. */
  readonly stepsMs: readonly number[];
  /** Fraction by which a delay may be shortened or lengthened at random (0.2 = ±20 %). */
  readonly jitter: number;
}

/**
 * Milliseconds to wait before the next attempt, after `attempts` (≥ 1; lower counts as 1) have failed.
 * `random` returns [0, 1) (Math.random by default; fixed in tests).
 */
export function backoffDelayMs(
  schedule: BackoffSchedule,
  attempts: number,
  random: () => number = Math.random,
): number {
  const step = Math.min(Math.max(1, Math.floor(attempts)), schedule.stepsMs.length) - 1;
  return Math.round(schedule.stepsMs[step] * (1 - schedule.jitter + 2 * schedule.jitter * random()));
}
