/**
 * `npm run bench:reads`: every hot read of the gateway against a raw Fastify + pg server doing the
 * same query (bench/raw-baseline.ts), flat out, in one run.
 *
 * Method: starts the bench stack (fresh database, simulator, compiled gateway with NODE_ENV=production)
 * and the raw baseline on the same database; seeds through the API 60 customers, a Kenyan
 * beneficiary, a payout, a card holder, an active card and 10 top-ups. Then for each read, in
 * BENCH_ROUNDS rounds (default 3): the baseline, then the gateway, each flat out (bench/load.ts
 * `flatOut`: BENCH_CONNECTIONS, default 32, requests always in flight) for BENCH_SECONDS (default 5)
 * after a 1 s warm-up. Prints each read's median round: req/s of both, the ratio gateway/baseline
 * (target ≥ 0.6), p50/p99 and the CPU time each process spent per request (/proc/<pid>/stat).
 * The card movements list is read with `refresh=false` (the first page otherwise asks the provider first).
 * BENCH_READS=customer,card runs only the reads whose name contains one of those words. With
 * BENCH_PROFILE=1 the gateway runs under `--cpu-prof` and the top frames of its measured runs are
 * printed at the end (bench/profile.ts).
 */
import 'dotenv/config';
import { freePort } from '../scripts/lib/embedded-db';
import { spawnNode, waitUntilUp } from './lib';
import { flatOut, type RunResult, withCpu } from './load';
import { monotonicMicros, type ProfileWindow, whereTheTimeGoes } from './profile';
import { seedHotReads } from './seed';
import { runBench, startStack } from './stack';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const TARGET = 0.6;
const ONLY = (process.env.BENCH_READS ?? '')
  .split(',')
  .map((word) => word.trim())
  .filter(Boolean);

type Measured = RunResult & { cpuPerRequestUs: number };

async function main(): Promise<void> {
  const stack = await startStack({ name: 'reads', gatewayEnv: { RATE_LIMIT_PER_MINUTE: '100000000' } });
  const basePort = await freePort();
  const baseline = spawnNode(['--import', 'tsx', 'bench/raw-baseline.ts'], {
    ...process.env,
    DATABASE_URL: stack.databaseUrl,
    PORT: String(basePort),
  });
  const baseOrigin = `http://127.0.0.1:${basePort}`;
  try {
    await waitUntilUp(`${baseOrigin}/v1/customers`, process.hrtime.bigint(), baseline);
    const { origin, key } = stack;
    process.stdout.write('seeding through the API…\n');
    const { customer, beneficiary, payout, card } = await seedHotReads(origin, key, 'reads', 60);

    const reads: Array<[string, string, string]> = [
      ['customer by id', `/v1/customers/${customer.id}`, `/v1/customers/${customer.id}`],
      ['customers list (20)', '/v1/customers?limit=20', '/v1/customers'],
      ['card by id', `/v1/cards/${card.id}`, `/v1/cards/${card.id}`],
      [
        'card movements (20)',
        `/v1/cards/${card.id}/transactions?refresh=false&limit=20`,
        `/v1/cards/${card.id}/transactions`,
      ],
      ['payout by id', `/v1/payouts/${payout.id}`, `/v1/payouts/${payout.id}`],
      ['beneficiary by id', `/v1/beneficiaries/${beneficiary.id}`, `/v1/beneficiaries/${beneficiary.id}`],
      ['transaction by id', `/v1/transactions/${payout.id}`, `/v1/transactions/${payout.id}`],
    ];
    const selected = ONLY.length ? reads.filter(([name]) => ONLY.some((word) => name.includes(word))) : reads;
    const auth = { authorization: `Bearer ${key}` };
    // The profile's window: from the first measured gateway run to the last (the raw runs between
    // them leave the gateway idle, which the summary counts apart).
    let window: ProfileWindow | undefined;
    const results: Array<{ name: string; gateway: Measured; base: Measured; ratio: number }> = [];
    for (const [name, gatewayPath, basePath] of selected) {
      const rounds: Array<{ gateway: Measured; base: Measured; ratio: number }> = [];
      for (let round = 0; round < ROUNDS; round++) {
        const run = async (label: string, o: string, path: string, pid: number, headers?: Record<string, string>) => {
          const request = { path, headers };
          await flatOut({ name: 'warm-up', origin: o, request, seconds: 1, connections: CONNECTIONS });
          const gateway = pid === stack.pids.gateway;
          if (gateway) window ??= { fromUs: monotonicMicros(), toUs: 0 };
          const measured = await withCpu(pid, () =>
            flatOut({ name: label, origin: o, request, seconds: SECONDS, connections: CONNECTIONS }),
          );
          if (gateway && window) window.toUs = monotonicMicros();
          return measured;
        };
        const base = await run(`raw   ${name}`, baseOrigin, basePath, baseline.pid ?? 0);
        const gateway = await run(`gateway ${name}`, origin, gatewayPath, stack.pids.gateway, auth);
        rounds.push({ gateway, base, ratio: gateway.rps / base.rps });
      }
      rounds.sort((a, b) => a.ratio - b.ratio);
      const mid = rounds[Math.floor(rounds.length / 2)];
      results.push({ name, ...mid });
      const failed = rounds.filter(
        (r) =>
          r.gateway.non2xx + r.gateway.errors + r.base.non2xx + r.base.errors > 0 ||
          !r.gateway.requests ||
          !r.base.requests,
      );
      if (failed.length)
        throw new Error(`${name}: non-2xx, errors or no answer (${JSON.stringify(failed[0].gateway)})`);
      process.stdout.write(`  ${name}: ratios ${rounds.map((r) => r.ratio.toFixed(3)).join(', ')}\n`);
    }

    const head = [
      'read',
      'raw req/s',
      'gateway req/s',
      'ratio',
      'target',
      'gw p50 ms',
      'gw p99 ms',
      'raw cpu µs/req',
      'gw cpu µs/req',
      'cpu ×raw',
    ];
    const rows = results.map((r) => [
      r.name,
      r.base.rps.toFixed(0),
      r.gateway.rps.toFixed(0),
      // Three decimals: 0.597 printed as 0.60 read as met next to "MISSED".
      r.ratio.toFixed(3),
      r.ratio >= TARGET ? `≥ ${TARGET} met` : `≥ ${TARGET} MISSED`,
      r.gateway.p50.toFixed(2),
      r.gateway.p99.toFixed(2),
      r.base.cpuPerRequestUs.toFixed(0),
      r.gateway.cpuPerRequestUs.toFixed(0),
      (r.gateway.cpuPerRequestUs / r.base.cpuPerRequestUs).toFixed(2),
    ]);
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
    const line = (cells: string[]) =>
      cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
    process.stdout.write(
      [
        '',
        `hot reads, flat out (${CONNECTIONS} connections, ${SECONDS} s per run, median of ${ROUNDS} rounds by ratio), node ${process.version}`,
        '',
        line(head),
        ...rows.map(line),
        '',
      ].join('\n'),
    );
    process.stdout.write(
      await whereTheTimeGoes(
        stack,
        window,
        results.some((r) => r.ratio < TARGET),
      ),
    );
  } finally {
    baseline.kill('SIGTERM');
    await stack.stop();
  }
}

runBench(main);
