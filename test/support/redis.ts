import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { freePort } from '../../scripts/lib/embedded-db';

/** A Redis for one test file: its URL, a key prefix of its own, and how to let go of it. */
export interface TestRedis {
  url: string;
  /** Unique per file, so that files sharing one server never see each other's keys. */
  keyPrefix: string;
  close(): Promise<void>;
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    socket.setTimeout(500);
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/**
 * The Redis at 127.0.0.1:6379 (development and CI machines run one), or, when none answers there,
 * a `redis-server` of this file's own on a free loopback port (Debian package `redis-server`).
 * @throws Error saying how to get one when neither is possible.
 */
export async function startTestRedis(): Promise<TestRedis> {
  const keyPrefix = `test:${process.pid}:${randomBytes(4).toString('hex')}:`;
  if (await answers(6379)) return { url: 'redis://127.0.0.1:6379', keyPrefix, close: () => Promise.resolve() };
  const port = await freePort();
  let child: ChildProcess;
  try {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    await new Promise<void>((resolve, reject) => {
      child.once('error', reject);
      child.once('spawn', () => resolve());
    });
  } catch {
    throw new Error('No Redis on 127.0.0.1:6379 and no redis-server to start: apt-get install redis-server');
  }
  for (let i = 0; i < 50 && !(await answers(port)); i++) await new Promise((r) => setTimeout(r, 100));
  return {
    url: `redis://127.0.0.1:${port}`,
    keyPrefix,
    close: async () => {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

/** A redis-server of one test file's own, that the test may stop and start again (never the shared one). */
export interface OwnRedis {
  url: string;
  /** Stops the server (SIGTERM) and waits for it to exit. */
  stop(): Promise<void>;
  /** Starts it again on the same port; resolves once it answers PING. */
  start(): Promise<void>;
  /** Stops it if it runs. */
  close(): Promise<void>;
}

/**
 * Starts `redis-server` (Debian package `redis-server`) on a free loopback port, without
 * persistence: for tests that stop Redis mid-run. @throws Error when it does not answer within 5 s.
 */
export async function startOwnRedis(): Promise<OwnRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    const started = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    await new Promise<void>((resolve, reject) => {
      started.once('error', reject);
      started.once('spawn', () => resolve());
    });
    child = started;
    for (let i = 0; i < 50; i++) {
      if (await answers(port)) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`redis-server on port ${port} did not answer`);
  };
  const stop = async () => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise((r) => running.once('exit', r));
    running.kill('SIGTERM');
    await exited;
  };
  await start();
  return { url: `redis://127.0.0.1:${port}`, stop, start, close: stop };
}
