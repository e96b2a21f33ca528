/**
 * `npm start`: everything a new user needs, with no configuration.
 *  1. a database: DATABASE_URL if set, otherwise an embedded PostgreSQL (data kept between runs);
 *  2. migrations (prisma migrate deploy);
 *  3. the provider simulator on SIMULATOR_PORT (default 4010), unless PROVIDER_BASE_URL is set;
 *  4. the gateway (compiled with tsc, run as `node dist/main.js`) on PORT (default 3000);
 *  5. a demo API key with every scope, printed last with the URLs;
 *  6. unless OIDC_ISSUER is set, the local OpenID provider (idp/, IDP_PORT default 4020) with demo people.
 * The gateway logs to a file (LOG_FILE, default `gateway.log` in the checkout's state folder,
 * src/cli/local-state.ts), the simulator to `simulator.log` there; the simulator keeps its records
 * in `simulator-state.json` there, across restarts. The embedded database's URL is written to
 * `database-url` there while this runs, for `npm run api-key`. Ctrl-C, SIGTERM or SIGHUP stops all
 * of it (gateway, simulator, then PostgreSQL), as does the death of the parent `npm` process.
 * package.json runs this with `exec node …`: npm forwards SIGINT and SIGTERM only to its direct
 * child, the `sh -c` of the script, and dash (Debian's sh) neither passes them on nor exits while
 * its command runs, so a signal sent to the `npm start` process alone (not to its process group, as
 * Ctrl-C does) never reached this script. With `exec` the shell becomes this process.
 */
import 'dotenv/config';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createApiClient } from '../src/auth/api-clients.repository';
import { DEMO_SCOPES } from '../src/auth/scopes';
import { localStateDir } from '../src/cli/local-state';
import { createPgAdapter } from '../src/database/prisma.service';
import { PrismaClient } from '../src/generated/prisma/client';
import { startDevIdentityProvider } from './lib/dev-idp';
import { developmentPiiKeys } from './lib/dev-pii-key';
import { type EmbeddedDatabase, startEmbeddedDatabase, withDatabase } from './lib/embedded-db';
import { migrateDatabase } from './lib/migrate';

const DEMO_CLIENT_NAME = 'demo (npm start)';
const children: ChildProcess[] = [];
let embedded: EmbeddedDatabase | undefined;
const stateDir = localStateDir();
const databaseUrlFile = path.join(stateDir, 'database-url');

function log(message: string): void {
  process.stdout.write(`[start] ${message}\n`);
}

async function waitFor(url: string, child: ChildProcess, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${what} exited with code ${child.exitCode}`);
    try {
      const res = await fetch(url);
      if (res.status < 500) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not answer at ${url} within ${timeoutMs} ms`);
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv, name: string, logFile: string): ChildProcess {
  const out = fs.openSync(logFile, 'a');
  const child = spawn(command, args, { env, stdio: ['ignore', out, 'inherit'] });
  fs.closeSync(out);
  child.on('exit', (code, signal) => {
    if (!stopping) {
      log(`${name} stopped (${signal ?? code}); shutting down`);
      void shutdown(1);
    }
  });
  children.push(child);
  return child;
}

let stopping = false;
async function shutdown(code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  await Promise.all(
    children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : Promise.resolve(null))),
  );
  fs.rmSync(databaseUrlFile, { force: true });
  if (embedded) await embedded.stop();
  process.exit(code);
}

