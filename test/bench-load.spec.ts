import { flatOut } from '../bench/load';
import { DELAY_MS, fixedDelayRun, STALL_MS, stallRun, startTestServer } from '../bench/load-selftest';

// The benchmarks' load module (bench/load.ts) must report what the server does: these check the
// measuring tool, not the gateway's speed. Bounds are one-sided where the machine's load could
// only make a figure larger, and generous where it could go either way.
describe('bench/load.ts paced mode (open loop)', () => {
  it('reports a fixed server delay: never below it, and close to it at the median', async () => {
    const run = await fixedDelayRun(100, 1.5);
    expect(run.requests).toBe(150);
    expect(run.errors).toBe(0);
    expect(run.non2xx).toBe(0);
    expect(run.p50).toBeGreaterThanOrEqual(DELAY_MS);
    // Upper bound loose: the suite runs beside other busy test files on two cores.
    expect(run.p50).toBeLessThan(DELAY_MS * 5);
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
