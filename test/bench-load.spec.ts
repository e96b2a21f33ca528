import { budgetTable, cpuBudget, type CpuSnapshot, cpuSnapshot, postgresUsed } from '../bench/cpu-budget';
import { flatOut } from '../bench/load';
import { DELAY_MS, fixedDelayRun, STALL_MS, stallRun, startTestServer } from '../bench/load-selftest';

// The benchmarks' load module (bench/load.ts) must report what the server does: these check the
// measuring tool, not the gateway's speed. Bounds are one-sided where the machine's load could
// only make a figure larger, and generous where it could go either way.
describe('bench/load.ts paced mode (open loop)', () => {
  it('reports a fixed server delay: never below it, and close to it at the median', async () => {
    // Upper bound loose, and checked on the best of up to three runs: the suite runs beside other
    // busy test files on two cores, which can only make a run slower (seen: a median of 183 ms for
    // the 20 ms server on a slower machine). A tool that inflates latencies fails all three.
    const medians: number[] = [];
    for (let attempt = 0; attempt < 3 && !medians.some((p50) => p50 < DELAY_MS * 5); attempt++) {
      const run = await fixedDelayRun(100, 1.5);
      expect(run.requests).toBe(150);
      expect(run.errors).toBe(0);
      expect(run.non2xx).toBe(0);
      expect(run.p50).toBeGreaterThanOrEqual(DELAY_MS);
      medians.push(run.p50);
    }
    expect(Math.min(...medians)).toBeLessThan(DELAY_MS * 5);
  });

  it('counts a server stall against every request due during it (coordinated omission corrected)', async () => {
    const run = await stallRun(100, 2.5);
    expect(run.requests).toBe(250);
    // ~40 of 250 requests were due during the 400 ms stall: at least 1 % waited ≥ 60 % of it.
    expect(run.p99).toBeGreaterThanOrEqual(STALL_MS * 0.6);
    expect(run.max).toBeGreaterThanOrEqual(STALL_MS * 0.8);
  });
});

describe('bench/load.ts flatOut with a request sequence', () => {
  it('loops each connection through the steps, passes context from an answer to the next request, and reports each step', async () => {
    const server = await startTestServer({ delayMs: 1 });
    const sent: string[] = [];
    try {
      const run = await flatOut({
        name: 'sequence',
        origin: server.origin,
        connections: 2,
        amount: 20,
        requests: [
          {
            name: 'first',
            method: 'POST',
            path: '/first',
            onResponse: (status: number, body: string, context: { token?: string }) => {
              context.token = `${status}-${body}`;
            },
          },
          {
            name: 'second',
            method: 'GET',
            setupRequest: (request, context: { token?: string }) => {
              sent.push(context.token ?? 'none');
              return { ...request, path: `/second/${context.token}` };
            },
          },
        ],
      });
      expect(run.requests).toBe(20);
      expect(run.statuses).toEqual({ 200: 20 });
      expect(run.steps.map((s) => [s.name, s.requests, s.non2xx])).toEqual([
        ['first', 10, 0],
        ['second', 10, 0],
      ]);
      // Every second request carried what the first step's answer left in the connection's context.
      expect(sent.length).toBeGreaterThanOrEqual(10);
      expect(new Set(sent)).toEqual(new Set(['200-ok']));
      expect(run.seconds).toBeGreaterThan(0);
    } finally {
      server.child.kill();
    }
  });
});

