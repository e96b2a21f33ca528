import { type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { type Client } from 'pg';
import { freePort, startEmbeddedDatabase, withDatabase } from '../scripts/lib/embedded-db';
import { migrateDatabase } from '../scripts/lib/migrate';
import type { createApp as CreateApp } from '../src/app';
import { createApiClient } from '../src/auth/api-clients.repository';
import { DEMO_SCOPES } from '../src/auth/scopes';
import { createPgAdapter } from '../src/database/prisma.service';
import { PrismaClient } from '../src/generated/prisma/client';
import { benchSqlClient, buildGateway, spawnNode, waitUntilUp } from './lib';

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
  /**
   * Where the gateway writes its CPU profile when started with `profile` (BENCH_PROFILE=1):
   * read it with bench/profile.ts `profileReport` after `stopGateway()`.
   */
  profileDir?: string;
  /** Stops the gateway (SIGTERM) and waits for it to exit (so its CPU profile is written); idempotent. */
  stopGateway(): Promise<void>;
  stop(): Promise<void>;
}

/** Whether BENCH_PROFILE=1 asks for a CPU profile of the gateway. */
export const PROFILE_REQUESTED = process.env.BENCH_PROFILE === '1';

/** SIGTERM, then waits for the exit (SIGKILL after `graceMs`). */
export async function stopChild(child: ChildProcess, graceMs = 15_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** A fresh, migrated database for one benchmark run; `drop()` removes it (and the embedded server). */
export interface BenchDatabase {
  databaseUrl: string;
  drop(): Promise<void>;
}

/**
 * Creates the database `wg_bench_<name>_<pid>` on DATABASE_URL's server, or on an embedded
 * PostgreSQL when DATABASE_URL is unset, and applies every migration (prisma migrate deploy).
 */
export async function createBenchDatabase(name: string): Promise<BenchDatabase> {
  let server = process.env.DATABASE_URL;
  let embedded: Awaited<ReturnType<typeof startEmbeddedDatabase>> | undefined;
  if (!server) {
    embedded = await startEmbeddedDatabase({ persistent: false });
    server = embedded.url;
  }
  const dbName = `wg_bench_${name}_${process.pid}`;
  const admin = server;
  const drop = async () => {
    try {
      const client = await benchSqlClient(withDatabase(admin, 'postgres'));
      await client.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
      await client.end();
    } finally {
      await embedded?.stop();
    }
  };
  const databaseUrl = withDatabase(server, dbName);
  try {
    migrateDatabase(databaseUrl);
  } catch (error) {
    await drop().catch(() => undefined);
    throw error;
  }
  return { databaseUrl, drop };
}

/** The provider simulator (tsx) on a free port, calling back `webhookUrl`; `stop()` waits for its exit. */
export async function startSimulator(
  webhookUrl: string,
  env: Record<string, string> = {},
): Promise<{ origin: string; child: ChildProcess; stop(): Promise<void> }> {
  const port = await freePort();
  const child = spawnNode(['--import', 'tsx', 'simulator/main.ts'], {
    ...process.env,
    SIMULATOR_PORT: String(port),
    PROVIDER_API_KEY: BENCH_PROVIDER_KEY,
    PROVIDER_WEBHOOK_SECRET: BENCH_WEBHOOK_SECRET,
    SIMULATOR_WEBHOOK_URL: webhookUrl,
    ...env,
  });
  const origin = `http://127.0.0.1:${port}`;
  try {
    await waitUntilUp(`${origin}/__admin/state`, process.hrtime.bigint(), child);
  } catch (error) {
    await stopChild(child);
    throw error;
  }
  return { origin, child, stop: () => stopChild(child) };
}

/** Creates one API key holding the demo scopes per name (directly in the database); returns the keys in order. */
export async function createBenchKeys(databaseUrl: string, names: string[]): Promise<string[]> {
  const prisma = new PrismaClient({ adapter: createPgAdapter(databaseUrl, 1) });
  try {
    const keys: string[] = [];
    for (const name of names) keys.push((await createApiClient(prisma, name, DEMO_SCOPES)).key);
    return keys;
  } finally {
    await prisma.$disconnect();
  }
}

/**
 * Starts a database (on DATABASE_URL's server, else an embedded PostgreSQL) migrated from
 * scratch, the simulator (tsx) and the gateway (compiled with tsc, NODE_ENV=production), and
 * creates an API key. `gatewayEnv` / `simulatorEnv` add or override variables. `stop()` stops both
 * processes (waiting for their exit) and drops the database. With `profile` the gateway runs under
 * `--cpu-prof --cpu-prof-dir=<profileDir>` (V8's sampling profiler, 1 ms interval; the profile is
 * written at exit).
 */
export async function startStack(
  opts: {
    name?: string;
    gatewayEnv?: Record<string, string>;
    simulatorEnv?: Record<string, string>;
    /** Runs on the migrated database before the gateway starts (e.g. to leave work as a dead process would). */
    beforeGateway?: (sql: Client) => Promise<void>;
    /** Start the gateway with `--cpu-prof` into a temporary `profileDir` (default: BENCH_PROFILE=1). */
    profile?: boolean;
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
    const database = await createBenchDatabase(opts.name ?? 'stack');
    cleanup.push(() => database.drop());
    const { databaseUrl } = database;

    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const sim = await startSimulator(`${origin}/webhooks/provider`, opts.simulatorEnv);
    cleanup.push(() => sim.stop());
    const { origin: simOrigin, child: simulator } = sim;

    process.stdout.write('building the gateway (tsc)…\n');
    buildGateway();
    if (opts.beforeGateway) {
      const seed = await benchSqlClient(databaseUrl);
      try {
        await opts.beforeGateway(seed);
      } finally {
        await seed.end();
      }
    }
    const profile = opts.profile ?? PROFILE_REQUESTED;
    const profileDir = profile ? mkdtempSync(path.join(tmpdir(), 'wg-bench-prof-')) : undefined;
    const started = process.hrtime.bigint();
    const gatewayArgs = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, 'dist/main.js'] : ['dist/main.js'];
    const gateway = spawnNode(gatewayArgs, {
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
      // Production refuses to start without a key for personal data at rest: a throwaway one per run.
      PII_ENCRYPTION_KEYS: process.env.PII_ENCRYPTION_KEYS ?? `bench:${randomBytes(32).toString('base64')}`,
      JOBS_ENABLED: 'false',
      ...opts.gatewayEnv,
    });
    const stopGateway = () => stopChild(gateway);
    cleanup.push(stopGateway);
    const startToReadyMs = await waitUntilUp(`${origin}/health/ready`, started, gateway);

    const [key] = await createBenchKeys(databaseUrl, ['bench']);
    // A database restart ends this connection: logged, never an unhandled 'error' event (its next
    // query then fails, and the benchmark's own stop runs).
    const sql = await benchSqlClient(databaseUrl);
    cleanup.push(() => sql.end());
    return {
      origin,
      simOrigin,
      databaseUrl,
      startToReadyMs,
      key,
      sql,
      pids: { gateway: gateway.pid ?? 0, simulator: simulator.pid ?? 0 },
      profileDir,
      stopGateway,
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
      // fetch's "fetch failed" says why only in its cause (ECONNREFUSED, a socket closed…).
      const { cause } = error as Error;
      const why = cause instanceof Error ? `\ncause: ${cause.name}: ${cause.message}` : '';
      process.stderr.write(`bench failed: ${(error as Error).stack ?? error}${why}\n`);
      process.exit(1);
    },
  );
}

