import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../scripts/lib/embedded-db';

const ROOT = path.resolve(__dirname, '..');
const START_TIMEOUT_MS = 240_000;

/** One `npm start` in a process group of its own, as a terminal runs it. */
interface Started {
  npm: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
  port: number;
  key: string;
}

/** Milliseconds since the epoch of a PostgreSQL log line (`2026-11-28 02:16:35.722 UTC [..] LOG: ...`). */
function postgresTime(line: string): number {
  const m = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}\.\d{3}) UTC/.exec(line);
  if (!m) throw new Error(`no time in ${line}`);
  return Date.parse(`${m[1]}T${m[2]}Z`);
}

/** Whether a process with this pid runs (a zombie, exited but not reaped by its parent, does not). */
function alive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8'); // "pid (comm) state …"
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

async function until(what: string, check: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * `npm start` end to end (the README's first command, with no configuration): the embedded
 * PostgreSQL, the simulator, the gateway and the demo key. Each start gets its own ports and state
 * folder (LOCAL_STATE_DIR). Ctrl-C (SIGINT to the process group) stops the gateway first and the
 * database only after it has drained: the gateway's log has no error (no `57P01 terminating
 * connection due to administrator command` from its jobs or the audit sealer). The launcher and the
 * simulator run as plain node (compiled ahead, no tsx), and a second start recompiles nothing.
 * Killed outright, the launcher leaves nothing running: the gateway stops itself, then the database.
 */
describe('npm start (e2e: launcher, embedded database, simulator, gateway)', () => {
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wg-start-spec-'));
  const databaseDir = `${stateDir}-pg`;
  const gatewayLog = path.join(stateDir, 'gateway.log');
  const serverLog = path.join(databaseDir, 'server.log');
  const running: ChildProcess[] = [];

  async function npmStart(): Promise<Started> {
    const [port, simulatorPort, pgPort] = [await freePort(), await freePort(), await freePort()];
    const env: NodeJS.ProcessEnv = { ...process.env };
    // As a new user's shell: none of the test run's settings.
    for (const name of Object.keys(env)) {
      if (/^(DATABASE_URL|PROVIDER_|LOG_|JOBS_|NODE_ENV|TEST_|JEST_|PUBLIC_BASE_URL|PII_|SIMULATOR_)/.test(name))
        delete env[name];
    }
    Object.assign(env, {
      LOCAL_STATE_DIR: stateDir,
      PORT: String(port),
      SIMULATOR_PORT: String(simulatorPort),
      EMBEDDED_PG_PORT: String(pgPort),
    });
    const npm = spawn('npm', ['start'], { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    running.push(npm);
    let out = '';
    npm.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    npm.stderr.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
    let gone = false;
    void exited.then(() => (gone = true));
    await until('the demo key', () => gone || /Demo API key[^\n]*\n\s+(wgk_\S+)/.test(out), START_TIMEOUT_MS);
    const key = /Demo API key[^\n]*\n\s+(wgk_\S+)/.exec(out)?.[1];
    if (!key) throw new Error(`npm start ended before printing a key:\n${out}`);
    return { npm, output: () => out, exited, port, key };
  }

  /** The pids of `pid`'s children, from /proc (Linux; `ps` is not in every image). */
  const childrenOf = (pid: number) =>
    fs
      .readdirSync('/proc')
      .filter((entry) => /^\d+$/.test(entry))
      .filter((entry) => {
        try {
          const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8'); // "pid (comm) state ppid …"
          return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
        } catch {
          return false; // gone meanwhile
        }
      })
      .map(Number);
  /** The pid of the launcher: the child of npm (its shell, which `exec`s node). */
  const launcherPid = (npm: ChildProcess) => childrenOf(npm.pid!)[0];
  const cmdline = (pid: number) => fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  const postmasterPid = () => Number(fs.readFileSync(path.join(databaseDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const logLines = (text: string) =>
    text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { level: number; time: number; msg: string; err?: { code?: string } });

  afterAll(() => {
    for (const npm of running) {
      try {
        if (npm.exitCode === null) process.kill(-npm.pid!, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    fs.rmSync(stateDir, { recursive: true, force: true });
    fs.rmSync(databaseDir, { recursive: true, force: true });
  });

  it(
    'stops on Ctrl-C with the database stopped after the gateway drained: no error in the gateway log',
    async () => {
      const started = await npmStart();
      const launcher = launcherPid(started.npm);
      // Plain node, compiled ahead: no tsx (and so no TypeScript toolchain) in the launcher or the simulator.
      expect(cmdline(launcher)).toMatch(/node_modules\/\.cache\/wallet-gateway\/scripts\/start\.js/);
      const kids = childrenOf(launcher).map(cmdline);
      expect(kids).toEqual(
        expect.arrayContaining([expect.stringMatching(/simulator\/main\.js/), expect.stringMatching(/dist\/main\.js/)]),
      );
      for (const line of [cmdline(launcher), ...kids]) expect(line).not.toMatch(/tsx/);
      // The database works (the jobs and the audit sealer use it while the gateway runs).
      const res = await fetch(`http://127.0.0.1:${started.port}/v1/customers`, {
        headers: { authorization: `Bearer ${started.key}` },
      });
      expect(res.status).toBe(200);
      const server = postmasterPid();
      const before = fs.readFileSync(gatewayLog, 'utf8').length;

      process.kill(-started.npm.pid!, 'SIGINT'); // Ctrl-C: the terminal signals the whole group
      expect(await started.exited).toBe(0);

      expect(alive(server)).toBe(false);
      expect(fs.existsSync(path.join(databaseDir, 'postmaster.pid'))).toBe(false); // a clean shutdown
      const lines = logLines(fs.readFileSync(gatewayLog, 'utf8').slice(before));
      expect(lines.filter((l) => l.level >= 50)).toEqual([]);
      expect(JSON.stringify(lines)).not.toContain('57P01');
      const drained = lines.find((l) => l.msg === 'shutdown: complete');
      expect(drained).toBeDefined();
      const down = fs
        .readFileSync(serverLog, 'utf8')
        .split('\n')
        .filter((l) => l.includes('database system is shut down'))
        .pop();
      expect(postgresTime(down!)).toBeGreaterThanOrEqual(drained!.time - 5); // ms rounding of the two clocks' logs
      expect(started.output()).toMatch(/gateway and simulator stopped; stopping the database[\s\S]*database stopped/);
    },
    START_TIMEOUT_MS + 60_000,
  );

  it(
    'recompiles nothing on a warm start; killed outright, leaves no gateway and no database running',
    async () => {
      const main = path.join(ROOT, 'dist', 'main.js');
      const compiledAt = fs.statSync(main).mtimeMs;
      const started = await npmStart();
      // Incremental build: the gateway's output is untouched when its sources are.
      expect(fs.statSync(main).mtimeMs).toBe(compiledAt);
      const launcher = launcherPid(started.npm);
      const gateway = childrenOf(launcher).find((pid) => cmdline(pid).includes('dist/main.js'))!;
      const server = postmasterPid();
      const before = fs.readFileSync(gatewayLog, 'utf8').length;

      process.kill(launcher, 'SIGKILL');
      await until('the gateway to stop', () => !alive(gateway));
      await until('the database to stop', () => !alive(server));
      expect(fs.existsSync(path.join(databaseDir, 'postmaster.pid'))).toBe(false);
      const lines = logLines(fs.readFileSync(gatewayLog, 'utf8').slice(before));
      expect(lines.filter((l) => l.level >= 50)).toEqual([]);
      expect(lines.map((l) => l.msg)).toContain('shutdown: complete');
    },
    START_TIMEOUT_MS + 120_000,
  );
});
