import { type CpuProfile, formatProfile, summarizeProfile } from '../bench/profile';

// bench/profile.ts turns a V8 .cpuprofile into "where the time goes": these check its arithmetic on
// a small hand-made profile (ids, samples and time deltas as V8 writes them).
const frame = (functionName: string, url = '', lineNumber = -1) => ({ functionName, url, lineNumber });
const cwd = process.cwd();

/**
 * root → main (dist/main.js) → handle (dist/payouts/payouts.service.js:10) → query (node_modules/pg)
 *      → (idle), (garbage collector)
 * Samples, 1 ms apart from t = 1,000,000 µs: handle ×2, query ×3, idle ×4, gc ×1, query ×1, then a
 * last sample (no following delta: no weight).
 */
const profile: CpuProfile = {
  startTime: 1_000_000,
  endTime: 1_013_000,
  nodes: [
    { id: 1, callFrame: frame('(root)'), children: [2, 5, 6] },
    { id: 2, callFrame: frame('main', `file://${cwd}/dist/main.js`, 0), children: [3] },
    { id: 3, callFrame: frame('handle', `file://${cwd}/dist/payouts/payouts.service.js`, 9), children: [4] },
    { id: 4, callFrame: frame('query', `file://${cwd}/node_modules/pg/lib/client.js`, 99) },
    { id: 5, callFrame: frame('(idle)') },
    { id: 6, callFrame: frame('(garbage collector)') },
  ],
  samples: [3, 3, 4, 4, 4, 5, 5, 5, 5, 6, 4, 3],
  timeDeltas: [0, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000],
};

describe('bench/profile.ts summarizeProfile', () => {
  it('sums self time per function and per package, idle apart, shares of the busy time', () => {
    const summary = summarizeProfile(profile);
    expect(summary.windowed).toBe(false);
    expect(summary.totalMs).toBe(11);
    expect(summary.idleMs).toBe(4);
    expect(summary.frames).toEqual([
      { name: 'query pg/lib/client.js:100', ms: 4, share: 4 / 7 },
      { name: 'handle dist/payouts/payouts.service.js:10', ms: 2, share: 2 / 7 },
      { name: '(garbage collector)', ms: 1, share: 1 / 7 },
    ]);
    expect(summary.packages.map((p) => [p.name, p.ms])).toEqual([
      ['pg', 4],
      ['dist/payouts', 2],
      ['(garbage collector)', 1],
    ]);
    // Total time of the project's own functions: main and handle are on the stack of every pg sample.
    expect(summary.ownInclusive.map((p) => [p.name, p.ms]).sort()).toEqual([
      ['handle dist/payouts/payouts.service.js:10', 6],
      ['main dist/main.js:1', 6],
    ]);
  });

  it('keeps only the samples inside the window (monotonic µs)', () => {
    // Samples are at 1,000,000 + 0, 1000, 2000, …: the window [1,002,000, 1,004,000] holds the three query samples.
    const summary = summarizeProfile(profile, { fromUs: 1_002_000, toUs: 1_004_000 });
    expect(summary.windowed).toBe(true);
    expect(summary.totalMs).toBe(3);
    expect(summary.frames).toEqual([{ name: 'query pg/lib/client.js:100', ms: 3, share: 1 }]);
  });

  it('falls back to the whole profile when no sample falls in the window, and says so', () => {
    const summary = summarizeProfile(profile, { fromUs: 5, toUs: 6 });
    expect(summary.windowed).toBe(false);
    expect(summary.totalMs).toBe(11);
    expect(formatProfile(summary, 'gateway')).toContain('whole process: no sample fell in the run');
  });
});
