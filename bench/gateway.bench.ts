/**
 * `npm run bench`: gateway overhead and start-up time on this machine.
 *
 * Starts a fresh database (DATABASE_URL's server, else an embedded PostgreSQL), the provider
 * simulator and the compiled gateway as separate processes, then loads, in one run and at the
 * same fixed rate (BENCH_RATE, default 500 req/s, for BENCH_SECONDS, default 10 s):
 *   1. GET /v1/customers/{id}               through the gateway (a local read);
 *   2. GET /v1/customers/{id}?refresh=true  through the gateway (passes through to the provider);
 *   3. GET /api/v1/customers/{providerId}   on the simulator directly.
 * Prints req/s and p50/p90/p99 of each, the pass-through overhead over the direct call, the
 * ratios, and the gateway's time from process start to ready (GET /health/ready answering 200).
 * Targets (2 cores): overhead ≤ 1 ms p50 and ≤ 5 ms p99 at 500 req/s; start to ready ≤ 3 s.
 */
import 'dotenv/config';
import { load, type LoadResult, table } from './lib';
import { BENCH_PROVIDER_KEY, runBench, startStack } from './stack';

const RATE = Number(process.env.BENCH_RATE ?? 500);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);

async function main(): Promise<void> {
  const stack = await startStack({ name: 'gateway' });
  try {
    const { origin, simOrigin, startToReady } = { ...stack, startToReady: stack.startToReadyMs };
    const auth = { authorization: `Bearer ${stack.key}` };
    const created = await fetch(`${origin}/v1/customers`, {
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

    const warm = (url: string, headers: Record<string, string>) =>
      load({ name: 'warm-up', url, headers, rate: RATE, seconds: 2 });
    const runs: LoadResult[] = [];
    const targets: Array<[string, string, Record<string, string>]> = [
      ['gateway local read   GET /v1/customers/{id}', `${origin}/v1/customers/${customer.id}`, auth],
      [
        'gateway pass-through GET /v1/customers/{id}?refresh=true',
        `${origin}/v1/customers/${customer.id}?refresh=true`,
        auth,
      ],
      [
        'simulator direct     GET /api/v1/customers/{id}',
        `${simOrigin}/api/v1/customers/${customer.providerId}`,
        { authorization: `Bearer ${BENCH_PROVIDER_KEY}` },
      ],
    ];
    for (const [name, url, headers] of targets) {
      await warm(url, headers);
      runs.push(await load({ name, url, headers, rate: RATE, seconds: SECONDS }));
    }
    const [local, pass, direct] = runs;

    const out = [
      '',
      `wallet gateway benchmark: ${RATE} req/s for ${SECONDS} s per route, 10 connections, node ${process.version}`,
      '',
      table(runs),
      '',
      `pass-through overhead over the direct call: p50 ${(pass.p50 - direct.p50).toFixed(3)} ms (target ≤ 1), p99 ${(pass.p99 - direct.p99).toFixed(3)} ms (target ≤ 5)`,
      `ratios: pass-through/direct p50 ${(pass.p50 / direct.p50).toFixed(2)}x, p99 ${(pass.p99 / direct.p99).toFixed(2)}x; local read/direct p50 ${(local.p50 / direct.p50).toFixed(2)}x; req/s pass-through/direct ${(pass.rps / direct.rps).toFixed(2)}`,
      `gateway start to ready: ${startToReady.toFixed(0)} ms (target ≤ 3000)`,
      '',
    ];
    process.stdout.write(out.join('\n'));
    const failures = runs.filter((r) => r.non2xx > 0 || r.errors > 0);
    if (failures.length) throw new Error(`non-2xx or errors in: ${failures.map((f) => f.name).join(', ')}`);
  } finally {
    await stack.stop();
  }
}

runBench(main);