/**
 * Starts bench/raw-baseline.ts (plain Fastify + pg: the same queries without the gateway's
 * pipeline, and a signature-checking callback receiver) on the stack's database, as its own process.
 */
export async function startRawBaseline(
  stack: Pick<BenchStack, 'databaseUrl'>,
): Promise<{ origin: string; pid: number; stop(): Promise<void> }> {
  const port = await freePort();
  const child = spawnNode(['--import', 'tsx', 'bench/raw-baseline.ts'], {
    ...process.env,
    DATABASE_URL: stack.databaseUrl,
    PORT: String(port),
    PROVIDER_WEBHOOK_SECRET: BENCH_WEBHOOK_SECRET,
  });
  const origin = `http://127.0.0.1:${port}`;
  try {
    await waitUntilUp(`${origin}/v1/customers`, process.hrtime.bigint(), child);
  } catch (error) {
    await stopChild(child);
    throw error;
  }
  return { origin, pid: child.pid ?? 0, stop: () => stopChild(child) };
}

/**
 * The compiled gateway (dist/app.js: tsc keeps the decorator metadata Nest needs, as `node
 * dist/main.js` runs it) started inside this process on `stack`'s database and simulator, in
 * production mode with warn-level logs, no jobs and no effective rate limit, for benchmarks that
 * drive it with Fastify's `inject` (no sockets on the gateway's side). `origin` is its public base
 * URL. Sets process.env for it; the caller closes the app.
 */
export async function startInProcessGateway(stack: BenchStack, origin: string): Promise<NestFastifyApplication> {
  Object.assign(process.env, {
    NODE_ENV: 'production',
    DATABASE_URL: stack.databaseUrl,
    PROVIDER_BASE_URL: `${stack.simOrigin}/api/v1`,
    PROVIDER_API_KEY: BENCH_PROVIDER_KEY,
    PROVIDER_WEBHOOK_SECRET: BENCH_WEBHOOK_SECRET,
    PUBLIC_BASE_URL: origin,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_MINUTE: '100000000',
    PII_ENCRYPTION_KEYS: process.env.PII_ENCRYPTION_KEYS ?? `bench:${randomBytes(32).toString('base64')}`,
    JOBS_ENABLED: 'false',
  });
  const { createApp } = (await import(path.resolve('dist/app.js'))) as { createApp: typeof CreateApp };
  return createApp();
}
