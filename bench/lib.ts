import { type ChildProcess, spawn, spawnSync } from 'node:child_process';

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

export function spawnNode(args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'inherit'] });
}

export function buildGateway(): void {
  const r = spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], {
    stdio: 'inherit',
  });
  if (r.status !== 0) throw new Error('tsc failed');
}
