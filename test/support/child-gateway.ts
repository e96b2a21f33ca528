import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import request from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { freePort } from '../../scripts/lib/embedded-db';
import type { Harness } from './harness';

/** A gateway in a child process, on a harness's database and simulator, that a test can SIGKILL. */
export interface ChildGateway {
  url: string;
  pid: number;
  http: () => TestAgent;
  /** SIGKILL, then wait for the process to be gone. */
  kill(): Promise<void>;
  /** Sends `signal` (e.g. SIGTERM) and returns at once. */
  signal(signal: NodeJS.Signals): void;
  /** Resolves when the process has exited: its exit code, or its signal's name. */
  exited: Promise<number | string>;
  /** What it wrote to stdout so far (its log lines, at LOG_LEVEL). */
  stdout(): string;
}

/**
 * Starts src/main.ts (through test/support/gateway-child.js) on `h`'s database and simulator, with
 * the harness's environment plus `env`, and waits for /health/live.
 * @throws Error when it exits or does not answer within 90 s (its stderr is in the message).
 */
export async function startChildGateway(h: Harness, env: Record<string, string> = {}): Promise<ChildGateway> {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [path.join(__dirname, 'gateway-child.js')], {
    cwd: path.join(__dirname, '..', '..'),
    env: {
      ...process.env,
      DATABASE_URL: h.db.url,
      PROVIDER_BASE_URL: h.sim.baseUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      JOBS_ENABLED: 'false',
      LOG_LEVEL: 'error',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`child gateway exited (${child.exitCode}): ${stderr}`);
    try {
      if ((await fetch(`${url}/health/live`)).status === 200) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`child gateway did not start: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    pid: child.pid as number,
    http: () => request(url),
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    signal: (signal) => void child.kill(signal),
    exited,
    stdout: () => stdout,
  };
}

/** Polls `check` every 50 ms until it returns a value other than undefined (at most `timeoutMs`). */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
