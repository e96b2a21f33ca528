/**
 * `npm start`: everything a new user needs, with no configuration.
 *  1. a database: DATABASE_URL if set, otherwise an embedded PostgreSQL (data kept between runs);
 *  2. migrations (prisma migrate deploy);
 *  3. the provider simulator on SIMULATOR_PORT (default 4010), unless PROVIDER_BASE_URL is set;
 *  4. the gateway (compiled with `tsc -b`, incremental, while 1–3 run; run as `node dist/main.js`)
 *     on PORT (default 3000);
 *  5. unless OIDC_ISSUER is set, the local OpenID provider (idp/, IDP_PORT default 4020) with demo
 *     people, a child of its own as the simulator is (docs/auth.md);
 *  6. a demo API key with every scope (`dist/cli/api-key.js create --replace`), printed last with the URLs.
 * The settings come from the environment and `.env` (dotenv), as the gateway's do.
 *
 * This launcher, the simulator and the local OpenID provider are compiled ahead (tsconfig.launcher.json: package.json's start
 * script runs `tsc -b` on it first) and run as plain `node`: neither holds the TypeScript toolchain,
 * nor Prisma; the launcher itself only waits for its children.
 *
 * The gateway logs to a file (LOG_FILE, default `gateway.log` in the checkout's state folder,
 * src/cli/local-state.ts), the simulator to `simulator.log` there; the simulator keeps its records
 * in `simulator-state.json` there, across restarts. The embedded database's URL is written to
 * `database-url` there while this runs, for `npm run api-key`.
 *
 * Stopping. Ctrl-C, SIGTERM or SIGHUP stops all of it, as does the death of the parent `npm`
 * process: the gateway and the simulator first, and the database only once both have exited, so
 * that the gateway drains (its jobs, the audit sealer) against a live database. Ctrl-C signals the
 * terminal's whole process group: the gateway and the simulator get it too, the database does not
 * (it runs in a session of its own: startDetachedDatabase). Should this process be killed outright,
 * the gateway and the simulator stop themselves (scripts/lib/orphan-guard.ts), and the database
 * stops by itself once all three are gone (its keeper waits for its lease, held by each of them, to end).
 * package.json runs this with `exec node …`: npm forwards SIGINT and SIGTERM only to its direct
 * child, the `sh -c` of the script, and dash (Debian's sh) neither passes them on nor exits while
 * its command runs, so a signal sent to the `npm start` process alone (not to its process group, as
 * Ctrl-C does) never reached this script. With `exec` the shell becomes this process.
 */
import 'dotenv/config';
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { devIdpBanner } from '../idp/banner';
import { ACR_MFA, DEFAULT_AUDIENCE, DEFAULT_IDP_PORT } from '../idp/demo';
import { localDatabaseDir, localStateDir } from '../src/cli/local-state';
import { developmentPiiKeys } from './lib/dev-pii-key';
import { type DetachedDatabase, startDetachedDatabase, withDatabase } from './lib/embedded-db';
import { migrateDatabase } from './lib/migrate';

const DEMO_CLIENT_NAME = 'demo (npm start)';
/** Where tsconfig.launcher.json puts the compiled simulator. */
const SIMULATOR_MAIN = path.join(__dirname, '..', 'simulator', 'main.js');
/** Where tsconfig.launcher.json puts the compiled local OpenID provider (idp/main.ts). */
const IDP_MAIN = path.join(__dirname, '..', 'idp', 'main.js');
/** scripts/lib/orphan-guard.ts, compiled beside this file. */
const ORPHAN_GUARD = path.join(__dirname, 'lib', 'orphan-guard.js');
const children: ChildProcess[] = [];
let embedded: DetachedDatabase | undefined;
const stateDir = localStateDir();
const databaseUrlFile = path.join(stateDir, 'database-url');

/** A progress line, with the seconds since the launcher started. */
function log(message: string): void {
  process.stdout.write(`[start ${process.uptime().toFixed(1)}s] ${message}\n`);
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

/**
 * Starts a long-running Node child (its stdout to `logFile`) whose death stops everything. It is
 * preloaded with the orphan guard (it stops itself should this process die outright) and, when the
 * embedded database runs already (the gateway; the simulator starts before it and needs none),
 * holds the database's lease (DetachedDatabase.lease, as file descriptor 3), so that the database
 * outlives it whatever happens.
 */
function run(args: string[], env: NodeJS.ProcessEnv, name: string, logFile: string): ChildProcess {
  const out = fs.openSync(logFile, 'a');
  const child = spawn(process.execPath, ['--require', ORPHAN_GUARD, ...args], {
    env: { ...env, NPM_START_LAUNCHER_PID: String(process.pid) },
    stdio: ['ignore', out, 'inherit', embedded?.lease ?? 'ignore'],
  });
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

/** Runs a short-lived child to its end: its exit code and standard output. */
function runToEnd(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, out }));
  });
}

/**
 * Sign-in for people (DEVELOPMENT ONLY): unless OIDC_ISSUER is set, starts the local OpenID provider
 * (idp/) as a child, as the simulator is, and points the gateway at it through process.env
 * (OIDC_ISSUER, OIDC_AUDIENCE and STEP_UP_ACR_VALUES = its strong sign-in's acr, each only when
 * unset), which the gateway's process inherits. Answers the banner's lines on how to get a token.
 */
