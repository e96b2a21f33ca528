/**
 * `npm run bench:soak`: mixed API traffic under concurrency while the simulator sends callbacks,
 * then a reconciliation of the simulator's records against the gateway's ledger.
 *
 * BENCH_CLIENTS (default 200) concurrent clients for BENCH_SECONDS (default 60) each loop through:
 * read a customer, create + confirm a payout, quote + execute a swap, top up a card, read the
 * transaction history. The simulator completes every confirmed payout by itself after 200 ms
 * (amounts whose major part ends in 13 fail, by design) and settles card top-ups after 300 ms,
 * each with a signed callback to the gateway. When the load stops, the run waits for the
 * callbacks and the gateway's inbox to settle, then compares, movement by movement:
 *   - lost: a movement the simulator holds with no ledger row, or whose final status differs;
 *   - doubled: two simulator movements for one ledger row or reference, or a ledger row applied twice;
 * and prints them with the count of 5xx answers. All three must be 0.
 * The measured run follows a warm-up of BENCH_WARMUP_SECONDS (default 5) of the same clients and
 * mix, on the same connections (one autocannon run; bench/load.ts `flatOut` `warmupSeconds`): its
 * answers are not counted in the latencies, rates or CPU, but a 5xx in it fails the run, and its
 * movements are reconciled with the rest. Without a warm-up the 200 clients' first requests, all at
 * once on a cold gateway (JIT, pool connections being opened), took 0.5–3.6 s; with a warm-up on
 * new connections (a second autocannon run), each client's first request of the measured run still
 * took up to 2.8 s: 200 connections opened at once on a gateway already at full CPU.
 * The load goes through bench/load.ts `flatOut` (each connection a client looping through the
 * steps, the next request sent when the previous answer is back); it prints req/s, p50/p99 of all
 * answers against the target p99 ≤ 500 ms, each step's p50/p90/p99, and the gateway's CPU µs per
 * request (/proc), and where the whole machine's CPU went per request (gateway, simulator,
 * PostgreSQL, the load generator, the rest: bench/cpu-budget.ts). BENCH_PROFILE=1: the gateway runs under `--cpu-prof` and its top frames during
 * the load are printed.
 */
import 'dotenv/config';
import { randomUUID } from 'node:crypto';
import { budgetTable, cpuBudget, cpuSnapshot } from './cpu-budget';
import { flatOut, type SequenceStep, stepTable } from './load';
import { monotonicMicros, whereTheTimeGoes } from './profile';
import { activeCard, api, kenyanBeneficiary } from './seed';
import { runBench, startStack } from './stack';

const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 200);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 60);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 5);
/** Target on 2 cores: p99 of every answer ≤ 500 ms. */
const P99_TARGET_MS = 500;

/** What one client remembers between the steps of its loop (autocannon's per-connection context). */
interface Flow {
  payoutId?: string;
  quoteId?: string;
}

/** The steps of one client's loop, in order. */
const STEP_NAMES = ['read customer', 'create payout', 'confirm payout', 'swap quote', 'swap', 'card top-up', 'history'];

/** First non-2xx answer of each step, to show why a step fails. */
const samples = new Map<string, string>();

/** Names each step and wraps its onResponse to keep a sample of its first non-2xx answer. */
function sampled(names: string[], steps: SequenceStep[]): SequenceStep[] {
  return steps.map((step, i) => ({
    ...step,
    name: names[i],
    onResponse: (status: number, body: string, context: Flow) => {
      if (status >= 300 && !samples.has(names[i])) samples.set(names[i], `${status} ${body.slice(0, 200)}`);
      (step.onResponse as ((s: number, b: string, c: Flow) => void) | undefined)?.(status, body, context);
    },
  }));
}

interface SimRecord {
  id: string;
  kind: string;
  reference: string | null;
  status: string;
  amount: string;
  currency: string;
}

