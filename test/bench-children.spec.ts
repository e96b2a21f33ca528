import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { startRestartableDatabase } from '../scripts/lib/embedded-db';

/** Whether process `pid` is alive (a zombie, killed but not reaped by a container's init, is not). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** Runs `script` (TypeScript, through tsx, in the repository) and resolves with its exit code and output. */
function runScript(script: string, env: Record<string, string> = {}): Promise<{ code: number | null; out: string }> {
  const root = path.join(__dirname, '..');
  const child = spawn(process.execPath, ['--import', 'tsx', '-e', script], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, out })));
}

/**
 * A benchmark never leaves processes behind and survives its database restarting (issue 38: bench:soak
 * crashed on 57P01 and left the gateway and the simulator running).
 */
describe('benchmark process hygiene (bench/lib.ts)', () => {
  it('kills the children a benchmark started when it dies of an uncaught exception', async () => {
    const { code, out } = await runScript(`
      const { spawnNode } = require('./bench/lib.ts');
      const child = spawnNode(['-e', 'setInterval(() => {}, 1000)'], process.env);
      child.once('spawn', () => {
        console.log('child ' + child.pid);
        setTimeout(() => { throw new Error('benchmark crashed'); }, 100);
      });
    `);
    expect(code).not.toBe(0);
    const pid = Number(/child (\d+)/.exec(out)?.[1]);
    expect(pid).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 200));
    expect(alive(pid)).toBe(false);
  }, 60_000);

  it("keeps a benchmark's database client from crashing it when the database restarts", async () => {
    const server = await startRestartableDatabase();
    try {
      const run = runScript(
        `
        const { benchSqlClient } = require('./bench/lib.ts');
        (async () => {
          const sql = await benchSqlClient(process.env.OWN_DB);
          console.log('connected');
          await new Promise((r) => setTimeout(r, 4000));
          console.log('still running');
        })();
      `,
        { OWN_DB: server.url },
      );
      await new Promise((r) => setTimeout(r, 2500));
      await server.stop();
      const { code, out } = await run;
      expect(out).toContain('still running');
      expect(out).toContain('a database connection failed');
      expect(code).toBe(0);
    } finally {
      await server.destroy();
    }
  }, 60_000);
});
