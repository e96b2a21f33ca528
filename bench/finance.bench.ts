/**
 * `npm run bench:finance [-- --rows N --seconds S]`: the finance API on a large ledger.
 *
 * Starts the bench stack (bench/stack.ts: its own database `wg_bench_finance_<pid>` on
 * DATABASE_URL's server or an embedded PostgreSQL, the simulator, the compiled gateway), seeds
 * `--rows` ledger rows (default 1,000,000; COPY through pg-copy-streams, with a progress bar) spread
 * over a year, plus their status history, then measures and prints:
 *   - EXPLAIN of the list, deep-cursor and summary queries (which index each uses);
 *   - p50/p95 of list pages through the gateway, one request at a time: filtered by status, by
 *     currency, by customer, by a one-day date range, by a narrow amount band, and deep cursor
 *     pages (target p95 ≤ 15 ms);
 *   - the summary of a month (target ≤ 300 ms);
 *   - the CSV export of every row: time and the gateway's peak RSS (targets ≤ 20 s, ≤ 250 MB);
 *   - GET /v1/transactions/{id} flat out (bench/load.ts `flatOut`, 10 connections, `--seconds`,
 *     default 10) through the gateway and through a raw baseline (bench/raw-baseline.ts: plain
 *     Fastify + pg, the same query), the ratio of requests/s (target ≥ 0.60) and each process's
 *     CPU µs per request (/proc). BENCH_PROFILE=1: the gateway's top frames during its run.
 * The database is dropped at the end. Numbers on a shared 2-core machine are noisy.
 */