async function startIdentityProvider(gatewayUrl: string): Promise<string[]> {
  if (process.env.OIDC_ISSUER)
    return [`  Sign-in:  ${process.env.OIDC_ISSUER} (OIDC_ISSUER; no local provider started)`];
  const idpPort = Number(process.env.IDP_PORT ?? DEFAULT_IDP_PORT);
  const issuer = `http://127.0.0.1:${idpPort}`;
  process.env.OIDC_AUDIENCE ??= DEFAULT_AUDIENCE;
  const idp = run(
    [IDP_MAIN],
    { ...process.env, IDP_PORT: String(idpPort) },
    'identity provider',
    path.join(stateDir, 'idp.log'),
  );
  await waitFor(`${issuer}/.well-known/openid-configuration`, idp, 'identity provider');
  log(`local OpenID provider on ${issuer}`);
  process.env.OIDC_ISSUER = issuer;
  process.env.STEP_UP_ACR_VALUES ??= ACR_MFA;
  return devIdpBanner(issuer, gatewayUrl);
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
  if (embedded) {
    log('gateway and simulator stopped; stopping the database');
    await embedded.stop();
    log('database stopped');
  }
  process.exit(code);
}

async function main(): Promise<void> {
  // The output gone (the terminal or the pipe reading it closed): stop everything, do not crash.
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => void shutdown(0));
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      if (!stopping) log(`${signal}: stopping the gateway and the simulator, then the database`);
      void shutdown(0);
    });
  }
  // `npm start` killed on its own (its shell gone, SIGKILL): stop everything rather than leave orphans.
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) void shutdown(0);
  }, 1000).unref();
  fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 });

  // The gateway compiles (incremental: nothing to do when nothing changed) while the rest starts.
  log('compiling the gateway (tsc -b, incremental)');
  const build = runToEnd(['node_modules/typescript/bin/tsc', '-b', 'tsconfig.build.json']);

  const port = Number(process.env.PORT ?? 3000);
  const simulatorPort = Number(process.env.SIMULATOR_PORT ?? 4010);
  const providerApiKey = process.env.PROVIDER_API_KEY ?? 'sk.sim.0123456789abcdef.local';
  const webhookSecret = process.env.PROVIDER_WEBHOOK_SECRET ?? 'whsec-sim-local';
  let providerBaseUrl = process.env.PROVIDER_BASE_URL;
  // The simulator starts first (it needs no database), the database and the migrations meanwhile.
  let simulatorUp: Promise<void> | undefined;
  if (!providerBaseUrl) {
    providerBaseUrl = `http://127.0.0.1:${simulatorPort}/api/v1`;
    const sim = run(
      [SIMULATOR_MAIN],
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
    simulatorUp = waitFor(`http://127.0.0.1:${simulatorPort}/__admin/state`, sim, 'simulator');
    simulatorUp.catch(() => undefined); // awaited below; its failure must not go unhandled meanwhile
  }

  let databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) {
    log('DATABASE_URL not set: starting an embedded PostgreSQL');
    embedded = await startDetachedDatabase({
      databaseDir: localDatabaseDir(),
      port: Number(process.env.EMBEDDED_PG_PORT ?? 54329),
    });
    databaseUrl = withDatabase(embedded.url, 'wallet_gateway');
    fs.writeFileSync(databaseUrlFile, `${databaseUrl}\n`, { mode: 0o600 });
  }
  log(`database ${databaseUrl.replace(/\/\/([^:@/]+):[^@]*@/, '//$1:***@')}`);
  migrateDatabase(databaseUrl);
  log('migrations applied');

  if (simulatorUp) {
    await simulatorUp;
    log(`provider simulator on ${providerBaseUrl}`);
  }

  const signIn = await startIdentityProvider(`http://127.0.0.1:${port}`);
  const pii = developmentPiiKeys(); // personal data key ring, kept in .data/ (docs/operations.md)
  if (pii.created) log('made a development PII_ENCRYPTION_KEYS in .data/pii-encryption-keys');

  const built = await build;
  if (built.code !== 0) {
    process.stdout.write(built.out); // tsc's diagnostics
    throw new Error('tsc failed: the gateway did not compile');
  }
  log('gateway compiled');

  const logFile = process.env.LOG_FILE ?? path.join(stateDir, 'gateway.log');
  const gatewayEnv = {
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
  };
  const gateway = run(['dist/main.js'], gatewayEnv, 'gateway', logFile);
  // The demo key, made by the compiled CLI in a process of its own (Prisma stays out of this one)
  // while the gateway starts.
  const demoKey = runToEnd(
    ['dist/cli/api-key.js', 'create', '--name', DEMO_CLIENT_NAME, '--scopes', 'all', '--replace', '--json'],
    { ...process.env, DATABASE_URL: databaseUrl },
  );
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/health/ready`, gateway, 'gateway', 120_000);
  log('gateway ready');
  const made = await demoKey;
  if (made.code !== 0) throw new Error(`the demo API key could not be made (exit ${made.code})`);
  const { key } = JSON.parse(made.out) as { key: string };

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