async function main(): Promise<void> {
  const stack = await startStack({
    name: 'soak',
    simulatorEnv: { SIMULATOR_PAYOUT_COMPLETE_DELAY_MS: '200', SIMULATOR_CARD_TXN_SETTLE_DELAY_MS: '300' },
    gatewayEnv: { RATE_LIMIT_PER_MINUTE: '100000000' },
  });
  try {
    const { origin, key, sql } = stack;
    // One customer with a beneficiary and an active card, through the API.
    const customer = await api<{ id: string }>(origin, key, 'POST', '/v1/customers', {
      email: 'soak@example.com',
      firstName: 'Soak',
      lastName: 'Test',
      phone: '712345678',
      countryCode: '+254',
    });
    const beneficiary = await kenyanBeneficiary(origin, key, customer.id);
    const card = await activeCard(origin, key, customer.id);

    const auth = { authorization: `Bearer ${key}` };
    const json = { ...auth, 'content-type': 'application/json' };
    const withKey = (req: SequenceStep, extra: Partial<SequenceStep>) => ({
      ...req,
      ...extra,
      headers: { ...(extra.body ? json : auth), 'idempotency-key': randomUUID() },
    });
    const amount = () => 500 + Math.floor(Math.random() * 2000);
    const idOf = (body: string) => (JSON.parse(body) as { id: string }).id;
    process.stdout.write(`soak: ${CLIENTS} clients, ${WARMUP_SECONDS} s warm-up then ${SECONDS} s measured…\n`);
    const requests = sampled(STEP_NAMES, [
      { method: 'GET', path: `/v1/customers/${customer.id}`, headers: auth },
      {
        method: 'POST',
        path: '/v1/payouts',
        setupRequest: (req) =>
          withKey(req, {
            body: JSON.stringify({
              customerId: customer.id,
              beneficiaryId: beneficiary.id,
              amount: amount(),
              description: 'soak',
            }),
          }),
        onResponse: (status: number, body: string, context: Flow) => {
          context.payoutId = status < 300 ? idOf(body) : undefined;
        },
      },
      {
        method: 'POST',
        setupRequest: (req: SequenceStep, context: Flow) =>
          withKey(req, {
            path: context.payoutId ? `/v1/payouts/${context.payoutId}/confirm` : '/v1/payouts/none/confirm',
          }),
      },
      {
        method: 'POST',
        path: '/v1/swap-quotes',
        setupRequest: (req) =>
          withKey(req, { body: JSON.stringify({ sourceCurrency: 'USD', targetCurrency: 'NGN', amount: amount() }) }),
        onResponse: (status: number, body: string, context: Flow) => {
          context.quoteId = status < 300 ? idOf(body) : undefined;
        },
      },
      {
        method: 'POST',
        path: '/v1/swaps',
        setupRequest: (req: SequenceStep, context: Flow) =>
          withKey(req, { body: JSON.stringify({ quoteId: context.quoteId ?? randomUUID() }) }),
      },
      {
        method: 'POST',
        path: `/v1/cards/${card.id}/top-ups`,
        setupRequest: (req) =>
          withKey(req, { body: JSON.stringify({ amount: 300 + Math.floor(Math.random() * 700) }) }),
      },
      { method: 'GET', path: '/v1/transactions?limit=20', headers: auth },
    ]);
    // One autocannon run: the warm-up and the measured run share the clients' connections, as clients
    // behind a load balancer keep theirs; the measured figures count requests sent after the warm-up.
    const window = { fromUs: 0, toUs: 0 };
    let cpuBefore = cpuSnapshot(stack.pids);
    const result = await flatOut({
      name: 'soak',
      origin,
      requests,
      warmupSeconds: WARMUP_SECONDS,
      seconds: SECONDS,
      connections: CLIENTS,
      timeoutSeconds: 30,
      onMeasureStart: () => {
        window.fromUs = monotonicMicros();
        cpuBefore = cpuSnapshot(stack.pids);
      },
    });
    const cpuAfter = cpuSnapshot(stack.pids);
    window.toUs = monotonicMicros();
    const cpuPerRequestUs = (cpuAfter.gateway - cpuBefore.gateway) / Math.max(1, result.requests);
    const statuses = new Map(Object.entries(result.statuses).map(([s, n]) => [Number(s), n]));

    // Settle: requests the gateway was still working on when the load stopped (rows written ahead,
    // `created`), the simulator's pending completions and callbacks, then the gateway's inbox.
    process.stdout.write('load done; waiting for callbacks to settle…\n');
    const settleBy = Date.now() + 120_000;
    const flush = () => fetch(`${stack.simOrigin}/__admin/flush`, { method: 'POST' });
    for (;;) {
      // The setup's last call to the simulator was about 70 s ago: its kept-alive connection can be
      // closed by the simulator (Fastify's 72 s keep-alive) just as this request goes out on it
      // ("other side closed", seen twice): a flush is safe to send again, on a new connection.
      await flush().catch(flush);
      const open = Number(
        (
          await sql.query<{ n: string }>(
            `SELECT (SELECT count(*) FROM webhook_events WHERE outcome = 'pending')
                  + (SELECT count(*) FROM transactions WHERE status IN ('created', 'pending', 'processing')) AS n`,
          )
        ).rows[0].n,
      );
      if (open === 0 || Date.now() > settleBy) break;
      await new Promise((r) => setTimeout(r, 500));
    }

    const simRecords = ((await (await fetch(`${stack.simOrigin}/__admin/records`)).json()) as { records: SimRecord[] })
      .records;
    const ledger = (
      await sql.query<{
        id: string;
        kind: string;
        status: string;
        reference: string;
        provider_id: string | null;
        amount: string;
      }>(`SELECT id, kind, status, reference, provider_id, amount::text FROM transactions`)
    ).rows;
    const byProviderId = new Map(ledger.filter((r) => r.provider_id).map((r) => [r.provider_id as string, r]));
    const byReference = new Map(ledger.map((r) => [r.reference, r]));
    const finalOf = (status: string) => status.toLowerCase();
    let lost = 0;
    let doubled = 0;
    let compared = 0;
    const seen = new Map<string, number>();
    const examples: string[] = [];
    for (const record of simRecords) {
      if (record.kind === 'collection') continue; // none in this mix
      const row = byProviderId.get(record.id) ?? (record.reference ? byReference.get(record.reference) : undefined);
      if (!row) {
        lost += 1;
        if (examples.length < 5) examples.push(`no ledger row for simulator ${record.kind} ${record.id}`);
        continue;
      }
      compared += 1;
      seen.set(row.id, (seen.get(row.id) ?? 0) + 1);
      if (finalOf(record.status) !== row.status) {
        lost += 1;
        if (examples.length < 5)
          examples.push(`${record.kind} ${row.id}: simulator ${record.status}, ledger ${row.status}`);
      }
    }
    doubled += [...seen.values()].filter((n) => n > 1).length;
    doubled += Number(
      (
        await sql.query<{ n: string }>(
          `SELECT count(*) AS n FROM (SELECT transaction_id, "to" FROM transaction_status_changes
            GROUP BY transaction_id, "to" HAVING count(*) > 1) d`,
        )
      ).rows[0].n,
    );
    const fivexx = [...statuses, ...Object.entries(result.warmupStatuses).map(([s, n]) => [Number(s), n] as const)]
      .filter(([s]) => s >= 500)
      .reduce((n, [, c]) => n + c, 0);
    const kinds = Object.entries(
      ledger.reduce<Record<string, number>>(
        (acc, r) => ({ ...acc, [`${r.kind}/${r.status}`]: (acc[`${r.kind}/${r.status}`] ?? 0) + 1 }),
        {},
      ),
    )
      .map(([k, n]) => `${k} ${n}`)
      .join(', ');
    const out = [
      '',
      `soak: ${CLIENTS} clients, ${SECONDS} s after ${WARMUP_SECONDS} s of warm-up, flat out through bench/load.ts, node ${process.version}`,
      `requests: ${result.requests} (${result.rps.toFixed(0)} req/s), latency ms p50 ${result.p50.toFixed(1)} p99 ${result.p99.toFixed(1)} (target ≤ ${P99_TARGET_MS}: ${result.p99 <= P99_TARGET_MS ? 'met' : 'MISSED'}), errors and timeouts ${result.errors}`,
      `gateway CPU: ${cpuPerRequestUs.toFixed(0)} µs per request (/proc, the gateway process alone)`,
      '',
      stepTable(result.steps),
      '',
      `answers by status: ${[...statuses]
        .sort(([a], [b]) => a - b)
        .map(([s, n]) => `${s}×${n}`)
        .join(' ')}`,
      `ledger: ${ledger.length} rows (${kinds})`,
      `simulator movements compared: ${compared} of ${simRecords.length}`,
      `5xx: ${fivexx}   lost: ${lost}   doubled: ${doubled}   (all must be 0)`,
      ...examples.map((e) => `  e.g. ${e}`),
      ...[...samples].map(([step, answer]) => `  first non-2xx of ${step}: ${answer}`),
      '',
      budgetTable(cpuBudget(cpuBefore, cpuAfter, result.requests), 'request'),
    ];
    process.stdout.write(out.join('\n'));
    process.stdout.write(await whereTheTimeGoes(stack, window, result.p99 > P99_TARGET_MS));
    if (fivexx || lost || doubled) throw new Error('soak found 5xx answers, lost or doubled movements');
  } finally {
    await stack.stop();
  }
}

runBench(main);
