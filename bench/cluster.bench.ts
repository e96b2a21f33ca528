/**
 * `npm run bench:cluster`: three compiled gateway instances (node dist/main.js) on one PostgreSQL
 * (a fresh database) and one Redis, behind HAProxy on loopback running deploy/haproxy.cfg itself
 * (only its addresses changed), with the provider simulator. BENCH_CLIENTS clients of mixed traffic
 * for at least BENCH_SECONDS while: every instance is restarted in turn with SIGTERM (a rolling
 * deploy: the next one only once HAProxy has the previous one up again), the simulator fails for
 * 10 s, and one instance is killed with SIGKILL and started again. One extra key (the probe) is sent
 * twice the per-key limit.
 *
 * Prints requests and statuses; every failure (5xx, reset, timeout, a 429 on a traffic key)
 * classified by when it happened: in flight on the killed instance, or sent after the kill before
 * the process exited and left with no answer (both allowed), during a rolling restart, during the
 * SIGKILL restart, during the provider outage (503 `provider_retry_later` with
 * Retry-After and 502 `provider_unavailable` are the designed answers there, reported apart), or
 * otherwise; lost and doubled movements (simulator records against ledger rows); money calls
 * retried with the same Idempotency-Key and whether a replay gives the same outcome; the probe's
 * accepted requests and 429s against what the limit allows; the breaker from /metrics; each
 * restart's phases (drain until HAProxy takes it out, exit, spawn to listening, to ready, to
 * HAProxy up); HAProxy's own view (its log: answers it made, retries, servers going down and why);
 * the gateways' error lines. Then PASS or MISSED per target of issue 13. Logs stay in the folder it
 * names.
 *
 * Needs: haproxy (Debian: apt-get install haproxy), Redis on REDIS_URL (default
 * redis://127.0.0.1:6379; keys under a per-run prefix), DATABASE_URL's server or an embedded
 * PostgreSQL. Settings: BENCH_SECONDS (default 60, 10 to 600), BENCH_CLIENTS (default 200),
 * BENCH_KEY_LIMIT (per-key limit per minute, default 600: each traffic client has its own key and
 * paces itself to half of it; the probe sends twice it).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../scripts/lib/embedded-db';
import { expectedAccepted, haproxyConfig, lbStates } from './cluster-parts';
import { benchSqlClient, buildGateway, ownChild } from './lib';
import { activeCard, api, kenyanBeneficiary } from './seed';
import {
  BENCH_PROVIDER_KEY,
  BENCH_WEBHOOK_SECRET,
  createBenchDatabase,
  createBenchKeys,
  runBench,
  startSimulator,
} from './stack';

const SECONDS = Math.min(600, Math.max(10, Number(process.env.BENCH_SECONDS ?? 60)));
const CLIENTS = Math.min(1000, Math.max(1, Number(process.env.BENCH_CLIENTS ?? 200)));
const KEY_LIMIT = Math.max(10, Number(process.env.BENCH_KEY_LIMIT ?? 600));
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
/** As deploy/compose.yaml: long enough for HAProxy (check every 1 s, 500 ms once failing, fall 2, each check up to 3 s) to take an instance out. */
const SHUTDOWN_DELAY_MS = 10_000;
const PROVIDER_TIMEOUT_MS = 5000;
/** The gateway's default: an open breaker lets a probe call through after this long. */
const BREAKER_HALF_OPEN_MS = 10_000;
/** A claim of a killed instance lapses after this (above the longest request, PROVIDER_TIMEOUT_MS + margin). */
const IDEMPOTENCY_LEASE_MS = 15_000;
/** Simulator outage length. */
const OUTAGE_MS = 10_000;
/** One personal-data key for the run, shared by the three instances (production refuses to start without one). */
const PII_KEYS = process.env.PII_ENCRYPTION_KEYS ?? `bench:${randomBytes(32).toString('base64')}`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const say = (line = '') => process.stdout.write(`${line}\n`);
const bump = <K>(m: Map<K, number>, k: K, by = 1) => m.set(k, (m.get(k) ?? 0) + by);
const list = <K>(m: Map<K, number>) =>
  [...m.entries()]
    .sort(([, a], [, b]) => b - a)
    .map(([k, v]) => `${String(k)}: ${v}`)
    .join(', ') || 'none';

