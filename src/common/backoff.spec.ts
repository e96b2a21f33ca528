import { backoffDelayMs } from './backoff';

describe('backoffDelayMs', () => {
  const schedule = { stepsMs: [1_000, 5_000, 20_000], jitter: 0.25 };
  const fixed = (value: number) => () => value;

  it('takes the step of the attempt, then repeats the last step', () => {
    expect([1, 2, 3, 4, 10].map((attempts) => backoffDelayMs(schedule, attempts, fixed(0.5)))).toEqual([
      1_000, 5_000, 20_000, 20_000, 20_000,
    ]);
  });

  it('counts fewer than one attempt as one', () => {
    expect(backoffDelayMs(schedule, 0, fixed(0.5))).toBe(1_000);
    expect(backoffDelayMs(schedule, -2, fixed(0.5))).toBe(1_000);
  });

  it('spreads a delay by up to ±jitter', () => {
    expect(backoffDelayMs(schedule, 2, fixed(0))).toBe(3_750);
    expect(backoffDelayMs(schedule, 2, fixed(0.999999))).toBe(6_250);
  });
});
