/**
 * The one load module of every benchmark (`bench/*.bench.ts`).
 *
 * Two modes:
 * - `paced`: open-loop arrivals at a fixed rate, evenly spaced (or Poisson), each request's latency
 *   measured from its INTENDED send time, so a stall of the server shows up in every request that
 *   should have been sent during it (coordinated omission corrected). Requests never wait for each
 *   other: when every socket is busy the next request queues in the agent and that wait counts.
 * - `flatOut`: closed-loop throughput, `connections` requests always in flight (autocannon).
 *
 * Why a pacer of our own for `paced`: autocannon's `overallRate` spreads the rate over its
 * connections and sends each connection's share as soon as its previous answer returns, so it is a
 * rate-limited closed loop whose latencies come from the actual send time; it has no open-loop mode
 * (as of autocannon 8). The open-loop Node generators found (k6, wrk2, hammer) ship native binaries,
 * which this project may not download. The pacer is ~100 lines over `node:http` with a keep-alive
 * agent; the histogram is HDR (hdr-histogram-js) at microsecond resolution.
 *
 * Every benchmark reports each figure as a ratio to a baseline measured in the same run, and the
 * CPU time the measured process spent per request (`cpuMicros`, read from /proc/<pid>/stat), which
 * stays stable on a noisy machine where latencies do not.
 */
import { type EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import * as hdr from 'hdr-histogram-js';

/** One request to send. `body` is sent as is (set the content-type header yourself). */
export interface RequestSpec {
  method?: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

/** Latency and throughput of one run. Latencies in milliseconds (recorded in microseconds). */
export interface RunResult {
  name: string;
  mode: 'paced' | 'flat-out';
  /** Answers received (any status). */
  requests: number;
  /** Answers per second over the run. */
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** Answers outside 2xx. */
  non2xx: number;
  /** Resets, refusals, timeouts. */
  errors: number;
  /** Paced mode: how late the generator sent requests after their intended time (ms, p99); it is part of every latency. */
  sendLagP99?: number;
  /** Paced mode: the same requests' latency measured from the ACTUAL send (what a closed-loop tool reports), p99 ms. */
  fromSendP99?: number;
}

function histogram(): hdr.Histogram {
  return hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 120_000_000,
    numberOfSignificantValueDigits: 3,
  });
}

const ms = (h: hdr.Histogram, p: number) => h.getValueAtPercentile(p) / 1000;

/**
 * Open-loop paced load: request i is due at `start + i / rate` seconds (even arrivals) or after
 * exponential gaps of mean `1 / rate` (Poisson); latency = answer end - due time.
 * @param opts.origin e.g. http://127.0.0.1:3000
 * @param opts.request the request, or a function of the request's index (ids, bodies, keys vary)
 * @param opts.rate requests per second; `opts.seconds` the run's length
 * @param opts.maxSockets keep-alive sockets (default 256): beyond that, requests queue (and the wait counts)
 */
export async function paced(opts: {
  name: string;
  origin: string;
  request: RequestSpec | ((i: number) => RequestSpec);
  rate: number;
  seconds: number;
  arrivals?: 'even' | 'poisson';
  maxSockets?: number;
  timeoutMs?: number;
}): Promise<RunResult> {
  const url = new URL(opts.origin);
  const agent = new http.Agent({ keepAlive: true, maxSockets: opts.maxSockets ?? 256 });
  const latency = histogram();
  const fromSend = histogram();
  const lag = histogram();
  const total = Math.max(1, Math.round(opts.rate * opts.seconds));
  const spec = typeof opts.request === 'function' ? opts.request : () => opts.request as RequestSpec;
  let non2xx = 0;
  let errors = 0;
  let done = 0;
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const settle = () => {
    if (++done === total) finish();
  };

  const send = (i: number, due: number) => {
    const r = spec(i);
    const sentAt = performance.now();
    lag.recordValue(Math.max(1, Math.round((sentAt - due) * 1000)));
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method: r.method ?? 'GET',
        path: r.path,
        headers: r.body === undefined ? r.headers : { ...r.headers, 'content-length': Buffer.byteLength(r.body) },
        agent,
        timeout: opts.timeoutMs ?? 30_000,
      },
      (res) => {
        res.resume();
        res.on('end', () => {
          const end = performance.now();
          latency.recordValue(Math.max(1, Math.round((end - due) * 1000)));
          fromSend.recordValue(Math.max(1, Math.round((end - sentAt) * 1000)));
          const status = res.statusCode ?? 0;
          if (status < 200 || status >= 300) non2xx++;
          settle();
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => {
      errors++;
      settle();
    });
    req.end(r.body);
  };

  const start = performance.now();
  const gap = 1000 / opts.rate;
  let next = 0;
  let due = start;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      while (next < total && due <= now) {
        send(next, due);
        next++;
        due += opts.arrivals === 'poisson' ? -Math.log(1 - Math.random()) * gap : gap;
      }
      if (next >= total) return resolve();
      setTimeout(tick, Math.max(0, due - performance.now()));
    };
    tick();
  });
  await finished;
  const elapsed = (performance.now() - start) / 1000;
  agent.destroy();
  return {
    name: opts.name,
    mode: 'paced',
    requests: latency.totalCount,
    rps: latency.totalCount / elapsed,
    p50: ms(latency, 50),
    p90: ms(latency, 90),
    p99: ms(latency, 99),
    max: latency.maxValue / 1000,
    non2xx,
    errors,
    sendLagP99: ms(lag, 99),
    fromSendP99: ms(fromSend, 99),
  };
}