import 'dotenv/config';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { SingleBar, Presets } from 'cli-progress';
import type { Client } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { encodeCursor } from '../src/common/pagination';
import { listStatement, summaryStatement } from '../src/transactions/transaction-query';
import { flatOut, type FlatOutResult, withCpu } from './load';
import { monotonicMicros, whereTheTimeGoes } from './profile';
import { runBench, startRawBaseline, startStack } from './stack';

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const value = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number`);
  return value;
}

const ROWS = flag('rows', 1_000_000);
const SECONDS = flag('seconds', Number(process.env.BENCH_SECONDS ?? 10));
const SAMPLES = flag('samples', 300);
const CUSTOMERS = Math.max(10, Math.min(5_000, Math.floor(ROWS / 200)));
const DAY = 86_400_000;
const END = Date.now() - 3_600_000;
const START = END - 365 * DAY;

/** Deterministic pseudo-random numbers (mulberry32), so runs seed the same ledger. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a |= 0;
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = rng(42);
function pick<T>(weighted: Array<[T, number]>): T {
  let r = random() * weighted.reduce((s, [, w]) => s + w, 0);
  for (const [value, weight] of weighted) if ((r -= weight) < 0) return value;
  return weighted[weighted.length - 1][0];
}

const KINDS: Array<[string, number]> = [
  ['payout', 30],
  ['collection', 30],
  ['swap', 10],
  ['card_topup', 10],
  ['card_withdrawal', 5],
  ['card_spend', 15],
];
const DIRECTION: Record<string, string> = {
  payout: 'debit',
  collection: 'credit',
  swap: 'debit',
  card_topup: 'debit',
  card_withdrawal: 'credit',
  card_spend: 'debit',
};
const STATUSES: Array<[string, number]> = [
  ['success', 70],
  ['failed', 10],
  ['pending', 8],
  ['processing', 4],
  ['expired', 3],
  ['unknown', 2],
  ['initiated', 2],
  ['reversed', 1],
];
const CURRENCIES: Array<[string, number]> = [
  ['USD', 40],
  ['NGN', 25],
  ['KES', 15],
  ['GHS', 10],
  ['UGX', 5],
  ['BTC', 5],
];
const FINAL = new Set(['success', 'failed', 'expired', 'reversed']);

interface Party {
  customerId: string;
  beneficiaryId: string;
  cardId: string | null;
}

/** Customers, one beneficiary each, and a card for two in five (plain SQL: these are not measured). */
async function seedParties(sql: Client): Promise<Party[]> {
  const { rows } = await sql.query<{ customer_id: string; beneficiary_id: string; card_id: string | null }>(
    `WITH c AS (
       INSERT INTO customers (id, provider_id, email, first_name, last_name, updated_at)
       SELECT gen_random_uuid(), 'bench-cus-' || g, 'bench' || g || '@example.com', 'Bench', 'Customer', now()
       FROM generate_series(1, $1::int) g RETURNING id),
     b AS (
       INSERT INTO beneficiaries (id, customer_id, country, currency, type, destination, status, reference, updated_at)
       SELECT gen_random_uuid(), id, 'KE', 'KES', 'MOBILEMONEY', '{}', 'active', 'bench-ben-' || id, now() FROM c
       RETURNING id, customer_id),
     h AS (
       INSERT INTO card_holders (id, customer_id, id_type, id_number, first_name, last_name, phone, address, status, updated_at)
       SELECT gen_random_uuid(), id, 'PASSPORT', 'A1', 'Bench', 'Holder', '8012345678', '{}', 'active', now()
       FROM c WHERE ('x' || substr(id::text, 1, 8))::bit(32)::int % 5 < 2 RETURNING id, customer_id),
     k AS (
       INSERT INTO cards (id, customer_id, card_holder_id, brand, type, status, reference, updated_at)
       SELECT gen_random_uuid(), customer_id, id, 'VISA', 'virtual', 'active', 'bench-card-' || id, now() FROM h
       RETURNING id, customer_id)
     SELECT b.customer_id, b.id AS beneficiary_id, k.id AS card_id FROM b LEFT JOIN k USING (customer_id)`,
    [CUSTOMERS],
  );
  return rows.map((r) => ({ customerId: r.customer_id, beneficiaryId: r.beneficiary_id, cardId: r.card_id }));
}

/** COPY text lines for the ledger, in created_at order (a ledger is appended to over time). */
async function* ledgerLines(parties: Party[], onRows: (n: number) => void): AsyncGenerator<string> {
  const step = (END - START) / ROWS;
  const batch: string[] = [];
  for (let i = 0; i < ROWS; i++) {
    const kind = pick(KINDS);
    const status = pick(STATUSES);
    const currency = pick(CURRENCIES);
    const party = parties[Math.floor(random() * parties.length)];
    const isCard = kind.startsWith('card_');
    const crossBorder = kind === 'payout' || kind === 'swap';
    const amount = 100 + Math.floor(random() * 10_000_000);
    const createdAt = new Date(START + i * step + random() * step);
    const completedAt = FINAL.has(status) ? new Date(createdAt.getTime() + 60_000).toISOString() : '\\N';
    const description = i % 50 === 0 ? 'Invoice 42, "final"' : `Invoice ${i % 10_000}`;
    batch.push(
      [
        randomUUID(),
        kind,
        DIRECTION[kind],
        status,
        amount,
        Math.floor(amount / 100),
        currency,
        crossBorder ? Math.floor(amount * 1.29) : '\\N',
        crossBorder ? 'KES' : '\\N',
        crossBorder ? '1.29' : '\\N',
        party.customerId,
        kind === 'payout' ? party.beneficiaryId : '\\N',
        isCard && party.cardId ? party.cardId : '\\N',
        status === 'created' ? '\\N' : `bench-prov-${i}`,
        `bench-ref-${i}`,
        description,
        createdAt.toISOString(),
        createdAt.toISOString(),
        completedAt,
      ].join('\t'),
    );
    if (batch.length === 2_000 || i === ROWS - 1) {
      yield `${batch.join('\n')}\n`;
      onRows(batch.length);
      batch.length = 0;
    }
  }
}

async function seedLedger(sql: Client, parties: Party[]): Promise<number> {
  const started = Date.now();
  const bar = new SingleBar(
    {
      format: 'seeding ledger [{bar}] {percentage}% | {value}/{total} rows | {duration}s',
      hideCursor: true,
      // Also when the output is a file or a pipe: a line every 5 s.
      noTTYOutput: true,
      notTTYSchedule: 5000,
    },
    Presets.shades_classic,
  );
  bar.start(ROWS, 0);
  const copy = sql.query(
    copyFrom(
      `COPY transactions (id, kind, direction, status, amount, fee, currency, counter_amount, counter_currency,
        exchange_rate, customer_id, beneficiary_id, card_id, provider_id, reference, description, created_at,
        updated_at, completed_at) FROM STDIN`,
    ),
  );
  let done = 0;
  await pipeline(Readable.from(ledgerLines(parties, (n) => bar.update((done += n)))), copy);
  bar.stop();
  process.stdout.write('status history (INSERT … SELECT)…\n');
  await sql.query(
    `INSERT INTO transaction_status_changes (transaction_id, "from", "to", source, at)
     SELECT id, NULL::"TransactionStatus", 'created'::"TransactionStatus", 'api'::"StatusChangeSource", created_at FROM transactions
     UNION ALL
     SELECT id, 'created', status, 'webhook', coalesce(completed_at, created_at) FROM transactions WHERE status <> 'created'`,
  );
  process.stdout.write('VACUUM ANALYZE…\n');
  await sql.query('VACUUM ANALYZE transactions');
  await sql.query('VACUUM ANALYZE transaction_status_changes');
  return (Date.now() - started) / 1000;
}

/** EXPLAIN ANALYZE of a statement, indented, to show which index answers it. */
async function explain(sql: Client, title: string, text: string, values: unknown[]): Promise<string> {
  const { rows } = await sql.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, COSTS OFF, BUFFERS) ${text}`, values);
  return [`-- ${title}`, ...rows.map((r) => `   ${r['QUERY PLAN']}`)].join('\n');
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

