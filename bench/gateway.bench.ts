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
import { Client } from 'pg';
import { createApiClient } from '../src/auth/api-clients.repository';
import { DEMO_SCOPES } from '../src/auth/scopes';
import { createPgAdapter } from '../src/database/prisma.service';
import { PrismaClient } from '../src/generated/prisma/client';
import { freePort, startEmbeddedDatabase, withDatabase } from '../scripts/lib/embedded-db';
import { migrateDatabase } from '../scripts/lib/migrate';
import { buildGateway, load, LoadResult, spawnNode, table, waitUntilUp } from './lib';

const RATE = Number(process.env.BENCH_RATE ?? 500);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const PROVIDER_KEY = 'sk.bench0123456789abcdef.local';

async function main(): Promise<void> {
  const cleanup: Array<() => Promise<unknown> | unknown> = [];
  try {
    let server = process.env.DATABASE_URL;
    if (!server) {
      const embedded = await startEmbeddedDatabase({ persistent: false });
      cleanup.push(() => embedded.stop());
      server = embedded.url;
    }
    const dbName = `wg_bench_${process.pid}`;
    const databaseUrl = withDatabase(server, dbName);
    migrateDatabase(databaseUrl);
    cleanup.push(async () => {
      const admin = new Client({ connectionString: withDatabase(server!, 'postgres') });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
      await admin.end();
    });

    const simPort = await freePort();
    const sim = spawnNode(['--import', 'tsx', 'simulator/main.ts'], {
      ...process.env,
      SIMULATOR_PORT: String(simPort),
      PROVIDER_API_KEY: PROVIDER_KEY,
    });
    cleanup.push(() => sim.kill('SIGTERM'));
    const simOrigin = `http://127.0.0.1:${simPort}`;
    await waitUntilUp(`${simOrigin}/__admin/state`, process.hrtime.bigint(), sim);

    process.stdout.write('building the gateway (tsc)…\n');
    buildGateway();
    const port = await freePort();
    const started = process.hrtime.bigint();
    const gateway = spawnNode(['dist/main.js'], {
      ...process.env,
      NODE_ENV: 'production',
      PORT: String(port),
      DATABASE_URL: databaseUrl,
      PROVIDER_BASE_URL: `${simOrigin}/api/v1`,
      PROVIDER_API_KEY: PROVIDER_KEY,
      PROVIDER_WEBHOOK_SECRET: 'bench',
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_MINUTE: '10000000',
    });
    cleanup.push(() => gateway.kill('SIGTERM'));
    const origin = `http://127.0.0.1:${port}`;
    const startToReady = await waitUntilUp(`${origin}/health/ready`, started, gateway);

    const prisma = new PrismaClient({ adapter: createPgAdapter(databaseUrl, 1) });
    const { key } = await createApiClient(prisma, 'bench', DEMO_SCOPES);
    await prisma.$disconnect();
    const auth = { authorization: `Bearer ${key}` };
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
        { authorization: `Bearer ${PROVIDER_KEY}` },
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
    for (const fn of cleanup.reverse()) await fn();
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`bench failed: ${(error as Error).stack ?? error}\n`);
    process.exit(1);
  },
);
