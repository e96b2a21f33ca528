import { afterFailedAttempt, RETRY_SCHEDULE_MS, retryDelayMs } from './delivery-schedule';

const fixed = (value: number) => () => value;

describe('outbound delivery backoff', () => {
  it('follows 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, 2 h, 4 h, then 8 h each (no jitter at the midpoint)', () => {
    const delays = Array.from({ length: 12 }, (_, i) => retryDelayMs(i + 1, fixed(0.5)));
    const minutes = 60_000;
    expect(delays).toEqual([
      5_000,
      30_000,
      2 * minutes,
      10 * minutes,
      30 * minutes,
      60 * minutes,
      120 * minutes,
      240 * minutes,
      480 * minutes,
      480 * minutes,
      480 * minutes,
      480 * minutes,
    ]);
  });

  it('jitters each delay within ±20 %', () => {
    RETRY_SCHEDULE_MS.forEach((base, i) => {
      expect(retryDelayMs(i + 1, fixed(0))).toBe(Math.round(base * 0.8));
      expect(retryDelayMs(i + 1, fixed(0.999999))).toBeLessThanOrEqual(Math.round(base * 1.2));
      expect(retryDelayMs(i + 1, fixed(0.999999))).toBeGreaterThan(base);
    });
    const spread = new Set(Array.from({ length: 50 }, () => retryDelayMs(3)));
    expect(spread.size).toBeGreaterThan(1);
  });

  it('treats nonsense attempt counts as the first step', () => {
    expect(retryDelayMs(0, fixed(0.5))).toBe(5_000);
    expect(retryDelayMs(-3, fixed(0.5))).toBe(5_000);
  });

  it('gives up after the last allowed attempt', () => {
    const now = new Date('2026-11-23T10:00:00.000Z');
    expect(afterFailedAttempt(1, 3, now, fixed(0.5))).toEqual({
      status: 'pending',
      nextAttemptAt: new Date('2026-11-23T10:00:05.000Z'),
    });
    expect(afterFailedAttempt(2, 3, now, fixed(0.5))).toEqual({
      status: 'pending',
      nextAttemptAt: new Date('2026-11-23T10:00:30.000Z'),
    });
    expect(afterFailedAttempt(3, 3, now)).toEqual({ status: 'failed' });
    expect(afterFailedAttempt(1, 1, now)).toEqual({ status: 'failed' });
  });
});