/** One GET with the body read to the end; returns [ms, status, body]. */
function timedGet(url: string, headers: Record<string, string>): Promise<[number, number, string]> {
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve([
          Number(process.hrtime.bigint() - started) / 1e6,
          res.statusCode ?? 0,
          Buffer.concat(chunks).toString(),
        ]),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

interface Latency {
  name: string;
  samples: number;
  p50: number;
  p95: number;
  max: number;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/**
 * Runs `url(i)` one request at a time (after a warm-up of 10% as many) and summarises latencies;
 * `onBody` sees each answer (to follow a cursor).
 */
async function sequential(
  name: string,
  count: number,
  url: (i: number) => string,
  headers: Record<string, string>,
  onBody?: (body: string) => void,
): Promise<Latency> {
  for (let i = 0; i < Math.ceil(count / 10); i++) await timedGet(url(count + i), headers);
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const target = url(i);
    const [ms, status, body] = await timedGet(target, headers);
    if (status !== 200) throw new Error(`${name}: HTTP ${status} for ${target}: ${body.slice(0, 300)}`);
    times.push(ms);
    onBody?.(body);
  }
  times.sort((a, b) => a - b);
  return { name, samples: count, p50: percentile(times, 50), p95: percentile(times, 95), max: times[times.length - 1] };
}

/** GET /v1/transactions/{id} flat out through bench/load.ts (10 connections), rotating over `ids`, with `pid`'s CPU per request. */
async function byIdFlatOut(
  name: string,
  origin: string,
  ids: string[],
  headers: Record<string, string>,
  seconds: number,
  pid: number,
): Promise<FlatOutResult & { cpuPerRequestUs: number }> {
  let n = 0;
  return withCpu(pid, () =>
    flatOut({
      name,
      origin,
      connections: 10,
      seconds,
      requests: [
        {
          method: 'GET',
          headers,
          setupRequest: (req) => ({ ...req, path: `/v1/transactions/${ids[n++ % ids.length]}` }),
        },
      ],
    }),
  );
}

function rssMb(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0);
  return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
}

