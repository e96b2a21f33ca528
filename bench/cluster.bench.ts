/**
 * `npm run bench:cluster`: three compiled gateway instances (node dist/main.js) on one PostgreSQL
 * (a fresh database) and one Redis, behind HAProxy on loopback, with the provider simulator; 200
 * clients of mixed traffic for BENCH_SECONDS (default 60, 10 to 600) while every instance is
 * restarted in turn with SIGTERM, one is killed with SIGKILL, and the simulator fails for 10 s.
 * Prints requests, 5xx, resets, lost and doubled movements (simulator against ledger), the 429s of
 * one key against its limit, and the provider breaker's opens and fail-fast answers (from /metrics).
 *
 * Needs: haproxy (Debian: apt-get install haproxy), Redis on REDIS_URL (default
 * redis://127.0.0.1:6379; keys under a per-run prefix), DATABASE_URL's server or an embedded
 * PostgreSQL. Settings: BENCH_SECONDS, BENCH_CLIENTS (default 200), BENCH_KEY_LIMIT (per-key
 * limit per minute, default 6000; the probe key is sent twice that).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { freePort, startEmbeddedDatabase, withDatabase } from '../scripts/lib/embedded-db';
import { migrateDatabase } from '../scripts/lib/migrate';
import { createApiClient } from '../src/auth/api-clients.repository';
import { DEMO_SCOPES } from '../src/auth/scopes';
import { createPgAdapter } from '../src/database/prisma.service';
import { PrismaClient } from '../src/generated/prisma/client';
import { buildGateway, spawnNode, waitUntilUp } from './lib';
import { BENCH_PROVIDER_KEY, BENCH_WEBHOOK_SECRET, runBench } from './stack';

/** One personal-data key for the run, shared by the three instances (production refuses to start without one). */
const PII_KEYS = process.env.PII_ENCRYPTION_KEYS ?? `bench:${randomBytes(32).toString('base64')}`;

const SECONDS = Math.min(600, Math.max(10, Number(process.env.BENCH_SECONDS ?? 60)));
const CLIENTS = Math.min(1000, Math.max(1, Number(process.env.BENCH_CLIENTS ?? 200)));
const KEY_LIMIT = Number(process.env.BENCH_KEY_LIMIT ?? 6000);
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const SHUTDOWN_DELAY_MS = 2000;
/** Keys the main traffic spreads over, so that none of them reaches KEY_LIMIT. */
const TRAFFIC_KEYS = 40;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const say = (line: string) => process.stdout.write(`${line}\n`);

function findHaproxy(): string {
  const found = ['/usr/sbin/haproxy', '/usr/local/sbin/haproxy', '/usr/bin/haproxy'].find((p) => fs.existsSync(p));
  if (!found) {
    throw new Error('haproxy is not installed. On Debian/Ubuntu: sudo apt-get install haproxy (loopback only here).');
  }
  return found;
}

/** HAProxy on loopback in front of `ports`, with the checks and retries of deploy/haproxy.cfg. */
function haproxyConfig(listen: number, ports: number[]): string {
  return [
    'global',
    '    maxconn 8192',
    'defaults',
    '    mode http',
    '    timeout connect 2s',
    '    timeout client 60s',
    '    timeout server 45s',
    '    timeout http-keep-alive 10s',
    '    retries 3',
    '    retry-on conn-failure 503',
    '    option redispatch 1',
    'frontend gateway',
    `    bind 127.0.0.1:${listen}`,
    '    default_backend gateways',
    'backend gateways',
    '    balance roundrobin',
    '    option httpchk',
    '    http-check send meth GET uri /health/ready',
    '    http-check expect status 200',
    '    default-server inter 500ms fall 2 rise 2',
    ...ports.map((port, i) => `    server gateway${i + 1} 127.0.0.1:${port} check`),
    '',
  ].join('\n');
}

/** Sums of the counters we read from one instance's /metrics (undefined: the metric does not exist). */
type Counters = Record<string, number | undefined>;
const METRICS = ['rate_limit_rejections_total', 'provider_fast_failures_total', 'provider_breaker_opens_total'];

async function scrape(port: number): Promise<Counters> {
  const counters: Counters = {};
  try {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    for (const name of [...METRICS, 'provider_breaker_state']) {
      const lines = text.split('\n').filter((l) => l.startsWith(name) && !l.startsWith('#'));
      if (lines.length) counters[name] = lines.reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
    }
  } catch {
    /* instance down: nothing to add */
  }
  return counters;
}

