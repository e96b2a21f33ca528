import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { Client } from 'pg';

/** Polls a URL until it answers below 500; returns the milliseconds it took from `since`. */
export async function waitUntilUp(
  url: string,
  since: bigint,
  child?: ChildProcess,
  timeoutMs = 60_000,
): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child && child.exitCode !== null) throw new Error(`process for ${url} exited with ${child.exitCode}`);
    try {
      const res = await fetch(url);
      if (res.status < 500) return Number(process.hrtime.bigint() - since) / 1e6;
    } catch {
      /* not yet */
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`${url} not up within ${timeoutMs} ms`);
}

/** Children a benchmark started and has not seen exit: killed when the benchmark process exits. */
const children = new Set<ChildProcess>();

/**
 * Makes sure `child` does not outlive this benchmark: however the benchmark ends (its own stop, an
 * exception it did not catch, process.exit, Ctrl-C or SIGTERM), a child still running then is
 * killed (SIGKILL). A benchmark's orderly stop (SIGTERM, then waiting) comes first when it can.
 * Returns `child`.
 */
export function ownChild<T extends ChildProcess>(child: T): T {
  if (children.size === 0) {
    process.once('exit', killChildren);
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
      if (process.listenerCount(signal) === 0)
        process.once(signal, () => {
          killChildren();
          process.exit(128 + (signal === 'SIGINT' ? 2 : signal === 'SIGTERM' ? 15 : 1));
        });
    }
  }
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

function killChildren(): void {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  children.clear();
}

/**
 * Called with an error of a long-lived pg client or pool of a benchmark (a connection lost: the
 * database restarted): logged, so that it never crashes the benchmark as an unhandled `error` event.
 */
export function onDatabaseClientError(error: Error): void {
  process.stderr.write(`bench: a database connection failed (${error.message}); carrying on\n`);
}

/**
 * A connected pg client for a benchmark's own statements (seeding, checks), with
 * onDatabaseClientError as its `error` handler: a database restart ends its connection without
 * crashing the benchmark (its next query fails instead, and the benchmark's own stop runs).
 */
export async function benchSqlClient(connectionString: string): Promise<Client> {
  const client = new Client({ connectionString });
  client.on('error', onDatabaseClientError);
  await client.connect();
  return client;
}

export function spawnNode(args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  return ownChild(spawn(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'inherit'] }));
}

export function buildGateway(): void {
  const r = spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], {
    stdio: 'inherit',
  });
  if (r.status !== 0) throw new Error('tsc failed');
}