/** Streams the whole export, sampling the gateway's RSS; returns seconds, rows, MB and the peak RSS. */
async function exportAll(
  origin: string,
  headers: Record<string, string>,
  gatewayPid: number,
): Promise<{ seconds: number; rows: number; mb: number; peakRss: number; rssBefore: number }> {
  const rssBefore = rssMb(gatewayPid).rss;
  let peakRss = rssBefore;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssMb(gatewayPid).rss)), 50);
  const started = process.hrtime.bigint();
  try {
    return await new Promise((resolve, reject) => {
      const req = request(`${origin}/v1/transactions/export`, { headers }, (res) => {
        if (res.statusCode !== 200) return reject(new Error(`export: HTTP ${res.statusCode}`));
        let bytes = 0;
        let lines = 0;
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
        });
        res.on('end', () =>
          resolve({
            seconds: Number(process.hrtime.bigint() - started) / 1e9,
            // Every record ends with CRLF; one seeded description in 50 has no line break, so lines - 1 = rows.
            rows: lines - 1,
            mb: bytes / 1024 / 1024,
            peakRss,
            rssBefore,
          }),
        );
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });
  } finally {
    clearInterval(sampler);
  }
}

async function main(): Promise<void> {
  const stack = await startStack({ name: 'finance' });
  const cleanup: Array<() => unknown> = [];
  try {
    const { sql, origin } = stack;
    const auth = { authorization: `Bearer ${stack.key}` };
    const parties = await seedParties(sql);
    const seedSeconds = await seedLedger(sql, parties);
    const [{ n: total }] = (await sql.query<{ n: number }>('SELECT count(*)::int AS n FROM transactions')).rows;
    const size = (await sql.query<{ s: string }>("SELECT pg_size_pretty(pg_total_relation_size('transactions')) AS s"))
      .rows[0].s;

    // Keyset positions spread over the ledger (OFFSET here is the bench picking start points, not the API).
    const positions: Array<{ created_at: Date; id: string }> = [];
    for (let k = 0; k < 20; k++) {
      const offset = Math.floor(((k + 0.5) / 20) * (total - 1));
      positions.push(
        (
          await sql.query<{ created_at: Date; id: string }>(
            'SELECT created_at, id FROM transactions ORDER BY created_at DESC, id DESC OFFSET $1 LIMIT 1',
            [offset],
          )
        ).rows[0],
      );
    }
    const deepCursors = positions.map((p) => encodeCursor({ createdAt: p.created_at, id: p.id }));
    const middle = positions[10];
    const customer = parties[0].customerId;
    const monthFrom = new Date(END - 60 * DAY);
    const monthTo = new Date(END - 30 * DAY);

    const plans = [
      await explain(
        sql,
        'list: status=pending, newest first',
        ...stmt(listStatement({ status: 'pending' }, 'desc', undefined, 50)),
      ),
      await explain(sql, 'list: currency=GHS', ...stmt(listStatement({ currency: 'GHS' }, 'desc', undefined, 50))),
      await explain(sql, 'list: customerId', ...stmt(listStatement({ customerId: customer }, 'desc', undefined, 50))),
      await explain(
        sql,
        'list: one-day date range',
        ...stmt(
          listStatement({ from: new Date(END - 100 * DAY), to: new Date(END - 99 * DAY) }, 'desc', undefined, 50),
        ),
      ),
      await explain(
        sql,
        'list: deep cursor (middle of the ledger)',
        ...stmt(listStatement({}, 'desc', { createdAt: middle.created_at, id: middle.id }, 50)),
      ),
      await explain(
        sql,
        'list: deep cursor with status=success, oldest first',
        ...stmt(listStatement({ status: 'success' }, 'asc', { createdAt: middle.created_at, id: middle.id }, 50)),
      ),
      await explain(
        sql,
        'list: amount band (amountMin..amountMax, 0.01% of rows)',
        ...stmt(listStatement({ amountMin: 5_000_000n, amountMax: 5_001_000n }, 'desc', undefined, 50)),
      ),
      await explain(sql, 'summary: one month', ...stmt(summaryStatement({ from: monthFrom, to: monthTo }))),
    ];

    const statuses = STATUSES.map(([s]) => s);
    const currencies = CURRENCIES.map(([c]) => c);
    const q = (params: string) => `${origin}/v1/transactions?limit=50&${params}`;
    // Warm-up: JIT, prepared statements on every pooled connection, caches.
    for (let i = 0; i < 300; i++) {
      const params =
        i % 3 === 0 ? '' : i % 3 === 1 ? `status=${statuses[i % statuses.length]}` : `cursor=${deepCursors[i % 20]}`;
      await timedGet(q(params), auth);
    }
    const latencies: Latency[] = [];
    latencies.push(await sequential('first page, no filter', SAMPLES, () => q(''), auth));
    latencies.push(
      await sequential('status=<random>', SAMPLES, (i) => q(`status=${statuses[i % statuses.length]}`), auth),
    );
    latencies.push(
      await sequential('currency=<random>', SAMPLES, (i) => q(`currency=${currencies[i % currencies.length]}`), auth),
    );
    latencies.push(
      await sequential(
        'customerId=<random>',
        SAMPLES,
        (i) => q(`customerId=${parties[(i * 7919) % parties.length].customerId}`),
        auth,
      ),
    );
    latencies.push(
      await sequential(
        'one-day from/to <random day>',
        SAMPLES,
        (i) => {
          const day = START + ((i * 37) % 364) * DAY;
          return q(`from=${new Date(day).toISOString()}&to=${new Date(day + DAY).toISOString()}`);
        },
        auth,
      ),
    );
    latencies.push(
      await sequential(
        'amount band <random>, 0.01% of rows',
        SAMPLES,
        (i) => {
          const low = 100 + ((i * 104_729) % 9_990_000);
          return q(`amountMin=${low}&amountMax=${low + 1000}`);
        },
        auth,
      ),
    );
    latencies.push(
      await sequential(
        'deep cursor pages (20 depths)',
        SAMPLES,
        (i) => q(`cursor=${deepCursors[i % deepCursors.length]}`),
        auth,
      ),
    );
    latencies.push(
      await sequential(
        'deep cursor, status=success, asc',
        SAMPLES,
        (i) => q(`status=success&order=asc&cursor=${deepCursors[i % deepCursors.length]}`),
        auth,
      ),
    );
    // Walking on from one cursor to the next, as a client paging through does (after the warm-up, from the top).
    let walkCursor: string | null = null;
    latencies.push(
      await sequential(
        `walk: ${SAMPLES} consecutive pages`,
        SAMPLES,
        () => q(walkCursor ? `cursor=${walkCursor}` : ''),
        auth,
        (body) => (walkCursor = (JSON.parse(body) as { nextCursor: string | null }).nextCursor),
      ),
    );

    const summary = await sequential(
      'summary: one month',
      20,
      (i) => {
        const to = END - (i % 12) * 30 * DAY;
        return `${origin}/v1/transactions/summary?from=${new Date(to - 30 * DAY).toISOString()}&to=${new Date(to).toISOString()}`;
      },
      auth,
    );

    process.stdout.write('exporting every row as CSV…\n');
    const exported = await exportAll(origin, auth, stack.pids.gateway);

    // get-by-id: gateway vs the raw baseline, same ids, same load.
    const baseline = await startRawBaseline(stack);
    cleanup.push(() => baseline.stop());
    const baseOrigin = baseline.origin;
    const ids = (
      await sql.query<{ id: string }>('SELECT id FROM transactions TABLESAMPLE SYSTEM (1) LIMIT 1000')
    ).rows.map((r) => r.id);
    const check = await timedGet(`${baseOrigin}/v1/transactions/${ids[0]}`, {});
    if (check[1] !== 200) throw new Error(`baseline answered ${check[1]}`);
    const gwPid = stack.pids.gateway;
    await byIdFlatOut('warm-up', origin, ids, auth, 3, gwPid);
    const window = { fromUs: monotonicMicros(), toUs: 0 };
    const gatewayById = await byIdFlatOut('gateway  GET /v1/transactions/{id}', origin, ids, auth, SECONDS, gwPid);
    window.toUs = monotonicMicros();
    await byIdFlatOut('warm-up', baseOrigin, ids, {}, 3, baseline.pid);
    const rawById = await byIdFlatOut('raw fastify+pg (same query)', baseOrigin, ids, {}, SECONDS, baseline.pid);

    const f = (n: number) => n.toFixed(2);
    const met = (ok: boolean) => (ok ? 'met' : 'NOT MET');
    const worstListP95 = Math.max(...latencies.map((l) => l.p95));
    const ratio = gatewayById.rps / rawById.rps;
    const out = [
      '',
      `finance benchmark: ${total.toLocaleString('en')} ledger rows (${size}), ${parties.length} customers, node ${process.version}`,
      `seeded in ${seedSeconds.toFixed(1)} s (COPY + history + VACUUM ANALYZE)`,
      '',
      'query plans:',
      ...plans,
      '',
      `list pages through the gateway (limit 50, one request at a time, ${SAMPLES} samples each), ms:`,
      ...latencies.map(
        (l) =>
          `  ${l.name.padEnd(36)} p50 ${f(l.p50).padStart(7)}  p95 ${f(l.p95).padStart(7)}  max ${f(l.max).padStart(8)}`,
      ),
      `  worst p95 ${f(worstListP95)} ms (target ≤ 15): ${met(worstListP95 <= 15)}`,
      '',
      `summary of a month (~${Math.round(total / 12).toLocaleString('en')} rows), 20 samples: p50 ${f(summary.p50)} ms, p95 ${f(summary.p95)} ms, max ${f(summary.max)} ms (target ≤ 300): ${met(summary.max <= 300)}`,
      '',
      `CSV export of every row: ${exported.rows.toLocaleString('en')} rows, ${exported.mb.toFixed(0)} MB in ${exported.seconds.toFixed(1)} s ` +
        `(${Math.round(exported.rows / exported.seconds).toLocaleString('en')} rows/s) (target ≤ 20 s): ${met(exported.seconds <= 20)}`,
      `  gateway RSS: ${exported.rssBefore.toFixed(0)} MB before, peak ${exported.peakRss.toFixed(0)} MB during (target ≤ 250): ${met(exported.peakRss <= 250)}`,
      '',
      `GET /v1/transactions/{id}, flat out, 10 connections, ${SECONDS} s, 1000 ids:`,
      ...[gatewayById, rawById].map(
        (r) =>
          `  ${r.name.padEnd(36)} ${r.rps.toFixed(0).padStart(6)} req/s  p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms  cpu ${r.cpuPerRequestUs.toFixed(0)} µs/req  non-2xx ${r.non2xx}  errors ${r.errors}`,
      ),
      `  ratio gateway/raw ${ratio.toFixed(2)} (target ≥ 0.60): ${met(ratio >= 0.6)}; CPU per request gateway/raw ${(gatewayById.cpuPerRequestUs / rawById.cpuPerRequestUs).toFixed(2)}`,
      '',
    ];
    process.stdout.write(out.join('\n'));
    process.stdout.write(await whereTheTimeGoes(stack, window, ratio < 0.6));
    if (exported.rows !== total) throw new Error(`export had ${exported.rows} rows, the ledger ${total}`);
    if ([gatewayById, rawById].some((r) => r.non2xx > 0 || r.errors > 0))
      throw new Error('non-2xx or errors in get-by-id');
  } finally {
    for (const fn of cleanup.reverse()) await fn();
    await stack.stop();
  }
}

function stmt(s: { text: string; values: unknown[] }): [string, unknown[]] {
  return [s.text, s.values];
}

runBench(main);