function findHaproxy(): string {
  const found = ['/usr/sbin/haproxy', '/usr/local/sbin/haproxy', '/usr/bin/haproxy'].find((p) => fs.existsSync(p));
  if (!found) {
    throw new Error('haproxy is not installed. On Debian/Ubuntu: sudo apt-get install haproxy (loopback only here).');
  }
  return found;
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number, everyMs = 100): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.createConnection({ port, host: '127.0.0.1' });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });

/** Sums of counters read from the instances' /metrics (undefined: no instance exports it). */
type Counters = Record<string, number | undefined>;
const METRICS = [
  'rate_limit_rejections_total',
  'rate_limit_store_errors_total',
  'provider_fast_failures_total',
  'provider_breaker_opens_total',
];

async function scrape(port: number): Promise<Counters> {
  const counters: Counters = {};
  try {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(5000) })).text();
    for (const name of METRICS) {
      const lines = text.split('\n').filter((l) => l.startsWith(name) && !l.startsWith('#'));
      if (lines.length) counters[name] = lines.reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
    }
  } catch {
    /* instance down: nothing to add */
  }
  return counters;
}

/** One restart's phases, ms from the signal (`exit`) and from the new process's spawn (the rest). */
interface RestartTiming {
  name: string;
  signal: NodeJS.Signals;
  /** HAProxy no longer counts it up (its own checks saw /health/ready 503, or the connection refused). */
  lbDownMs?: number;
  exitMs: number;
  listenMs: number;
  readyMs: number;
  lbUpMs: number;
}

/** A failed request: 5xx, no answer (reset, refused, timeout), or a 429 on a traffic key. */
interface Failure {
  start: number;
  end: number;
  what: string;
  /** `502 provider_unavailable`, `503 haproxy`, `reset ECONNRESET`, … */
  label: string;
  retryAfter: boolean;
}

/** The probe key's answers: send time (ms) and whether it was accepted (below 400) or refused (429). */
interface ProbeHit {
  at: number;
  accepted: boolean;
}

