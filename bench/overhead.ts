/**
 * `npm run bench:overhead`: the gateway's own CPU time per hot read, in process and without
 * sockets, to see what every route pays (guards, throttler, request context, logging, metrics,
 * interceptors, validation, serialization) on a machine too busy for the HTTP benchmarks' figures.
 * One row is the pass-through (`?refresh=true`): it adds the provider call (axios on undici, to the
 * simulator over HTTP) to the customer read.
 *
 * Method: starts the bench stack (fresh database, simulator, compiled gateway), seeds through the
 * API as `npm run bench:reads` does (bench/seed.ts), stops that gateway, then creates the compiled
 * app (dist/app.js `createApp`, NODE_ENV=production, LOG_LEVEL=warn) in this process and, for each
 * read, sends it with Fastify's `inject` (no socket: the load generator's own cost is small and the
 * same before and after a change), OVERHEAD_CONCURRENCY (default 16) at a time: a warm-up of
 * OVERHEAD_WARMUP requests (default 3000) of every read first, then per read OVERHEAD_REQUESTS (default 6000) measured with
 * `process.cpuUsage()` (user + system µs / request; the database's time is not in it). Prints the
 * table; OVERHEAD_ROUNDS (default 3) rounds, the median per read. With BENCH_PROFILE=1 each read's
 * last round runs under the inspector's CPU profiler (100 µs sampling) and its top frames are
 * printed (bench/profile.ts). BENCH_READS=customer,card selects reads by name.
 */
import 'dotenv/config';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { profileInProcess } from './profile';
import { seedHotReads } from './seed';
import { runBench, startInProcessGateway, startStack } from './stack';

const CONCURRENCY = Number(process.env.OVERHEAD_CONCURRENCY ?? 16);
const WARMUP = Number(process.env.OVERHEAD_WARMUP ?? 3000);
const REQUESTS = Number(process.env.OVERHEAD_REQUESTS ?? 6000);
const ROUNDS = Number(process.env.OVERHEAD_ROUNDS ?? 3);
const PROFILE = process.env.BENCH_PROFILE === '1';
const ONLY = (process.env.BENCH_READS ?? '')
  .split(',')
  .map((word) => word.trim())
  .filter(Boolean);

/** `count` GETs of `url`, `CONCURRENCY` in flight; CPU µs per request. @throws on any answer but 200. */
async function drive(app: NestFastifyApplication, url: string, headers: Record<string, string>, count: number) {
  const fastify = app.getHttpAdapter().getInstance();
  let left = count;
  const before = process.cpuUsage();
  const worker = async () => {
    while (left-- > 0) {
      const res = await fastify.inject({ method: 'GET', url, headers });
      if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const used = process.cpuUsage(before);
  return (used.user + used.system) / count;
}

async function main(): Promise<void> {
  const stack = await startStack({ name: 'overhead', profile: false });
  let app: NestFastifyApplication | undefined;
  try {
    const { origin, key } = stack;
    process.stdout.write('seeding through the API…\n');
    const { customer, beneficiary, payout, card } = await seedHotReads(origin, key, 'overhead', 30);
    await stack.stopGateway();

    app = await startInProcessGateway(stack, origin);

    const reads: Array<[string, string]> = [
      ['customer by id', `/v1/customers/${customer.id}`],
      // The provider's customer read as well (to the simulator, over HTTP): the pass-through of `npm run bench`.
      ['customer pass-through', `/v1/customers/${customer.id}?refresh=true`],
      ['customers list (20)', '/v1/customers?limit=20'],
      ['card by id', `/v1/cards/${card.id}`],
      ['card movements (20)', `/v1/cards/${card.id}/transactions?refresh=false&limit=20`],
      ['payout by id', `/v1/payouts/${payout.id}`],
      ['beneficiary by id', `/v1/beneficiaries/${beneficiary.id}`],
      ['transaction by id', `/v1/transactions/${payout.id}`],
    ];
    const selected = ONLY.length ? reads.filter(([name]) => ONLY.some((word) => name.includes(word))) : reads;
    const headers = { authorization: `Bearer ${key}` };
    const rows: string[] = [];
    const profiles: string[] = [];
    // Every read warmed up before any is measured (the first one measured would pay for the JIT otherwise).
    for (const [, url] of selected) await drive(app, url, headers, WARMUP);
    for (const [name, url] of selected) {
      const rounds: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const measure = () => drive(app as NestFastifyApplication, url, headers, REQUESTS);
        if (PROFILE && round === ROUNDS - 1) {
          const { result, report } = await profileInProcess(
            `overhead-${name}`,
            `${name}: in-process CPU profile`,
            measure,
          );
          rounds.push(result);
          profiles.push(report);
        } else rounds.push(await measure());
      }
      const sorted = [...rounds].sort((a, b) => a - b);
      const median = sorted[Math.floor(sorted.length / 2)];
      rows.push(
        `${name.padEnd(22)} ${median.toFixed(0).padStart(6)}   (${rounds.map((r) => r.toFixed(0)).join(', ')})`,
      );
      process.stdout.write(`  ${name}: ${median.toFixed(0)} µs/req\n`);
    }
    process.stdout.write(
      [
        '',
        `gateway CPU per request, in process (inject, ${CONCURRENCY} in flight, ${REQUESTS} requests × ${ROUNDS} rounds), node ${process.version}`,
        '',
        `${'read'.padEnd(22)} µs/req   (rounds)`,
        ...rows,
        '',
        ...profiles.map((p) => `${p}\n`),
      ].join('\n'),
    );
  } finally {
    await app?.close();
    await stack.stop();
  }
}

runBench(main);
