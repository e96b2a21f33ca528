/**
 * `npm run bench:selftest`: checks that bench/load.ts reports what a server really does.
 *
 * 1. A server that answers every request after a fixed DELAY_MS: the paced run must report
 *    p50 ≈ DELAY_MS (never less; a little more for the loopback round trip and timer wake-up).
 * 2. A server that stalls its event loop once for STALL_MS in the middle of the run: every request
 *    due during the stall waits, so the paced run's p99 must be close to STALL_MS (a generator that
 *    waited for answers before sending would record the stall once and report a p99 near 1 ms).
 * Each server is its own process (`node -e`), so the stall does not stop the generator.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { paced, type RunResult } from './load';

export const DELAY_MS = 20;
export const STALL_MS = 400;

/**
 * A loopback HTTP server in a child process: fixed delay, and optionally one event-loop stall after
 * `stallAfterMs`. `GET /__connections` answers at once with how many connections it has accepted.
 */
export async function startTestServer(opts: { delayMs: number; stallMs?: number; stallAfterMs?: number }): Promise<{
  origin: string;
  child: ChildProcess;
}> {
  const script = `
    const http = require('node:http');
    let opened = 0;
    const server = http.createServer((req, res) =>
      req.url === '/__connections' ? res.end(String(opened)) : setTimeout(() => res.end('ok'), ${opts.delayMs}),
    );
    server.on('connection', () => opened++);
    server.keepAliveTimeout = 60000;
    server.listen(0, '127.0.0.1', () => process.stdout.write(String(server.address().port) + '\\n'));
    ${opts.stallMs ? `process.on('message', () => setTimeout(() => { const until = Date.now() + ${opts.stallMs}; while (Date.now() < until); }, ${opts.stallAfterMs ?? 1000}));` : ''}
  `;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  const [chunk] = (await once(child.stdout!, 'data')) as [Buffer];
  return { origin: `http://127.0.0.1:${chunk.toString().trim()}`, child };
}

/** The fixed-delay check: a paced run of `seconds` at `rate`. */
export async function fixedDelayRun(rate = 200, seconds = 2): Promise<RunResult> {
  const server = await startTestServer({ delayMs: DELAY_MS });
  try {
    return await paced({ name: `fixed ${DELAY_MS} ms`, origin: server.origin, request: { path: '/' }, rate, seconds });
  } finally {
    server.child.kill();
  }
}

/** The stall check: one STALL_MS stall of the server during a paced run. */
export async function stallRun(rate = 100, seconds = 3): Promise<RunResult> {
  const server = await startTestServer({ delayMs: 1, stallMs: STALL_MS, stallAfterMs: 1000 });
  try {
    server.child.send('stall');
    return await paced({ name: `stall ${STALL_MS} ms`, origin: server.origin, request: { path: '/' }, rate, seconds });
  } finally {
    server.child.kill();
  }
}

async function main(): Promise<void> {
  const fixed = await fixedDelayRun();
  const stall = await stallRun();
  const okFixed = fixed.p50 >= DELAY_MS && fixed.p50 <= DELAY_MS + 5;
  const okStall = stall.p99 >= STALL_MS * 0.6;
  process.stdout.write(
    [
      '',
      `fixed delay ${DELAY_MS} ms, paced 200 req/s: p50 ${fixed.p50.toFixed(2)} ms, p99 ${fixed.p99.toFixed(2)} ms, send lag p99 ${fixed.sendLagP99?.toFixed(2)} ms → ${okFixed ? 'ok' : 'WRONG'} (expected ${DELAY_MS}–${DELAY_MS + 5} ms)`,
      `one ${STALL_MS} ms stall, paced 100 req/s: p90 ${stall.p90.toFixed(1)} ms, p99 ${stall.p99.toFixed(1)} ms, max ${stall.max.toFixed(1)} ms → ${okStall ? 'ok' : 'WRONG'} (expected p99 ≥ ${STALL_MS * 0.6} ms: the ${(STALL_MS / 10).toFixed(0)} requests due during the stall all waited)`,
      '',
    ].join('\n'),
  );
  if (!okFixed || !okStall) process.exit(1);
}

if (require.main === module) {
  main().then(
    () => process.exit(0),
    (error) => {
      process.stderr.write(`${(error as Error).stack}\n`);
      process.exit(1);
    },
  );
}