async function main(): Promise<void> {
  const haproxy = findHaproxy();
  const cleanup: Array<() => unknown> = [];
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wg-bench-cluster-'));
  try {
    const database = await createBenchDatabase('cluster');
    cleanup.push(() => database.drop());
    const { databaseUrl } = database;
    const prefix = `bench-cluster-${process.pid}:`;

    const lbPort = await freePort();
    const lb = `http://127.0.0.1:${lbPort}`;
    const sim = await startSimulator(`${lb}/webhooks/provider`, {
      SIMULATOR_PAYOUT_COMPLETE_DELAY_MS: '500',
      SIMULATOR_CALL_LOG_LIMIT: '1000',
    });
    cleanup.push(() => sim.stop());

    say('building the gateway (tsc)…');
    buildGateway();
    const ports = [await freePort(), await freePort(), await freePort()];
    const names = ['gateway1', 'gateway2', 'gateway3'];
    const instances: Array<ChildProcess | undefined> = [];
    const totals: Counters = {};
    const addCounters = (c: Counters) => {
      for (const [name, value] of Object.entries(c))
        if (value !== undefined) totals[name] = (totals[name] ?? 0) + value;
    };
    const spawnInstance = (i: number): ChildProcess => {
      const logFile = path.join(logDir, `${names[i]}.log`);
      const err = fs.openSync(logFile, 'a');
      const child = ownChild(
        spawn(process.execPath, ['dist/main.js'], {
          env: {
            ...process.env,
            NODE_ENV: 'production',
            PORT: String(ports[i]),
            HOST: '127.0.0.1',
            DATABASE_URL: databaseUrl,
            REDIS_URL,
            REDIS_KEY_PREFIX: prefix,
            PII_ENCRYPTION_KEYS: PII_KEYS,
            PROVIDER_BASE_URL: `${sim.origin}/api/v1`,
            PROVIDER_API_KEY: BENCH_PROVIDER_KEY,
            PROVIDER_WEBHOOK_SECRET: BENCH_WEBHOOK_SECRET,
            PROVIDER_TIMEOUT_MS: String(PROVIDER_TIMEOUT_MS),
            PUBLIC_BASE_URL: lb,
            LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
            LOG_FILE: logFile,
            RATE_LIMIT_PER_MINUTE: String(KEY_LIMIT),
            SHUTDOWN_DELAY_MS: String(SHUTDOWN_DELAY_MS),
            IDEMPOTENCY_LEASE_MS: String(IDEMPOTENCY_LEASE_MS),
            // As deploy/compose.yaml: 3 × (8 + 4 + 2) connections.
            DATABASE_POOL_SIZE: '8',
            READ_POOL_SIZE: '4',
            JOBS_POOL_SIZE: '2',
          },
          stdio: ['ignore', 'ignore', err],
        }),
      );
      fs.closeSync(err);
      instances[i] = child;
      return child;
    };
    const readyDirect = async (i: number) =>
      (await fetch(`http://127.0.0.1:${ports[i]}/health/ready`, { signal: AbortSignal.timeout(3000) })).status === 200;
    cleanup.push(() => instances.forEach((c) => c?.kill('SIGKILL')));
    await Promise.all(
      [0, 1, 2].map(async (i) => {
        const child = spawnInstance(i);
        await waitFor(
          `${names[i]} ready`,
          async () => {
            if (child.exitCode !== null) throw new Error(`${names[i]} exited (${child.exitCode}), see ${logDir}`);
            return readyDirect(i);
          },
          180_000,
        );
      }),
    );

    const socket = path.join(logDir, 'haproxy.sock');
    const cfg = path.join(logDir, 'haproxy.cfg');
    fs.writeFileSync(cfg, haproxyConfig(fs.readFileSync('deploy/haproxy.cfg', 'utf8'), lbPort, ports, socket));
    const check = spawnSync(haproxy, ['-c', '-q', '-f', cfg], { encoding: 'utf8' });
    if (check.status !== 0) throw new Error(`haproxy -c failed: ${check.stderr}`);
    const haproxyLog = path.join(logDir, 'haproxy.log');
    const lbOut = fs.openSync(haproxyLog, 'a');
    const lbProcess = ownChild(spawn(haproxy, ['-db', '-f', cfg], { stdio: ['ignore', lbOut, lbOut] }));
    fs.closeSync(lbOut);
    cleanup.push(() => lbProcess.kill('SIGTERM'));
    const allUp = async () => [...(await lbStates(socket)).values()].every((s) => s === 'UP');
    await waitFor('HAProxy: every backend up', allUp, 30_000);

    // Keys: one per traffic client (each paces itself to half the limit), one probe key sent twice it.
    const keyNames = Array.from({ length: CLIENTS }, (_, n) => `bench client ${n}`);
    const [seedKey, probeKey, ...keys] = await createBenchKeys(databaseUrl, ['bench seed', 'bench probe', ...keyNames]);

    // Seed through HAProxy: customers with a Kenyan beneficiary (payouts), four of them with an active card.
    say('seeding through HAProxy (customers, beneficiaries, active cards)…');
    const payees = await Promise.all(
      Array.from({ length: 8 }, async (_, i) => {
        const customer = await api<{ id: string }>(lb, seedKey, 'POST', '/v1/customers', {
          email: `payee${i}@bench.example`,
          firstName: 'Ada',
          lastName: 'Obi',
          phone: '712345678',
          countryCode: '+254',
        });
        const beneficiary = await kenyanBeneficiary(lb, seedKey, customer.id);
        return { customerId: customer.id, beneficiaryId: beneficiary.id };
      }),
    );
    const cards = (await Promise.all(payees.slice(0, 4).map((p) => activeCard(lb, seedKey, p.customerId)))).map(
      (c) => c.id,
    );

    // ---- traffic ----
    const counts = { requests: 0, byStatus: new Map<number | string, number>() };
    const failures: Failure[] = [];
    const money = { calls: 0, retried: 0, same: 0, differed: [] as string[], unresolved: [] as string[] };
    const gapMs = 120_000 / KEY_LIMIT;
    const nextSlot = new Map<string, number>();
    /** Waits so that `key` stays at half the limit (traffic keys must never be refused). */
    const pace = async (key: string) => {
      const now = Date.now();
      const slot = Math.max(now, nextSlot.get(key) ?? 0);
      nextSlot.set(key, slot + gapMs);
      if (slot > now) await sleep(slot - now);
    };
    type Answer = { status: number; json: Record<string, unknown>; retryAfter: boolean };
    /** One request through HAProxy; a failure is recorded; no answer (reset, refused, timeout) returns undefined. */
    const call = async (
      what: string,
      method: string,
      url: string,
      key: string,
      body?: unknown,
      idem?: string,
    ): Promise<Answer | undefined> => {
      await pace(key);
      counts.requests++;
      const start = Date.now();
      try {
        const res = await fetch(`${lb}${url}`, {
          method,
          headers: {
            authorization: `Bearer ${key}`,
            'content-type': 'application/json',
            ...(idem ? { 'idempotency-key': idem } : {}),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(60_000),
        });
        const text = await res.text();
        bump(counts.byStatus, res.status);
        const json = text.startsWith('{') ? (JSON.parse(text) as Record<string, unknown>) : {};
        const retryAfter = res.headers.has('retry-after');
        if (res.status >= 500 || res.status === 429) {
          // HAProxy's own answers are HTML; the gateway's are problem+json with a code.
          const code = typeof json.code === 'string' ? json.code : text.includes('<html>') ? 'haproxy' : 'no code';
          failures.push({ start, end: Date.now(), what, label: `${res.status} ${code}`, retryAfter });
        }
        return { status: res.status, json, retryAfter };
      } catch (error) {
        const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
        bump(counts.byStatus, 'no answer');
        failures.push({ start, end: Date.now(), what, label: `no answer ${cause}`, retryAfter: false });
        return undefined;
      }
    };
    /** Answers after which a retry with the same key may run the work (nothing was done) or must wait for it. */
    const retryable = (a: Answer | undefined) =>
      !a ||
      a.status === 503 ||
      (a.status === 409 && a.json.code === 'request_in_progress') ||
      (a.status >= 500 && typeof a.json.code !== 'string'); /* HAProxy's own 502/503/504 */
    const outcomeOf = (a: Answer) => `${a.status} ${JSON.stringify(a.json.id ?? a.json.code ?? '')}`;
    /**
     * A money-moving POST with an Idempotency-Key. When its answer says nothing is settled (no
     * answer, 503, 409 `request_in_progress`, HAProxy's own error) it is retried with the same key (after
     * Retry-After, else 1 s, for up to 60 s) until it reaches an outcome; then sent once more,
     * which must give the same outcome (status and resource id, or error code).
     */
    const moneyCall = async (what: string, url: string, key: string, body: unknown): Promise<Answer | undefined> => {
      money.calls++;
      const idem = randomUUID();
      let answer = await call(what, 'POST', url, key, body, idem);
      if (!retryable(answer)) return answer;
      money.retried++;
      const deadline = Date.now() + 60_000;
      while (retryable(answer) && Date.now() < deadline) {
        await sleep(answer?.retryAfter ? 1000 * Math.min(5, Number(answer.json.retryAfter ?? 1) || 1) : 1000);
        answer = await call(`${what} (retry)`, 'POST', url, key, body, idem);
      }
      if (!answer || retryable(answer)) {
        money.unresolved.push(`${what}: ${answer ? outcomeOf(answer) : 'no answer'}`);
        return answer;
      }
      const replay = await call(`${what} (replay)`, 'POST', url, key, body, idem);
      if (replay && outcomeOf(replay) === outcomeOf(answer)) money.same++;
      else money.differed.push(`${outcomeOf(answer)} then ${replay ? outcomeOf(replay) : 'no answer'}`);
      return answer;
    };

    const started = Date.now();
    const deadline = started + SECONDS * 1000;
    let chaosDone = false;
    const running = () => Date.now() < deadline || !chaosDone;
    let seq = 0;
    const client = async (n: number) => {
      const key = keys[n];
      const payee = payees[n % payees.length];
      while (running()) {
        const roll = Math.random();
        if (roll < 0.4) await call('GET /v1/transactions', 'GET', '/v1/transactions?limit=20', key);
        else if (roll < 0.5) await call('GET /v1/customers', 'GET', '/v1/customers?limit=20', key);
        else if (roll < 0.62)
          await call('POST /v1/customers', 'POST', '/v1/customers', key, {
            email: `c${process.pid}-${seq++}@bench.example`,
            firstName: 'Ada',
            lastName: 'Obi',
            phone: '712345678',
            countryCode: '+254',
          });
        else if (roll < 0.85) {
          const payout = await moneyCall('POST /v1/payouts', '/v1/payouts', key, {
            ...payee,
            amount: 1000,
            description: `bench ${n}`,
          });
          if (payout?.status === 201)
            await moneyCall('POST /v1/payouts/:id/confirm', `/v1/payouts/${String(payout.json.id)}/confirm`, key, {});
        } else
          await moneyCall('POST /v1/cards/:id/top-ups', `/v1/cards/${cards[n % cards.length]}/top-ups`, key, {
            amount: 500,
          });
      }
    };
    // The probe key: twice its limit per minute, evenly spaced, for as long as the traffic runs.
    const probeHits: ProbeHit[] = [];
    const prober = async () => {
      const gap = 60_000 / (2 * KEY_LIMIT);
      const inFlight = new Set<Promise<void>>();
      for (let next = Date.now(); running(); next += gap) {
        await sleep(Math.max(0, next - Date.now()));
        const at = Date.now();
        const p = fetch(`${lb}/v1/customers?limit=1`, {
          headers: { authorization: `Bearer ${probeKey}` },
          signal: AbortSignal.timeout(60_000),
        })
          .then(async (res) => {
            await res.arrayBuffer();
            if (res.status === 429 || res.status < 400) probeHits.push({ at, accepted: res.status !== 429 });
          })
          .catch(() => undefined)
          .finally(() => inFlight.delete(p));
        inFlight.add(p);
      }
      await Promise.all(inFlight);
    };

    // ---- chaos: rolling SIGTERM restart of each instance, provider outage, SIGKILL ----
    const timings: RestartTiming[] = [];
    const windows: Array<{ kind: 'restart' | 'kill' | 'outage'; from: number; to: number; name?: string }> = [];
    let killAt = Number.NaN;
    /** When the SIGKILLed process had exited (its 'exit' event): until then its kernel socket still takes connections. */
    let killExitedAt = Number.NaN;
    const chaosLog: string[] = [];
    const note = (what: string) =>
      chaosLog.push(`${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s  ${what}`);
    const atFraction = async (fraction: number) => {
      const wait = started + SECONDS * 1000 * fraction - Date.now();
      if (wait > 0) await sleep(wait);
    };
    /** Stops instance `i` with `signal`, starts it again, and waits until HAProxy has it up. */
    const restart = async (i: number, signal: NodeJS.Signals): Promise<void> => {
      const child = instances[i] as ChildProcess;
      const name = names[i];
      addCounters(await scrape(ports[i]));
      const exited = new Promise((r) => child.once('exit', r));
      const t0 = Date.now();
      if (signal === 'SIGKILL') killAt = t0;
      child.kill(signal);
      note(`${signal} ${name}`);
      let lbDownMs: number | undefined;
      const lbDown = waitFor(
        `HAProxy: ${name} down`,
        async () => !(await lbStates(socket)).get(name)?.startsWith('UP'),
        60_000,
        50,
      ).then(() => (lbDownMs = Date.now() - t0));
      await exited;
      const exitMs = Date.now() - t0;
      if (signal === 'SIGKILL') killExitedAt = t0 + exitMs;
      await lbDown;
      const s0 = Date.now();
      const fresh = spawnInstance(i);
      const alive = () => {
        if (fresh.exitCode !== null) throw new Error(`${name} exited (${fresh.exitCode}), see ${logDir}`);
      };
      await waitFor(`${name} listening`, async () => (alive(), accepts(ports[i])), 180_000, 50);
      const listenMs = Date.now() - s0;
      await waitFor(`${name} ready`, async () => (alive(), readyDirect(i)), 60_000, 100);
      const readyMs = Date.now() - s0;
      await waitFor(`HAProxy: ${name} up`, async () => (await lbStates(socket)).get(name) === 'UP', 60_000, 50);
      timings.push({ name, signal, lbDownMs, exitMs, listenMs, readyMs, lbUpMs: Date.now() - s0 });
      note(`${name} up in HAProxy again`);
      windows.push({ kind: signal === 'SIGKILL' ? 'kill' : 'restart', from: t0, to: Date.now() + 1000, name });
    };
    const chaos = async () => {
      await atFraction(0.1);
      for (const i of [0, 1, 2]) {
        // A rolling deploy: the next instance only once every backend is up.
        await waitFor('HAProxy: every backend up', allUp, 60_000);
        await restart(i, 'SIGTERM');
      }
      await atFraction(0.55);
      note('simulator fails (every operation 503)');
      const outageFrom = Date.now();
      await fetch(`${sim.origin}/__admin/faults`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ '*': { status: 503 } }),
      });
      await sleep(OUTAGE_MS);
      await fetch(`${sim.origin}/__admin/faults`, { method: 'DELETE' });
      note('simulator recovered');
      // The breakers stay open until their half-open probe: answers until then belong to the outage.
      const outageEnds = Date.now() + BREAKER_HALF_OPEN_MS + 2000;
      windows.push({ kind: 'outage', from: outageFrom, to: outageEnds });
      await atFraction(0.75);
      // The kill only once the outage's answers are over, so that each failure has one cause.
      if (outageEnds > Date.now()) await sleep(outageEnds - Date.now());
      await waitFor('HAProxy: every backend up', allUp, 60_000);
      await restart(1, 'SIGKILL');
    };

    say(`running ${CLIENTS} clients for ${SECONDS} s (and until the chaos is over) through HAProxy on ${lb}…`);
    await Promise.all([
      chaos().finally(() => (chaosDone = true)),
      prober(),
      ...Array.from({ length: CLIENTS }, (_, n) => client(n)),
    ]);
    const elapsed = (Date.now() - started) / 1000;

    // Settle: the simulator completes what it holds; callbacks and reconciliation land.
    await fetch(`${sim.origin}/__admin/flush`, { method: 'POST' });
    await sleep(5000);
    for (let i = 0; i < 3; i++) addCounters(await scrape(ports[i]));

    const records = (
      (await (await fetch(`${sim.origin}/__admin/records`)).json()) as {
        records: Array<{ kind: string; reference: string; status: string }>;
      }
    ).records;
    const sql = await benchSqlClient(databaseUrl);
    const ledger = (await sql.query<{ reference: string }>('SELECT reference FROM transactions')).rows;
    await sql.end();
    const ledgerRefs = new Set(ledger.map((r) => r.reference));
    const simRefs = new Map<string, number>();
    for (const r of records) bump(simRefs, r.reference);
    const moved = records.filter((r) => r.status !== 'failed' && r.status !== 'expired');
    const lost = moved.filter((r) => !ledgerRefs.has(r.reference)).length;
    const doubled = [...simRefs.values()].filter((n) => n > 1).length;

    // ---- classify the failures ----
    /** The chaos window of `kind` that failure `f` overlaps, if any. */
    const windowOf = (f: Failure, kind: string) =>
      windows.find((w) => w.kind === kind && f.end >= w.from && f.start <= w.to);
    const within = (f: Failure, kind: string) => windowOf(f, kind) !== undefined;
    const providerAnswer = (f: Failure) =>
      /^(503 provider_retry_later|502 provider_unavailable|504 provider_timeout)$/.test(f.label);
    const classes = {
      kill: new Map<string, number>(),
      killQueued: new Map<string, number>(),
      outage: new Map<string, number>(),
      restart: new Map<string, number>(),
      afterKill: new Map<string, number>(),
      other: new Map<string, number>(),
    };
    let outageWithoutRetryAfter = 0;
    /** When each failure of the SIGKILL window that was not in flight at the kill was sent, ms after the kill. */
    const afterKillStarts: number[] = [];
    /** Each failure during a rolling restart: which instance's, sent how long after its SIGTERM, and how long it took. */
    const restartFailures: string[] = [];
    /** Each failure at any other time: when it was sent (s from the start, as in the chaos list) and how long it took. */
    const otherFailures: string[] = [];
    for (const f of failures) {
      const label = `${f.label} (${f.what})`;
      if (providerAnswer(f) && within(f, 'outage')) {
        bump(classes.outage, f.label);
        if (f.label.startsWith('503') && !f.retryAfter) outageWithoutRetryAfter++;
      } else if (f.start < killAt && f.end >= killAt) bump(classes.kill, label);
      // Sent after the kill, before the process was gone and before HAProxy took it out: HAProxy
      // could still pick the instance, and the dying process's listening socket still completed
      // connections, then reset them (seen with server keep-alive off too). No answer is then the
      // killed instance's, since the live ones close no connection unanswered (the 'any other time' class).
      else if (f.label.startsWith('no answer') && f.start >= killAt && f.start <= killExitedAt)
        bump(classes.killQueued, label);
      else {
        const restart = windowOf(f, 'restart');
        if (restart) {
          bump(classes.restart, label);
          restartFailures.push(`${restart.name} +${f.start - restart.from} ms, failed after ${f.end - f.start} ms`);
        } else if (within(f, 'kill')) {
          bump(classes.afterKill, label);
          afterKillStarts.push(f.start - killAt);
        } else {
          bump(classes.other, label);
          otherFailures.push(`${((f.start - started) / 1000).toFixed(1)} s, failed after ${f.end - f.start} ms`);
        }
      }
    }
    const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);

    // ---- the probe against the limit ----
    probeHits.sort((a, b) => a.at - b.at);
    const probeAccepted = probeHits.filter((h) => h.accepted).length;
    const probeRefused = probeHits.length - probeAccepted;
    const allowed = expectedAccepted(
      probeHits.map((h) => h.at),
      KEY_LIMIT,
    );
    const expectedRefused = probeHits.length - allowed;
    const limitOff = Math.abs(probeAccepted - allowed) / allowed;

    // ---- HAProxy's view: its own answers, retries, servers going down and why ----
    const lbAnswers = new Map<string, number>();
    let lbRetried = 0;
    const lbEvents: string[] = [];
    for (const line of fs.readFileSync(haproxyLog, 'utf8').split('\n')) {
      const m = / gateways(?:-writes)?\/(\S+) \S+ (\d{3}) \S+ \S+ \S+ (\S{4}) \d+\/\d+\/\d+\/\d+\/\+?(\d+) /.exec(line);
      if (m) {
        if (Number(m[2]) >= 500 || m[3][0] !== '-') bump(lbAnswers, `${m[2]} ${m[3]} ${m[1]}`);
        if (Number(m[4]) > 0) lbRetried++;
      } else if (/Server gateways\/\S+ is (DOWN|UP)/.test(line)) {
        const event = line.replace(/^.*?(Server )/, '$1');
        if (lbEvents.at(-1) !== event) lbEvents.push(event); // HAProxy logs each event twice (log and stderr)
      }
    }
    // ---- the gateways' error lines ----
    const gatewayErrors = new Map<string, number>();
    for (const name of names) {
      for (const line of fs.readFileSync(path.join(logDir, `${name}.log`), 'utf8').split('\n')) {
        if (!line.startsWith('{')) {
          if (line.trim()) bump(gatewayErrors, `${name} stderr: ${line.slice(0, 120)}`);
          continue;
        }
        const entry = JSON.parse(line) as { level: number; msg?: string; err?: { message?: string } };
        if (entry.level >= 50) bump(gatewayErrors, `${name}: ${entry.msg ?? ''} ${entry.err?.message ?? ''}`.trim());
      }
    }

    const metric = (name: string) => (totals[name] === undefined ? 'n/a' : String(totals[name]));
    const statuses = [...counts.byStatus.entries()]
      .sort(([a], [b]) => String(a).localeCompare(String(b)))
      .map(([k, v]) => `${k}: ${v}`)
      .join(', ');
    say();
    say(
      `bench:cluster: ${CLIENTS} clients, ${elapsed.toFixed(0)} s, 3 instances behind HAProxy, ${os.cpus().length} cores`,
    );
    say(`requests          ${counts.requests} (${(counts.requests / elapsed).toFixed(0)}/s)   statuses: ${statuses}`);
    say('failures (5xx, no answer, 429 on a traffic key), by when they happened:');
    say(`  in flight on the SIGKILLed instance (allowed)   ${total(classes.kill)}  (${list(classes.kill)})`);
    say(
      `  sent to it after the kill, before it exited     ${total(classes.killQueued)}  (${list(classes.killQueued)}; allowed: no answer only)`,
    );
    say(
      `  provider outage (designed answers)              ${total(classes.outage)}  (${list(classes.outage)}; 503s without Retry-After: ${outageWithoutRetryAfter})`,
    );
    say(`  rolling SIGTERM restarts                        ${total(classes.restart)}  (${list(classes.restart)})`);
    if (restartFailures.length)
      say(`      sent after the SIGTERM (see the restarts' phases below): ${restartFailures.join('; ')}`);
    say(`  SIGKILL restart, not in flight at the kill      ${total(classes.afterKill)}  (${list(classes.afterKill)})`);
    if (afterKillStarts.length) {
      // A request sent after the kill but before HAProxy took the instance out can still go to it.
      const lbDown = timings.find((t) => t.signal === 'SIGKILL')?.lbDownMs ?? '?';
      say(
        `      sent ${afterKillStarts.sort((a, b) => a - b).join(', ')} ms after the kill; HAProxy took the instance out ${lbDown} ms after it (seen every 50 ms)`,
      );
    }
    say(`  any other time                                  ${total(classes.other)}  (${list(classes.other)})`);
    if (otherFailures.length) say(`      sent at (see chaos below): ${otherFailures.join('; ')}`);
    say(
      `money calls       ${money.calls}; ${money.retried} retried with the same Idempotency-Key: ${money.same} reached an outcome a replay repeated, ${money.differed.length} differed${money.differed.length ? ` (${money.differed.slice(0, 5).join('; ')})` : ''}, ${money.unresolved.length} unresolved after 60 s${money.unresolved.length ? ` (${money.unresolved.slice(0, 5).join('; ')})` : ''}`,
    );
    say(`movements         simulator ${records.length} (${moved.length} not failed), ledger rows ${ledger.length}`);
    say(`lost              ${lost}   doubled: ${doubled}`);
    say(
      `probe key         ${probeHits.length} answered at ${(2 * KEY_LIMIT).toFixed(0)}/min: ${probeAccepted} accepted, ${probeRefused} × 429; the limit (${KEY_LIMIT}/min, fixed window) allows ${allowed} (${expectedRefused} × 429), off by ${(100 * limitOff).toFixed(1)} %`,
    );
    say(
      `rate limit        rejections ${metric('rate_limit_rejections_total')}, store errors (fail open) ${metric('rate_limit_store_errors_total')}`,
    );
    say(
      `breaker           opens ${metric('provider_breaker_opens_total')}, fail-fast answers ${metric('provider_fast_failures_total')}`,
    );
    say('restarts (ms; exit and HAProxy-down from the signal, the rest from the new process spawn):');
    say('  instance  signal   lb-down  exit    listening  ready   lb-up');
    for (const t of timings)
      say(
        `  ${t.name.padEnd(9)} ${t.signal.padEnd(8)} ${String(t.lbDownMs ?? '-').padStart(7)}  ${String(t.exitMs).padStart(6)}  ${String(t.listenMs).padStart(9)}  ${String(t.readyMs).padStart(6)}  ${String(t.lbUpMs).padStart(6)}`,
      );
    say(`HAProxy           answers ≥ 500 or cut (status, termination, server): ${list(lbAnswers)}`);
    say(`                  requests retried by HAProxy: ${lbRetried}`);
    for (const e of lbEvents) say(`                  ${e}`);
    say(`gateway errors    ${list(gatewayErrors)}`);
    say('chaos:');
    for (const line of chaosLog) say(`  ${line}`);
    const verdict = (ok: boolean) => (ok ? 'PASS  ' : 'MISSED');
    const unresolvedOrDiffer = money.unresolved.length + money.differed.length;
    say('targets (issue 13):');
    say(`  ${verdict(total(classes.restart) === 0)} the rolling restarts cause 0 errors (${total(classes.restart)})`);
    say(`  ${verdict(lost === 0 && doubled === 0)} 0 lost, 0 doubled (${lost}, ${doubled})`);
    say(
      `  ${verdict(total(classes.afterKill) + total(classes.other) === 0)} errors only for requests on the killed instance: in flight, or sent before it exited (others: ${total(classes.afterKill) + total(classes.other)})`,
    );
    say(
      `  ${verdict(unresolvedOrDiffer === 0)} a retry with the same Idempotency-Key reaches the same outcome (${money.same} of ${money.retried})`,
    );
    say(
      `  ${verdict(expectedRefused > 0 && limitOff <= 0.1)} the shared limit holds within 10 % (${probeAccepted} accepted of ${allowed} allowed${expectedRefused > 0 ? '' : '; the probe never reached the limit'})`,
    );
    say(`logs: ${logDir} (haproxy.log, gateway1-3.log, haproxy.cfg)`);
  } finally {
    for (const fn of cleanup.reverse()) {
      try {
        await fn();
      } catch {
        /* keep cleaning */
      }
    }
  }
}

runBench(main);
