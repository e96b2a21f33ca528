/**
 * `npm run bench:payouts-overhead`: the gateway's own CPU time, SQL statements and database commits
 * per payout (create + confirm), in process and without sockets on the gateway's side, to compare
 * one change of the payout path with the next on a machine too busy for `bench:payouts`' rates.
 *
 * Method: starts the bench stack (fresh database, simulator at 0 latency, compiled gateway), creates
 * a customer and a Kenyan beneficiary through the API, stops that gateway, then creates the compiled
 * app (dist/app.js `createApp`, NODE_ENV=production, LOG_LEVEL=warn, jobs off) in this process and
 * runs payouts with Fastify's `inject`, OVERHEAD_CONCURRENCY (default 16) at a time, each a
 * `POST /v1/payouts` then `POST /v1/payouts/{id}/confirm` with its own Idempotency-Key (the provider
 * calls go to the simulator over HTTP, as in production): a warm-up of OVERHEAD_WARMUP payouts
 * (default 300), then OVERHEAD_ROUNDS (default 3) rounds of OVERHEAD_REQUESTS payouts (default 1000),
 * each measured with `process.cpuUsage()` (user + system µs per payout; the database's and the
 * simulator's time are not in it), node-postgres queries sent (every pool: a wrapped
 * `Client.prototype.query`) and the database's commits (pg_stat_database.xact_commit, read-only
 * ones included). Prints each round and the median. With BENCH_PROFILE=1 the last round runs under
 * the inspector's CPU profiler (100 µs sampling) and its top frames are printed (bench/profile.ts).
 */
import 'dotenv/config';
import { randomUUID } from 'node:crypto';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Client } from 'pg';
import { profileInProcess } from './profile';
import { api } from './seed';
import { runBench, startInProcessGateway, startStack } from './stack';

const CONCURRENCY = Number(process.env.OVERHEAD_CONCURRENCY ?? 16);
const WARMUP = Number(process.env.OVERHEAD_WARMUP ?? 300);
const REQUESTS = Number(process.env.OVERHEAD_REQUESTS ?? 1000);
const ROUNDS = Number(process.env.OVERHEAD_ROUNDS ?? 3);
const PROFILE = process.env.BENCH_PROFILE === '1';

let queries = 0;
const query = Reflect.get(Client.prototype, 'query') as (this: Client, ...args: unknown[]) => unknown;
Reflect.set(Client.prototype, 'query', function (this: Client, ...args: unknown[]) {
  queries++;
  return query.apply(this, args);
});

async function main(): Promise<void> {
  const stack = await startStack({ name: 'payouts_overhead', profile: false });
  let app: NestFastifyApplication | undefined;
  try {
    const { origin, key, sql } = stack;
    const customer = await api<{ id: string }>(origin, key, 'POST', '/v1/customers', {
      email: 'payouts-overhead@example.com',
      firstName: 'Payout',
      lastName: 'Overhead',
      phone: '712345678',
      countryCode: '+254',
    });
    const beneficiary = await api<{ id: string }>(origin, key, 'POST', '/v1/beneficiaries', {
      customerId: customer.id,
      country: 'KE',
      currency: 'KES',
      destination: { type: 'MOBILEMONEY', network: 'MPESA', accountNumber: '254712345678' },
    });
    await stack.stopGateway();

    app = await startInProcessGateway(stack, origin);
    const fastify = app.getHttpAdapter().getInstance();
    const body = { customerId: customer.id, beneficiaryId: beneficiary.id, amount: 500, description: 'overhead' };

    /** `count` payouts, CONCURRENCY at a time. @throws on any answer but 201. */
    const drive = async (count: number) => {
      let left = count;
      const worker = async () => {
        while (left-- > 0) {
          const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
          const created = await fastify.inject({
            method: 'POST',
            url: '/v1/payouts',
            headers: { ...headers, 'idempotency-key': randomUUID() },
            payload: body,
          });
          if (created.statusCode !== 201) throw new Error(`create: ${created.statusCode} ${created.body}`);
          const { id } = JSON.parse(created.body) as { id: string };
          const confirmed = await fastify.inject({
            method: 'POST',
            url: `/v1/payouts/${id}/confirm`,
            headers: { authorization: headers.authorization, 'idempotency-key': randomUUID() },
          });
          if (confirmed.statusCode !== 201) throw new Error(`confirm: ${confirmed.statusCode} ${confirmed.body}`);
        }
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    };
    const commits = async () =>
      Number(
        (
          await sql.query<{ n: string }>(
            'SELECT xact_commit AS n FROM pg_stat_database WHERE datname = current_database()',
          )
        ).rows[0].n,
      );
    process.stdout.write(`warm-up: ${WARMUP} payouts…\n`);
    await drive(WARMUP);
    const rounds: Array<{ cpu: number; statements: number; commits: number }> = [];
    let profile = '';
    for (let round = 0; round < ROUNDS; round++) {
      // pg_stat_database is updated when a backend reports (at most every second or so): let it settle.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const commitsBefore = await commits();
      const queriesBefore = queries;
      const before = process.cpuUsage();
      if (PROFILE && round === ROUNDS - 1) {
        profile = (await profileInProcess('payouts-overhead', 'payouts: in-process CPU profile', () => drive(REQUESTS)))
          .report;
      } else await drive(REQUESTS);
      const used = process.cpuUsage(before);
      const statements = (queries - queriesBefore) / REQUESTS;
      await new Promise((resolve) => setTimeout(resolve, 1500));
      // The two reads of the counter are themselves commits of this connection.
      const committed = ((await commits()) - commitsBefore - 1) / REQUESTS;
      rounds.push({ cpu: (used.user + used.system) / REQUESTS, statements, commits: committed });
      process.stdout.write(
        `  round ${round + 1}: ${rounds[round].cpu.toFixed(0)} µs CPU, ${statements.toFixed(2)} statements, ${committed.toFixed(2)} commits per payout\n`,
      );
    }
    const median = (pick: (r: (typeof rounds)[number]) => number) =>
      [...rounds.map(pick)].sort((a, b) => a - b)[Math.floor(rounds.length / 2)];
    process.stdout.write(
      `\ngateway per payout (create + confirm), in process (inject, ${CONCURRENCY} in flight, ${REQUESTS} payouts × ${ROUNDS} rounds, median), node ${process.version}:\n` +
        `  CPU ${median((r) => r.cpu).toFixed(0)} µs   statements ${median((r) => r.statements).toFixed(2)}   commits ${median((r) => r.commits).toFixed(2)}\n`,
    );
    if (profile) process.stdout.write(`\n${profile}\n`);
  } finally {
    await app?.close();
    await stack.stop();
  }
}

runBench(main);
