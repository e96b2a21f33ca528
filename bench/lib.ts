import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { type EventEmitter } from 'node:events';
import autocannon from 'autocannon';
import * as hdr from 'hdr-histogram-js';

/** Latency and throughput of one load run. Latencies in milliseconds, recorded at microsecond resolution. */
export interface LoadResult {
  name: string;
  requests: number;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  non2xx: number;
  errors: number;
}

/**
 * Runs autocannon against one URL at a fixed overall rate (or flat out when `rate` is 0).
 * autocannon's own histogram keeps whole milliseconds, too coarse for sub-millisecond overheads,
 * so latencies are taken from its per-response event into an HDR histogram in microseconds.
 */
export async function load(opts: {
  name: string;
  url: string;
  headers?: Record<string, string>;
  method?: 'GET' | 'POST' | 'PATCH' | 'PUT';
  body?: string;
  rate: number;
  seconds: number;
  connections?: number;
}): Promise<LoadResult> {
  const histogram = hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 60_000_000,
    numberOfSignificantValueDigits: 3,
  });
  let non2xx = 0;
  // Without a callback autocannon returns an instance that is both an EventEmitter and a promise.
  const instance = autocannon({
    url: opts.url,
    method: opts.method ?? 'GET',
    headers: opts.headers,
    body: opts.body,
    connections: opts.connections ?? 10,
    duration: opts.seconds,
    ...(opts.rate > 0 ? { overallRate: opts.rate } : {}),
  }) as unknown as EventEmitter & Promise<autocannon.Result>;
  (instance as EventEmitter).on(
    'response',
    (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
      if (statusCode < 200 || statusCode >= 300) non2xx++;
      histogram.recordValue(Math.max(1, Math.round(responseTime * 1000)));
    },
  );
  const result = await instance;
  const ms = (p: number) => histogram.getValueAtPercentile(p) / 1000;
  return {
    name: opts.name,
    requests: histogram.totalCount,
    rps: histogram.totalCount / opts.seconds,
    p50: ms(50),
    p90: ms(90),
    p99: ms(99),
    non2xx,
    errors: result.errors + result.timeouts,
  };
}

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

export function table(rows: LoadResult[]): string {
  const head = ['route', 'req/s', 'p50 ms', 'p90 ms', 'p99 ms', 'non-2xx', 'errors'];
  const body = rows.map((r) => [
    r.name,
    r.rps.toFixed(0),
    r.p50.toFixed(3),
    r.p90.toFixed(3),
    r.p99.toFixed(3),
    String(r.non2xx),
    String(r.errors),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(head), ...body.map(line)].join('\n');
}
