import { Client } from 'pg';
import { freePort, startEmbeddedDatabase, withDatabase } from '../scripts/lib/embedded-db';
import { migrateDatabase } from '../scripts/lib/migrate';
import { createApiClient } from '../src/auth/api-clients.repository';
import { DEMO_SCOPES } from '../src/auth/scopes';
import { createPgAdapter } from '../src/database/prisma.service';
import { PrismaClient } from '../src/generated/prisma/client';
import { buildGateway, spawnNode, waitUntilUp } from './lib';

export const BENCH_PROVIDER_KEY = 'sk.bench0123456789abcdef.local';
export const BENCH_WEBHOOK_SECRET = 'whsec-bench';

/** A running benchmark stack: its own database, the simulator and the compiled gateway, each a process. */
export interface BenchStack {
  /** Gateway origin, e.g. http://127.0.0.1:40123. */
  origin: string;
  simOrigin: string;
  databaseUrl: string;
  /** Gateway time from process start to GET /health/ready answering, ms. */
  startToReadyMs: number;
  /** An API key holding the demo scopes. */
  key: string;
  /** A pg client on the stack's database (for seeding and checks). */
  sql: Client;
  pids: { gateway: number; simulator: number };
  stop(): Promise<void>;
}

/**
 * Starts a database (on DATABASE_URL's server, else an embedded PostgreSQL) migrated from
 * scratch, the simulator (tsx) and the gateway (compiled with tsc, NODE_ENV=production), and
 * creates an API key. `gatewayEnv` / `simulatorEnv` add or override variables. `stop()` kills both
 * processes and drops the database.
 */
export async function startStack(
  opts: {
    name?: string;
    gatewayEnv?: Record<string, string>;
    simulatorEnv?: Record<string, string>;
    /** Runs on the migrated database before the gateway starts (e.g. to leave work as a dead process would). */
    beforeGateway?: (sql: Client) => Promise<void>;
  } = {},
): Promise<BenchStack> {
  const cleanup: Array<() => unknown> = [];
  const stop = async () => {
    for (const fn of cleanup.reverse()) {
      try {
        await fn();
      } catch {
        /* keep cleaning */
      }
    }
  };
  try {
    let server = process.env.DATABASE_URL;
    if (!server) {
      const embedded = await startEmbeddedDatabase({ persistent: false });
      cleanup.push(() => embedded.stop());
      server = embedded.url;
    }
    const dbName = `wg_bench_${opts.name ?? 'stack'}_${process.pid}`;
    const databaseUrl = withDatabase(server, dbName);
    migrateDatabase(databaseUrl);
    cleanup.push(async () => {
      const admin = new Client({ connectionString: withDatabase(server, 'postgres') });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
      await admin.end();
    });

    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const simPort = await freePort();
    const simulator = spawnNode(['--import', 'tsx', 'simulator/main.ts'], {
      ...process.env,
      SIMULATOR_PORT: String(simPort),
      PROVIDER_API_KEY: BENCH_PROVIDER_KEY,
      PROVIDER_WEBHOOK_SECRET: BENCH_WEBHOOK_SECRET,
      SIMULATOR_WEBHOOK_URL: `${origin}/webhooks/provider`,
      ...opts.simulatorEnv,
    });
    cleanup.push(() => simulator.kill('SIGTERM'));
    const simOrigin = `http://127.0.0.1:${simPort}`;
    await waitUntilUp(`${simOrigin}/__admin/state`, process.hrtime.bigint(), simulator);

    process.stdout.write('building the gateway (tsc)…\n');
    buildGateway();
    if (opts.beforeGateway) {
      const seed = new Client({ connectionString: databaseUrl });
      await seed.connect();
      try {
        await opts.beforeGateway(seed);
      } finally {
        await seed.end();
      }
    }
    const started = process.hrtime.bigint();
    const gateway = spawnNode(['dist/main.js'], {
      ...process.env,
      NODE_ENV: 'production',
      PORT: String(port),
      DATABASE_URL: databaseUrl,
      PROVIDER_BASE_URL: `${simOrigin}/api/v1`,
      PROVIDER_API_KEY: BENCH_PROVIDER_KEY,
      PROVIDER_WEBHOOK_SECRET: BENCH_WEBHOOK_SECRET,
      PUBLIC_BASE_URL: origin,
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_MINUTE: '10000000',
      JOBS_ENABLED: 'false',
      ...opts.gatewayEnv,
    });
    cleanup.push(() => gateway.kill('SIGTERM'));
    const startToReadyMs = await waitUntilUp(`${origin}/health/ready`, started, gateway);

    const prisma = new PrismaClient({ adapter: createPgAdapter(databaseUrl, 1) });
    const { key } = await createApiClient(prisma, 'bench', DEMO_SCOPES);
    await prisma.$disconnect();
    const sql = new Client({ connectionString: databaseUrl });
    await sql.connect();
    cleanup.push(() => sql.end());
    return {
      origin,
      simOrigin,
      databaseUrl,
      startToReadyMs,
      key,
      sql,
      pids: { gateway: gateway.pid ?? 0, simulator: simulator.pid ?? 0 },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Runs `main` and exits 0, or prints the error and exits 1. */
export function runBench(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (error) => {
      process.stderr.write(`bench failed: ${(error as Error).stack ?? error}\n`);
      process.exit(1);
    },
  );
}