async function main(): Promise<void> {
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      if (!stopping) log(`${signal}: stopping the gateway, the simulator and the database`);
      void shutdown(0);
    });
  }
  // `npm start` killed on its own (its shell gone, SIGKILL): stop everything rather than leave orphans.
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) void shutdown(0);
  }, 1000).unref();
  fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 });

  const port = Number(process.env.PORT ?? 3000);
  let databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) {
    log('DATABASE_URL not set: starting an embedded PostgreSQL');
    embedded = await startEmbeddedDatabase({ persistent: true, port: Number(process.env.EMBEDDED_PG_PORT ?? 54329) });
    databaseUrl = withDatabase(embedded.url, 'wallet_gateway');
    fs.writeFileSync(databaseUrlFile, `${databaseUrl}\n`, { mode: 0o600 });
  }
  log(`database ${databaseUrl.replace(/\/\/([^:@/]+):[^@]*@/, '//$1:***@')}`);
  migrateDatabase(databaseUrl);
  log('migrations applied');

  const simulatorPort = Number(process.env.SIMULATOR_PORT ?? 4010);
  const providerApiKey = process.env.PROVIDER_API_KEY ?? 'sk.sim.0123456789abcdef.local';
  const webhookSecret = process.env.PROVIDER_WEBHOOK_SECRET ?? 'whsec-sim-local';
  let providerBaseUrl = process.env.PROVIDER_BASE_URL;
  if (!providerBaseUrl) {
    providerBaseUrl = `http://127.0.0.1:${simulatorPort}/api/v1`;
    const sim = run(
      process.execPath,
      ['--import', 'tsx', 'simulator/main.ts'],
      {
        ...process.env,
        SIMULATOR_PORT: String(simulatorPort),
        PROVIDER_API_KEY: providerApiKey,
        PROVIDER_WEBHOOK_SECRET: webhookSecret,
        SIMULATOR_WEBHOOK_URL: `${process.env.PUBLIC_BASE_URL ?? `http://127.0.0.1:${port}`}/webhooks/provider`,
        SIMULATOR_STATE_FILE: process.env.SIMULATOR_STATE_FILE ?? path.join(stateDir, 'simulator-state.json'),
      },
      'simulator',
      path.join(stateDir, 'simulator.log'),
    );
    await waitFor(`http://127.0.0.1:${simulatorPort}/__admin/state`, sim, 'simulator');
    log(`provider simulator on ${providerBaseUrl}`);
  }

  const signIn = await startDevIdentityProvider(`http://127.0.0.1:${port}`); // local OpenID provider (idp/)
  const pii = developmentPiiKeys(); // personal data key ring, kept in .data/ (docs/operations.md)
  if (pii.created) log('made a development PII_ENCRYPTION_KEYS in .data/pii-encryption-keys');

  log('compiling the gateway (tsc)');
  const build = spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], {
    stdio: 'inherit',
  });
  if (build.status !== 0) throw new Error('tsc failed');

  const logFile = process.env.LOG_FILE ?? path.join(stateDir, 'gateway.log');
  const gateway = run(
    process.execPath,
    ['dist/main.js'],
    {
      ...process.env,
      PORT: String(port),
      DATABASE_URL: databaseUrl,
      PROVIDER_BASE_URL: providerBaseUrl,
      PROVIDER_API_KEY: providerApiKey,
      PROVIDER_WEBHOOK_SECRET: webhookSecret,
      PUBLIC_BASE_URL: process.env.PUBLIC_BASE_URL ?? `http://127.0.0.1:${port}`,
      PII_ENCRYPTION_KEYS: pii.keys,
      LOG_FILE: logFile,
      // One local instance, no load balancer to wait for: stop at once.
      SHUTDOWN_DELAY_MS: process.env.SHUTDOWN_DELAY_MS ?? '0',
    },
    'gateway',
    logFile,
  );
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/health/ready`, gateway, 'gateway', 120_000);

  const prisma = new PrismaClient({ adapter: createPgAdapter(databaseUrl, 1) });
  await prisma.apiClient.updateMany({
    where: { name: DEMO_CLIENT_NAME, revokedAt: null },
    data: { revokedAt: new Date() },
  });
  const { key } = await createApiClient(prisma, DEMO_CLIENT_NAME, DEMO_SCOPES);
  await prisma.$disconnect();

  process.stdout.write(
    [
      '',
      '  Wallet gateway is running',
      `  API:      ${url}/v1`,
      `  Docs:     ${url}/docs  (OpenAPI JSON: ${url}/docs-json)`,
      `  Finance:  ${url}/finance  (sign in with a key holding transactions:read, e.g. the demo key)`,
      `  Health:   ${url}/health/ready    Metrics: ${url}/metrics`,
      `  Provider: ${providerBaseUrl}`,
      `  Logs:     ${logFile}`,
      `  Demo API key (all scopes but cards:reveal; earlier demo keys are revoked):`,
      `    ${key}`,
      '',
      `  Try: curl -s -H "Authorization: Bearer ${key}" ${url}/v1/customers`,
      ...signIn,
      '  Ctrl-C stops everything. Another key: npm run api-key -- create --name NAME --scopes all',
      '',
    ].join('\n'),
  );
}

main().catch(async (error) => {
  process.stderr.write(`[start] ${(error as Error).stack ?? error}\n`);
  await shutdown(1);
});