describe('bench/load.ts flatOut with a warm-up', () => {
  it('warms up on the connections it then measures, and counts only requests sent after the warm-up', async () => {
    const server = await startTestServer({ delayMs: 5 });
    try {
      let measureStarts = 0;
      let measureStartedAt = 0;
      const began = performance.now();
      const run = await flatOut({
        name: 'warmed',
        origin: server.origin,
        request: { path: '/' },
        connections: 2,
        warmupSeconds: 0.6,
        seconds: 0.6,
        onMeasureStart: () => {
          measureStarts++;
          measureStartedAt = performance.now();
        },
      });
      expect(measureStarts).toBe(1);
      expect(measureStartedAt - began).toBeGreaterThanOrEqual(590);
      expect(run.warmupStatuses[200]).toBeGreaterThan(0);
      expect(run.statuses[200]).toBe(run.requests);
      expect(run.requests).toBeGreaterThan(0);
      // The rate's window is the measured run's, not the warm-up's (autocannon ends a run on its
      // next one-second tick after the duration: 0.6 s measured, + up to 1 s, + the machine's slack).
      expect(run.seconds).toBeGreaterThan(0.5);
      expect(run.seconds).toBeLessThan(2.5);
      expect(run.rps).toBeCloseTo(run.requests / run.seconds, 6);
      // Two connections for the warm-up and the measured run together.
      const opened = Number(await (await fetch(`${server.origin}/__connections`)).text());
      expect(opened).toBe(3); // the two clients' and this question's
    } finally {
      server.child.kill();
    }
  });
});

describe('bench/cpu-budget.ts', () => {
  const snapshot = (over: Partial<CpuSnapshot>): CpuSnapshot => ({
    gateway: 0,
    simulator: 0,
    postgres: new Map(),
    generator: 0,
    machineBusy: 0,
    machineIdle: 0,
    at: 0,
    ...over,
  });

  it('divides each consumer by the units, leaves the unaccounted busy time as other, and states the ceiling', () => {
    // 100 payouts in a second on 2 cores: 1.5 s busy, 0.5 s idle.
    const budget = cpuBudget(
      snapshot({}),
      snapshot({
        gateway: 600_000,
        simulator: 100_000,
        postgres: new Map([[7, 500_000]]),
        generator: 200_000,
        machineBusy: 1_500_000,
        machineIdle: 500_000,
      }),
      100,
    );
    expect(budget.perUnitUs).toEqual({ gateway: 6000, simulator: 1000, postgres: 5000, generator: 2000, other: 1000 });
    expect(budget.machinePerUnitUs).toBe(15_000);
    expect(budget.idleShare).toBe(0.25);
    expect(budget.ceilingPerSecond).toBeCloseTo((budget.cores * 1_000_000) / 15_000, 6);
    const printed = budgetTable(budget, 'payout', 300);
    expect(printed).toContain('postgres');
    expect(printed).toContain(`needs ≤ ${((budget.cores * 1_000_000) / 300).toFixed(0)} µs per payout`);
  });

  it("reads a process's and the machine's counters, which only grow", () => {
    const before = cpuSnapshot({ gateway: process.pid, simulator: 0 });
    // Burn 50 ms of this process's own CPU (not wall time: on a busy machine it may wait for a core),
    // so that the tick counters (10 ms) move.
    const start = process.cpuUsage();
    while (process.cpuUsage(start).user + process.cpuUsage(start).system < 50_000);
    const after = cpuSnapshot({ gateway: process.pid, simulator: 0 });
    expect(after.gateway).toBeGreaterThan(before.gateway);
    expect(after.machineBusy).toBeGreaterThan(before.machineBusy);
    expect(after.generator).toBeGreaterThan(before.generator);
    expect(after.simulator).toBe(0);
    expect(postgresUsed(before, after)).toBeGreaterThanOrEqual(0);
  });

  it("counts each PostgreSQL process's growth, a new one whole, and never subtracts one that ended", () => {
    const before = snapshot({
      postgres: new Map([
        [10, 1_000],
        [11, 5_000],
        [12, 9_000],
      ]),
    });
    // 10 grew by 500, 11 ended, 13 started and used 700.
    const after = snapshot({
      postgres: new Map([
        [10, 1_500],
        [12, 9_000],
        [13, 700],
      ]),
    });
    expect(postgresUsed(before, after)).toBe(1_200);
  });
});