/**
 * One step of a request sequence for `flatOut`: autocannon's request (`method`, `path`, `headers`,
 * `body`, `setupRequest(request, context)` run just before each send, `onResponse(status, body,
 * context)` after each answer; `context` is per connection and cleared when the sequence starts
 * over; a falsy `setupRequest` result starts the sequence over without sending), plus a `name` for
 * the step's own latencies. Each connection loops through the steps in order.
 */
export type SequenceStep = autocannon.Request & { name?: string };

/** Latencies of one step of a request sequence (ms, from the actual send). */
export interface StepResult {
  name: string;
  requests: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  non2xx: number;
}

/** A flat-out run: the run's figures, the measured duration, answers by status and each step's latencies. */
export interface FlatOutResult extends RunResult {
  /** Wall-clock seconds from the first send to the last answer (what `rps` divides by). */
  seconds: number;
  /** Answers by HTTP status. */
  statuses: Record<number, number>;
  /** One entry per step of `requests` (in order); one entry named after the run for a single `request`. */
  steps: StepResult[];
  /** Times a `setupRequest` returned nothing and the sequence started over. */
  resets: number;
  /** Answers by HTTP status sent during the warm-up (`warmupSeconds`), left out of every other figure. */
  warmupStatuses: Record<number, number>;
}

/**
 * Closed-loop flat-out load with autocannon: `connections` requests always in flight, for `seconds`
 * or until `amount` answers. Either one fixed `request`, or a sequence of `requests` that each
 * connection loops through (ids from one answer used in the next request: see `SequenceStep`).
 * Latencies are from the actual send (that is what flat out means); use `rps` and CPU per request.
 * @param opts.warmupSeconds first run this long on the same connections, its answers left out of
 *   every figure but `warmupStatuses` (a request counts in the measured run when it was sent after
 *   the warm-up); `onMeasureStart` is called when the measured run begins (to read CPU counters)
 * @param opts.timeoutSeconds a request unanswered after this counts as an error (default 10, autocannon's)
 * @throws Error when neither `seconds` nor `amount` is given
 */
export async function flatOut(opts: {
  name: string;
  origin: string;
  request?: RequestSpec;
  requests?: SequenceStep[];
  seconds?: number;
  amount?: number;
  connections?: number;
  warmupSeconds?: number;
  onMeasureStart?: () => void;
  timeoutSeconds?: number;
}): Promise<FlatOutResult> {
  if (!opts.seconds && !opts.amount) throw new Error('flatOut needs seconds or amount');
  const steps: SequenceStep[] = opts.requests ?? [
    {
      name: opts.name,
      method: opts.request?.method ?? 'GET',
      path: opts.request?.path ?? '/',
      headers: opts.request?.headers,
      body: opts.request?.body,
    },
  ];
  const latency = histogram();
  const stepLatency = steps.map(() => histogram());
  const stepNon2xx = steps.map(() => 0);
  const statuses: Record<number, number> = {};
  let non2xx = 0;
  // autocannon calls a step's onResponse, then emits 'response' for the same answer, synchronously:
  // the wrapper below tells the listener which step answered.
  let answered = 0;
  const wrapped = steps.map((step, i): autocannon.Request => ({
    ...step,
    onResponse: (status: number, body: string, context: object, headers: autocannon.Request['headers']) => {
      answered = i;
      (step.onResponse as ((...args: unknown[]) => void) | undefined)?.(status, body, context, headers);
    },
  }));
  const warmupMs = (opts.warmupSeconds ?? 0) * 1000;
  const warmupStatuses: Record<number, number> = {};
  let started = performance.now() + warmupMs;
  // Without a callback autocannon returns an instance that is both an EventEmitter and a promise.
  const instance = autocannon({
    url: opts.origin,
    requests: wrapped,
    connections: opts.connections ?? 32,
    ...(opts.amount ? { amount: opts.amount } : { duration: (opts.seconds ?? 0) + warmupMs / 1000 }),
    timeout: opts.timeoutSeconds ?? 10,
  }) as unknown as EventEmitter & Promise<autocannon.Result>;
  const beginMeasuring = () => {
    started = performance.now();
    opts.onMeasureStart?.();
  };
  const measureStart = warmupMs > 0 ? setTimeout(beginMeasuring, warmupMs) : undefined;
  if (!measureStart) beginMeasuring();
  (instance as EventEmitter).on(
    'response',
    (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
      if (warmupMs > 0 && performance.now() - responseTime < started) {
        warmupStatuses[statusCode] = (warmupStatuses[statusCode] ?? 0) + 1;
        return;
      }
      const value = Math.max(1, Math.round(responseTime * 1000));
      statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
      latency.recordValue(value);
      stepLatency[answered].recordValue(value);
      if (statusCode < 200 || statusCode >= 300) {
        non2xx++;
        stepNon2xx[answered]++;
      }
    },
  );
  const result = await instance;
  clearTimeout(measureStart);
  const seconds = (performance.now() - started) / 1000;
  return {
    name: opts.name,
    mode: 'flat-out',
    requests: latency.totalCount,
    rps: latency.totalCount / seconds,
    p50: ms(latency, 50),
    p90: ms(latency, 90),
    p99: ms(latency, 99),
    max: latency.maxValue / 1000,
    non2xx,
    errors: result.errors + result.timeouts,
    seconds,
    statuses,
    resets: result.resets ?? 0,
    warmupStatuses,
    steps: steps.map((step, i) => ({
      name: step.name ?? `${step.method ?? 'GET'} ${step.path ?? ''}`,
      requests: stepLatency[i].totalCount,
      p50: ms(stepLatency[i], 50),
      p90: ms(stepLatency[i], 90),
      p99: ms(stepLatency[i], 99),
      max: stepLatency[i].maxValue / 1000,
      non2xx: stepNon2xx[i],
    })),
  };
}

