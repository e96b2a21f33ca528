/**
 * `npm run bench`: the gateway's pass-through overhead and local read, and its start-up time.
 *
 * Method: starts a fresh database (DATABASE_URL's server, else an embedded PostgreSQL), the provider
 * simulator and the compiled gateway as separate processes. Then, for each route, a 2 s warm-up and
 * a BENCH_SECONDS (default 10) run of open-loop paced load (bench/load.ts: one request every
 * 1/BENCH_RATE s, default 500 req/s, latency from each request's intended send time):
 *   1. GET /api/v1/customers/{id}            on the simulator directly (the baseline);
 *   2. GET /v1/customers/{id}?refresh=true   through the gateway (passes through to the provider);
 *   3. GET /v1/customers/{id}                through the gateway (a local read).
 * Runs alternate in that order BENCH_ROUNDS times (default 3) so machine noise hits all alike; the
 * reported figure of each route is the median round. Prints each run's p50/p90/p99, its ratio to
 * the direct call, the pass-through overhead (pass-through minus direct) and the CPU time the
 * gateway (and the simulator) spent per request, read from /proc.
 * Targets (2 cores): overhead ≤ 1 ms p50 and ≤ 5 ms p99 at 500 req/s; start to ready ≤ 3 s.
 */
import 'dotenv/config';
import { paced, type RunResult, runTable, withCpu } from './load';
import { BENCH_PROVIDER_KEY, runBench, startStack } from './stack';

const RATE = Number(process.env.BENCH_RATE ?? 500);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

type Measured = RunResult & { cpuPerRequestUs: number };

const median = (runs: Measured[], by: (r: Measured) => number) =>
  [...runs].sort((a, b) => by(a) - by(b))[Math.floor(runs.length / 2)];

async function main(): Promise<void> {
  const stack = await startStack({ name: 'gateway' });
  try {
    const auth = { authorization: `Bearer ${stack.key}` };
    const created = await fetch(`${stack.origin}/v1/customers`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({
        email: 'bench@example.com',
        firstName: 'Bench',
        lastName: 'Mark',
        phone: '8012345678',
        countryCode: '+234',
      }),
    });
    const customer = (await created.json()) as { id: string; providerId: string };
    if (created.status !== 201)
      throw new Error(`customer create failed: ${created.status} ${JSON.stringify(customer)}`);

    const routes = [
      {
        name: 'simulator direct     GET /api/v1/customers/{id}',
        origin: stack.simOrigin,
        pid: stack.pids.simulator,
        request: {
          path: `/api/v1/customers/${customer.providerId}`,
          headers: { authorization: `Bearer ${BENCH_PROVIDER_KEY}` },
        },
      },
      {
        name: 'gateway pass-through GET /v1/customers/{id}?refresh=true',
        origin: stack.origin,
        pid: stack.pids.gateway,
        request: { path: `/v1/customers/${customer.id}?refresh=true`, headers: auth },
      },
      {
        name: 'gateway local read   GET /v1/customers/{id}',
        origin: stack.origin,
        pid: stack.pids.gateway,
        request: { path: `/v1/customers/${customer.id}`, headers: auth },
      },
    ];
    const rounds: Measured[][] = routes.map(() => []);
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, route] of routes.entries()) {
        await paced({ ...route, name: 'warm-up', rate: RATE, seconds: 2 });
        rounds[i].push(await withCpu(route.pid, () => paced({ ...route, rate: RATE, seconds: SECONDS })));
      }
    }
    const [direct, pass, local] = rounds.map((runs) => median(runs, (r) => r.p50));
    const overhead = rounds[1].map((p, k) => ({ p50: p.p50 - rounds[0][k].p50, p99: p.p99 - rounds[0][k].p99 }));
    const sortedP50 = overhead.map((o) => o.p50).sort((a, b) => a - b);
    const sortedP99 = overhead.map((o) => o.p99).sort((a, b) => a - b);

    const out = [
      '',
      `wallet gateway benchmark: open-loop paced ${RATE} req/s, ${SECONDS} s per run, ${ROUNDS} rounds (median shown), node ${process.version}`,
      `cpu µs/req: the measured process's own CPU time per request (the simulator's for the direct call, the gateway's otherwise)`,
      '',
      runTable([direct, pass, local], direct),
      '',
      `pass-through overhead over the direct call (per round, min–max): p50 ${sortedP50[0].toFixed(3)}–${sortedP50.at(-1)!.toFixed(3)} ms (target ≤ 1), p99 ${sortedP99[0].toFixed(3)}–${sortedP99.at(-1)!.toFixed(3)} ms (target ≤ 5)`,
      `generator send lag p99 (part of every latency above): ${Math.max(direct.sendLagP99 ?? 0, pass.sendLagP99 ?? 0, local.sendLagP99 ?? 0).toFixed(3)} ms`,
      `gateway start to ready: ${stack.startToReadyMs.toFixed(0)} ms (target ≤ 3000)`,
      '',
    ];
    process.stdout.write(out.join('\n'));
    const failures = rounds.flat().filter((r) => r.non2xx > 0 || r.errors > 0);
    if (failures.length) throw new Error(`non-2xx or errors in: ${failures.map((f) => f.name).join(', ')}`);
  } finally {
    await stack.stop();
  }
}

runBench(main);
