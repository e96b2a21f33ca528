/**
 * `npm run bench`: the gateway's pass-through overhead and local read, and its start-up time.
 *
 * Method: starts a fresh database (DATABASE_URL's server, else an embedded PostgreSQL), the provider
 * simulator and the compiled gateway as separate processes. Then, for each route, a warm-up (before
 * the route's first round BENCH_FIRST_WARMUP_SECONDS, default 10: on a slower machine a freshly
 * started gateway still compiled its hot paths after 2 s, and the first round's p99 was 18–65 ms
 * against 2–9 ms in later rounds; 2 s before later rounds) and
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
 *
 * Where tail latency comes from: around each gateway run the bench reads the gateway's /metrics
 * (prom-client's default metrics) and prints, per run, the garbage collector's pauses (scavenges
 * and mark-compacts, how many, their total, how many lasted ≥ 10 ms) and the event loop's delay
 * (max and p99; prom-client resets its histogram at each scrape, so the figures are the run's).
 * BENCH_PROFILE=1: the gateway runs under `--cpu-prof` and the top frames of the last round's
 * pass-through run are printed (bench/profile.ts).
 */
import 'dotenv/config';
import { paced, type RunResult, runTable, table, withCpu } from './load';
import { monotonicMicros, type ProfileWindow, whereTheTimeGoes } from './profile';
import { BENCH_PROVIDER_KEY, runBench, startStack } from './stack';

const RATE = Number(process.env.BENCH_RATE ?? 500);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** Warm-up of each route before its first round (later rounds: 2 s); see the method above. */
const FIRST_WARMUP_SECONDS = Number(process.env.BENCH_FIRST_WARMUP_SECONDS ?? 10);

type Measured = RunResult & { cpuPerRequestUs: number };

/** The gateway's pauses over one run (from its /metrics before and after). */
interface Pauses {
  /** Scavenges (young generation): how many, and their total in ms. */
  minor: number;
  minorMs: number;
  /** Mark-compacts (full collections) and incremental-marking steps. */
  major: number;
  majorMs: number;
  incremental: number;
  /** Pauses of any kind that lasted 10 ms or more. */
  over10ms: number;
  /** Event-loop delay during the run (prom-client's monitorEventLoopDelay, 10 ms resolution). */
  loopMaxMs: number;
  loopP99Ms: number;
}

/** The numeric samples of a Prometheus text exposition, keyed by `name{labels}` as written. */
async function scrape(origin: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${origin}/metrics`)).text();
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    samples.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return samples;
}

/** `fn`'s pauses in the gateway at `origin`: GC and event-loop figures between a scrape before and after. */
async function withPauses<T>(origin: string, fn: () => Promise<T>): Promise<T & { pauses: Pauses }> {
  const before = await scrape(origin);
  const result = await fn();
  const after = await scrape(origin);
  const delta = (key: string) => (after.get(key) ?? 0) - (before.get(key) ?? 0);
  const gc = (kind: string, what: 'count' | 'sum') => delta(`nodejs_gc_duration_seconds_${what}{kind="${kind}"}`);
  const kinds = ['minor', 'major', 'incremental', 'weakcb'];
  const over10ms = kinds.reduce(
    (n, kind) => n + gc(kind, 'count') - delta(`nodejs_gc_duration_seconds_bucket{le="0.01",kind="${kind}"}`),
    0,
  );
  return {
    ...result,
    pauses: {
      minor: gc('minor', 'count'),
      minorMs: gc('minor', 'sum') * 1000,
      major: gc('major', 'count'),
      majorMs: gc('major', 'sum') * 1000,
      incremental: gc('incremental', 'count'),
      over10ms,
      loopMaxMs: (after.get('nodejs_eventloop_lag_max_seconds') ?? 0) * 1000,
      loopP99Ms: (after.get('nodejs_eventloop_lag_p99_seconds') ?? 0) * 1000,
    },
  };
}

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
    const pauseRows: string[][] = [];
    let window: ProfileWindow | undefined;
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, route] of routes.entries()) {
        await paced({ ...route, name: 'warm-up', rate: RATE, seconds: round === 0 ? FIRST_WARMUP_SECONDS : 2 });
        const measure = () => withCpu(route.pid, () => paced({ ...route, rate: RATE, seconds: SECONDS }));
        if (route.origin !== stack.origin) {
          rounds[i].push(await measure());
          continue;
        }
        const profiled = i === 1 && round === ROUNDS - 1;
        if (profiled) window = { fromUs: monotonicMicros(), toUs: 0 };
        const run = await withPauses(stack.origin, measure);
        if (profiled && window) window.toUs = monotonicMicros();
        rounds[i].push(run);
        const p = run.pauses;
        pauseRows.push([
          `${round + 1}`,
          i === 1 ? 'pass-through' : 'local read',
          run.p99.toFixed(3),
          `${p.minor} / ${p.minorMs.toFixed(1)}`,
          `${p.major} / ${p.majorMs.toFixed(1)}`,
          `${p.incremental}`,
          `${p.over10ms}`,
          p.loopMaxMs.toFixed(1),
          p.loopP99Ms.toFixed(1),
        ]);
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
      `per round (p50 / p99 overhead ms, gateway cpu µs/req): ${overhead.map((o, k) => `${o.p50.toFixed(3)} / ${o.p99.toFixed(3)}, ${rounds[1][k].cpuPerRequestUs.toFixed(0)}`).join('; ')}`,
      `generator send lag p99 (part of every latency above): ${Math.max(direct.sendLagP99 ?? 0, pass.sendLagP99 ?? 0, local.sendLagP99 ?? 0).toFixed(3)} ms`,
      `gateway start to ready: ${stack.startToReadyMs.toFixed(0)} ms (target ≤ 3000)`,
      '',
      'the gateway during each run: GC pauses (count / total ms) and event-loop delay (ms), from its /metrics',
      table(
        [
          'round',
          'route',
          'p99 ms',
          'scavenges',
          'mark-compacts',
          'incr. marking',
          'pauses ≥ 10 ms',
          'loop max',
          'loop p99',
        ],
        pauseRows,
      ),
      '',
    ];
    process.stdout.write(out.join('\n'));
    const missed = sortedP50.at(-1)! > 1 || sortedP99.at(-1)! > 5;
    process.stdout.write(await whereTheTimeGoes(stack, window, missed));
    const failures = rounds.flat().filter((r) => r.non2xx > 0 || r.errors > 0);
    if (failures.length) throw new Error(`non-2xx or errors in: ${failures.map((f) => f.name).join(', ')}`);
  } finally {
    await stack.stop();
  }
}

runBench(main);