/** Per-step latencies as a fixed-width table (for request sequences). */
export function stepTable(steps: StepResult[]): string {
  const head = ['step', 'answers', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'non-2xx'];
  const body = steps.map((s) => [
    s.name,
    String(s.requests),
    s.p50.toFixed(2),
    s.p90.toFixed(2),
    s.p99.toFixed(2),
    s.max.toFixed(1),
    String(s.non2xx),
  ]);
  return table(head, body);
}

/** Clock ticks per second of /proc's CPU counters (USER_HZ, 100 on Linux). */
const USER_HZ = 100;

/** /proc clock ticks (USER_HZ) in microseconds. */
export function ticksToMicros(ticks: number): number {
  return (ticks * 1_000_000) / USER_HZ;
}

/** The process's CPU time (user + system) in microseconds, from the text of its /proc/<pid>/stat. */
export function statCpuMicros(stat: string): number {
  // The command name (field 2) may hold spaces: fields are counted after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ticksToMicros(Number(fields[11]) + Number(fields[12]));
}

/** CPU time (user + system) a process has used so far, in microseconds, from /proc/<pid>/stat. */
export function cpuMicros(pid: number): number {
  return statCpuMicros(readFileSync(`/proc/${pid}/stat`, 'utf8'));
}

/**
 * Runs `fn` and returns its result with the CPU microseconds per answered request that `pid` spent
 * meanwhile (0 when the pid is unknown).
 */
export async function withCpu<T extends RunResult>(
  pid: number,
  fn: () => Promise<T>,
): Promise<T & { cpuPerRequestUs: number }> {
  const before = pid ? cpuMicros(pid) : 0;
  const result = await fn();
  const used = pid ? cpuMicros(pid) - before : 0;
  return { ...result, cpuPerRequestUs: result.requests ? used / result.requests : 0 };
}

/** A fixed-width table of runs; `baseline` adds ratio columns (p50, p99 and req/s over the baseline's). */
export function runTable(rows: Array<RunResult & { cpuPerRequestUs?: number }>, baseline?: RunResult): string {
  const head = ['run', 'mode', 'req/s', 'p50 ms', 'p90 ms', 'p99 ms', 'non-2xx', 'errors', 'cpu µs/req'];
  if (baseline) head.push('p50 ×base', 'p99 ×base', 'req/s ×base');
  const body = rows.map((r) => {
    const cells = [
      r.name,
      r.mode,
      r.rps.toFixed(0),
      r.p50.toFixed(3),
      r.p90.toFixed(3),
      r.p99.toFixed(3),
      String(r.non2xx),
      String(r.errors),
      r.cpuPerRequestUs === undefined ? '' : r.cpuPerRequestUs.toFixed(0),
    ];
    if (baseline)
      cells.push(
        (r.p50 / baseline.p50).toFixed(2),
        (r.p99 / baseline.p99).toFixed(2),
        (r.rps / baseline.rps).toFixed(2),
      );
    return cells;
  });
  return table(head, body);
}

/** A fixed-width table: first column left-aligned, the others right-aligned. */
export function table(head: string[], body: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(head), ...body.map(line)].join('\n');
}