interface Tally {
  requests: number;
  byStatus: Map<number, number>;
  fiveXx: Map<string, number>;
  resets: Map<string, number>;
  /** Money-moving calls whose first answer was an error or a reset, and what their retry reached. */
  retried: number;
  retriedSame: number;
}

async function main(): Promise<void> {
  const haproxy = findHaproxy();
  const cleanup: Array<() => unknown> = [];
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'wg-bench-cluster-'));
  cleanup.push(() => fs.rmSync(tmp, { recursive: true, force: true }));
  try {
    let server = process.env.DATABASE_URL;
    if (!server) {
      const embedded = await startEmbeddedDatabase({ persistent: false });
      cleanup.push(() => embedded.stop());
      server = embedded.url;
    }
    const dbName = `wg_bench_cluster_${process.pid}`;
    const databaseUrl = withDatabase(server, dbName);
    migrateDatabase(databaseUrl);
    cleanup.push(async () => {
      const admin = new Client({ connectionString: withDatabase(server, 'postgres') });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
      await admin.end();
    });
    const prefix = `bench-cluster-${process.pid}:`;

    const lbPort = await freePort();
    const lb = `http://127.0.0.1:${lbPort}`;
    const simPort = await freePort();
    const sim = `http://127.0.0.1:${simPort}`;
    const simulator = spawnNode(['--import', 'tsx', 'simulator/main.ts'], {
      ...process.env,
      SIMULATOR_PORT: String(simPort),
      PROVIDER_API_KEY: BENCH_PROVIDER_KEY,
      PROVIDER_WEBHOOK_SECRET: BENCH_WEBHOOK_SECRET,
      SIMULATOR_WEBHOOK_URL: `${lb}/webhooks/provider`,
      SIMULATOR_PAYOUT_COMPLETE_DELAY_MS: '500',
      SIMULATOR_CALL_LOG_LIMIT: '1000',
    });
    cleanup.push(() => simulator.kill('SIGTERM'));
    await waitUntilUp(`${sim}/__admin/state`, process.hrtime.bigint(), simulator);

    say('building the gateway (npm run build)…');
    buildGateway();
    const ports = [await freePort(), await freePort(), await freePort()];
    const instances: Array<ChildProcess | undefined> = [];
    const totals: Counters = {};
    const addCounters = (c: Counters) => {
      for (const [name, value] of Object.entries(c))
        if (value !== undefined && name !== 'provider_breaker_state') totals[name] = (totals[name] ?? 0) + value;
    };
    const startInstance = async (i: number) => {
      const child = spawnNode(['dist/main.js'], {
        ...process.env,
        NODE_ENV: 'production',
        PORT: String(ports[i]),
        DATABASE_URL: databaseUrl,
        REDIS_URL,
        REDIS_KEY_PREFIX: prefix,
        PII_ENCRYPTION_KEYS: PII_KEYS,
        PROVIDER_BASE_URL: `${sim}/api/v1`,
        PROVIDER_API_KEY: BENCH_PROVIDER_KEY,
        PROVIDER_WEBHOOK_SECRET: BENCH_WEBHOOK_SECRET,
        PROVIDER_TIMEOUT_MS: '5000',
        PUBLIC_BASE_URL: lb,
        LOG_LEVEL: 'error',
        RATE_LIMIT_PER_MINUTE: String(KEY_LIMIT),
        SHUTDOWN_DELAY_MS: String(SHUTDOWN_DELAY_MS),
        DATABASE_POOL_SIZE: '8',
        READ_POOL_SIZE: '4',
        JOBS_POOL_SIZE: '2',
      });
      instances[i] = child;
      await waitUntilUp(`http://127.0.0.1:${ports[i]}/health/ready`, process.hrtime.bigint(), child, 120_000);
    };
    cleanup.push(() => instances.forEach((c) => c?.kill('SIGKILL')));
    await Promise.all([0, 1, 2].map(startInstance));
    const stopInstance = async (i: number, signal: NodeJS.Signals) => {
      const child = instances[i];
      if (!child) return;
      addCounters(await scrape(ports[i]));
      const exited = new Promise((r) => child.once('exit', r));
      child.kill(signal);
      await exited;
    };

    const cfg = path.join(tmp, 'haproxy.cfg');
    fs.writeFileSync(cfg, haproxyConfig(lbPort, ports));
    const check = spawnSync(haproxy, ['-c', '-q', '-f', cfg], { encoding: 'utf8' });
    if (check.status !== 0) throw new Error(`haproxy -c failed: ${check.stderr}`);
    const lbProcess = spawn(haproxy, ['-db', '-f', cfg], { stdio: ['ignore', 'ignore', 'ignore'] });
    cleanup.push(() => lbProcess.kill('SIGTERM'));
    await waitUntilUp(`${lb}/health/ready`, process.hrtime.bigint(), lbProcess);
    await sleep(1500); // every backend's checks up

    // Keys: the traffic's, and one probe key sent twice its limit.
    const prisma = new PrismaClient({ adapter: createPgAdapter(databaseUrl, 1) });
    const keys: string[] = [];
    for (let i = 0; i < TRAFFIC_KEYS; i++) keys.push((await createApiClient(prisma, `bench ${i}`, DEMO_SCOPES)).key);
    const probeKey = (await createApiClient(prisma, 'bench probe', DEMO_SCOPES)).key;
    await prisma.$disconnect();
    const auth = (key: string) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });

    // Seed: customers with a Kenyan beneficiary (payouts) and, when the card flow answers, active cards.
    const payees: Array<{ customerId: string; beneficiaryId: string }> = [];
    for (let i = 0; i < 8; i++) {
      const c = await fetch(`${lb}/v1/customers`, {
        method: 'POST',
        headers: auth(keys[0]),
        body: JSON.stringify({
          email: `payee${i}@bench.example`,
          firstName: 'Ada',
          lastName: 'Obi',
          phone: '712345678',
          countryCode: '+254',
        }),
      });
      const customer = (await c.json()) as { id: string };
      const b = await fetch(`${lb}/v1/beneficiaries`, {
        method: 'POST',
        headers: auth(keys[0]),
        body: JSON.stringify({
          customerId: customer.id,
          country: 'KE',
          currency: 'KES',
          destination: { type: 'MOBILEMONEY', network: 'MPESA', accountNumber: '254712345678' },
        }),
      });
      payees.push({ customerId: customer.id, beneficiaryId: ((await b.json()) as { id: string }).id });
    }
    const cards: string[] = [];
    try {
      for (let i = 0; i < 4; i++) {
        const customerId = payees[i].customerId;
        const holder = await fetch(`${lb}/v1/card-holders`, {
          method: 'POST',
          headers: auth(keys[0]),
          body: JSON.stringify({
            customerId,
            idType: 'PASSPORT',
            idNumber: `A1234567${i}`,
            address: {
              line1: '1 Moi Avenue',
              houseName: 'Block C',
              city: 'Nairobi',
              state: 'Nairobi',
              zipCode: '00100',
              country: 'KE',
            },
            userPhoto: 'https://cdn.example.com/kyc/photo.jpg',
            idImage: 'https://cdn.example.com/kyc/id.jpg',
          }),
        });
        if (holder.status !== 201) throw new Error(`card holder ${holder.status}`);
        await sleep(300);
        const card = await fetch(`${lb}/v1/cards`, {
          method: 'POST',
          headers: { ...auth(keys[0]), 'idempotency-key': randomUUID() },
          body: JSON.stringify({ customerId, brand: 'visa', amount: 200_000 }),
        });
        if (card.status !== 201) throw new Error(`card ${card.status} ${await card.text()}`);
        cards.push(((await card.json()) as { id: string }).id);
      }
      await fetch(`${sim}/__admin/flush`, { method: 'POST' });
      await sleep(1000);
    } catch (error) {
      say(`card seeding stopped (${(error as Error).message}); top-ups use the cards made so far (${cards.length})`);
    }

    const tally: Tally = {
      requests: 0,
      byStatus: new Map(),
      fiveXx: new Map(),
      resets: new Map(),
      retried: 0,
      retriedSame: 0,
    };
    const bump = <K>(m: Map<K, number>, k: K) => m.set(k, (m.get(k) ?? 0) + 1);
    /** One request through HAProxy; a reset or refused connection is counted and returned as undefined. */
    const call = async (method: string, url: string, key: string, body?: unknown, idem?: string) => {
      tally.requests++;
      try {
        const res = await fetch(`${lb}${url}`, {
          method,
          headers: { ...auth(key), ...(idem ? { 'idempotency-key': idem } : {}) },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(30_000),
        });
        bump(tally.byStatus, res.status);
        const text = await res.text();
        const json = text.startsWith('{') ? (JSON.parse(text) as Record<string, unknown>) : {};
        if (res.status >= 500)
          bump(tally.fiveXx, `${res.status} ${typeof json.code === 'string' ? json.code : 'no code'}`);
        return { status: res.status, json };
      } catch (error) {
        const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
        bump(tally.resets, cause);
        return undefined;
      }
    };
    /** A money-moving call retried with the same Idempotency-Key after a 5xx or a reset: the outcome must match. */
    const moneyCall = async (url: string, key: string, body: unknown) => {
      const idem = randomUUID();
      let first = await call('POST', url, key, body, idem);
      if (first && first.status < 500) return first;
      tally.retried++;
      for (let attempt = 0; attempt < 5; attempt++) {
        await sleep(500 * (attempt + 1));
        const again = await call('POST', url, key, body, idem);
        if (again && again.status < 500 && again.status !== 409) {
          if (!first || first.status >= 500 || again.json.id === first.json.id) tally.retriedSame++;
          return again;
        }
        first = again ?? first;
      }
      return first;
    };

    const deadline = Date.now() + SECONDS * 1000;
    /** Traffic runs until the deadline and until the chaos has run its course (restarts take their time). */
    let chaosDone = false;
    const running = () => Date.now() < deadline || !chaosDone;
    let seq = 0;
    const client = async (n: number) => {
      const key = keys[n % keys.length];
      while (running()) {
        const roll = Math.random();
        if (roll < 0.4) await call('GET', '/v1/transactions?limit=20', key);
        else if (roll < 0.5) await call('GET', '/v1/customers?limit=20', key);
        else if (roll < 0.62)
          await call('POST', '/v1/customers', key, {
            email: `c${process.pid}-${seq++}@bench.example`,
            firstName: 'Ada',
            lastName: 'Obi',
            phone: '712345678',
            countryCode: '+254',
          });
        else if (roll < 0.85 || cards.length === 0) {
          const payee = payees[n % payees.length];
          const payout = await moneyCall('/v1/payouts', key, { ...payee, amount: 1000, description: `bench ${n}` });
          if (payout?.status === 201) await moneyCall(`/v1/payouts/${String(payout.json.id)}/confirm`, key, undefined);
        } else await moneyCall(`/v1/cards/${cards[n % cards.length]}/top-ups`, key, { amount: 500 });
        await sleep(50);
      }
    };
    // The probe key: twice its limit per minute, spread evenly, counted per fixed one-minute window.
    const probe = { sent: 0, accepted: new Map<number, number>(), limited: 0 };
    const prober = async () => {
      const gap = 60_000 / (2 * KEY_LIMIT);
      const batch = Math.max(1, Math.ceil(10 / gap));
      while (running()) {
        const started = Date.now();
        await Promise.all(
          Array.from({ length: batch }, async () => {
            probe.sent++;
            try {
              const res = await fetch(`${lb}/v1/customers?limit=1`, { headers: auth(probeKey) });
              await res.arrayBuffer();
              if (res.status === 429) probe.limited++;
              else if (res.status < 500) bump(probe.accepted, Math.floor(Date.now() / 60_000));
            } catch {
              /* counted by the traffic's resets */
            }
          }),
        );
        await sleep(Math.max(0, batch * gap - (Date.now() - started)));
      }
    };

    // Chaos, at fractions of the run: SIGTERM-restart 1, 2, 3 in turn, SIGKILL one, simulator down 10 s.
    const chaosLog: string[] = [];
    const at = async (fraction: number) => {
      const wait = deadline - SECONDS * 1000 * (1 - fraction) - Date.now();
      if (wait > 0) await sleep(wait);
    };
    const note = (what: string) => chaosLog.push(`${(SECONDS - (deadline - Date.now()) / 1000).toFixed(1)} s  ${what}`);
    const chaos = async () => {
      for (const [i, fraction] of [0.1, 0.25, 0.4].entries()) {
        await at(fraction);
        note(`SIGTERM gateway${i + 1}`);
        await stopInstance(i, 'SIGTERM');
        await startInstance(i);
        note(`gateway${i + 1} ready again`);
      }
      await at(0.55);
      note('simulator fails (every operation 503)');
      await fetch(`${sim}/__admin/faults`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ '*': { status: 503 } }),
      });
      await sleep(Math.min(10_000, (SECONDS * 1000) / 6));
      await fetch(`${sim}/__admin/faults`, { method: 'DELETE' });
      note('simulator recovered');
      await at(0.75);
      note('SIGKILL gateway2');
      await stopInstance(1, 'SIGKILL');
      await startInstance(1);
      note('gateway2 ready again');
      chaosDone = true;
    };

    say(`running ${CLIENTS} clients for ${SECONDS} s through HAProxy on ${lb} (3 instances)…`);
    const started = Date.now();
    await Promise.all([
      chaos().finally(() => (chaosDone = true)),
      prober(),
      ...Array.from({ length: CLIENTS }, (_, n) => client(n)),
    ]);
    const elapsed = (Date.now() - started) / 1000;

    // Settle: the simulator completes what it holds; callbacks and reconciliation land.
    await fetch(`${sim}/__admin/flush`, { method: 'POST' });
    await sleep(5000);
    for (let i = 0; i < 3; i++) addCounters(await scrape(ports[i]));

    const records = (
      (await (await fetch(`${sim}/__admin/records`)).json()) as {
        records: Array<{ kind: string; reference: string; status: string }>;
      }
    ).records;
    const sql = new Client({ connectionString: databaseUrl });
    await sql.connect();
    const ledger = (
      await sql.query<{ reference: string; status: string }>('SELECT reference, status FROM transactions')
    ).rows;
    await sql.end();
    const ledgerRefs = new Map(ledger.map((r) => [r.reference, r.status]));
    const simRefs = new Map<string, number>();
    for (const r of records) simRefs.set(r.reference, (simRefs.get(r.reference) ?? 0) + 1);
    const moved = records.filter((r) => r.status !== 'failed' && r.status !== 'expired');
    const lost = moved.filter((r) => !ledgerRefs.has(r.reference));
    const doubled = [...simRefs.values()].filter((n) => n > 1).length;

    const five = [...tally.fiveXx.entries()].map(([k, v]) => `${k}: ${v}`).join(', ') || 'none';
    const resets = [...tally.resets.entries()].map(([k, v]) => `${k}: ${v}`).join(', ') || 'none';
    const statuses = [...tally.byStatus.entries()]
      .sort(([a], [b]) => a - b)
      .map(([k, v]) => `${k}: ${v}`)
      .join(', ');
    const windows = [...probe.accepted.entries()].map(([w, n]) => `${n} in minute ${w % 60}`).join(', ');
    const metric = (name: string) => (totals[name] === undefined ? 'n/a' : String(totals[name]));
    say('');
    say(
      `bench:cluster: ${CLIENTS} clients, ${elapsed.toFixed(0)} s, 3 instances behind HAProxy, ${os.cpus().length} cores`,
    );
    say(`requests            ${tally.requests} (${(tally.requests / elapsed).toFixed(0)}/s)   statuses: ${statuses}`);
    say(`5xx                 ${[...tally.fiveXx.values()].reduce((a, b) => a + b, 0)}  (${five})`);
    say(`resets/refused      ${[...tally.resets.values()].reduce((a, b) => a + b, 0)}  (${resets})`);
    say(
      `money retries       ${tally.retried} retried with the same Idempotency-Key, ${tally.retriedSame} reached one outcome`,
    );
    say(`movements           simulator ${records.length} (${moved.length} not failed), ledger rows ${ledger.length}`);
    say(`lost                ${lost.length}   doubled: ${doubled}`);
    say(`429s of one key     ${probe.limited} of ${probe.sent} sent; accepted ${windows} (limit ${KEY_LIMIT}/min)`);
    say(`rate_limit_rejections_total ${metric('rate_limit_rejections_total')}`);
    say(
      `breaker             opens ${metric('provider_breaker_opens_total')}, fail-fast ${metric('provider_fast_failures_total')}`,
    );
    say('chaos:');
    for (const line of chaosLog) say(`  ${line}`);
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
