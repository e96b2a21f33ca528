/**
 * `npm run bench:payouts`: payout create + confirm flat out, against the provider's own cost.
 *
 * Method: starts the bench stack (fresh database, simulator, compiled gateway with
 * NODE_ENV=production); the simulator answers at once (no latency fault, no automatic completion:
 * confirmed payouts stay `pending`, so no callback competes for the CPU). Creates a customer and a
 * Kenyan beneficiary through the API. Before each run (warm-up included) it funds the simulator's USD
 * wallet with 10 million USD (POST /__admin/wallets/USD/fund), so that neither run is refused for the
 * balance the other spent. Then, each flat out (bench/load.ts `flatOut`,
 * BENCH_CLIENTS connections, default 32) for BENCH_SECONDS (default 20) after a 2 s warm-up, each
 * connection looping through two steps:
 *   1. the baseline: the simulator's own POST /api/v1/wallets/payout/initialize then
 *      /wallets/payout/finalize, called directly (the provider's cost of one payout);
 *   2. the gateway: POST /v1/payouts then POST /v1/payouts/{id}/confirm (each with its own
 *      Idempotency-Key), so every payout is written ahead, initialized, claimed and finalized.
 * Prints payouts/s (confirmed 2xx per second; target on 2 cores ≥ 300/s) and its ratio to the
 * baseline, p50/p99 of each step, and the CPU µs per payout of the gateway and of the simulator
 * (/proc/<pid>/stat), and where the whole machine's CPU went per payout during the gateway's run
 * (gateway, simulator, PostgreSQL, the load generator, the rest; bench/cpu-budget.ts) with the
 * ceiling that budget allows on this machine's cores. Then compares the simulator's payout records with the ledger, as
 * `bench:soak` does: lost (a simulator payout with no ledger row, or another status) and doubled
 * (two simulator payouts for one ledger row, or a status change applied twice) must both be 0, and
 * so must 5xx answers. BENCH_PROFILE=1: the gateway runs under `--cpu-prof` and its top frames
 * during the measured run are printed.
 */
import 'dotenv/config';
import { randomUUID } from 'node:crypto';
import { budgetTable, cpuBudget, type CpuSnapshot, cpuSnapshot } from './cpu-budget';
import { flatOut, type FlatOutResult, runTable, type SequenceStep, stepTable } from './load';
import { monotonicMicros, whereTheTimeGoes } from './profile';
import { api } from './seed';
import { BENCH_PROVIDER_KEY, runBench, startStack } from './stack';

const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 32);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const TARGET = 300;
/** Every payout: 5.00 USD (fee 1.00): the simulator's 1,000,000 USD seed covers ~160,000 of them. */
const AMOUNT = 500;
/**
 * Minor units added to the simulator's USD wallet before each run (POST /__admin/wallets/USD/fund):
 * 10 million USD, ~1.6 million payouts. On a fast machine the baseline alone spends the seed (140,000
 * payouts in 20 s were seen), and the gateway's run then measured refusals ("Insufficient balance").
 */
const FUNDING = 1_000_000_000;
/** References of the baseline's payouts, left out of the ledger comparison. */
const BASE_PREFIX = 'bench-base-';

interface SimRecord {
  id: string;
  kind: string;
  reference: string | null;
  status: string;
}

/** What a connection remembers between the two steps (autocannon's per-connection context). */
interface Flow {
  id?: string;
}

const idOf = (body: string, inData: boolean): string | undefined => {
  try {
    const parsed = JSON.parse(body) as { id?: string; data?: { id?: string } };
    return inData ? parsed.data?.id : parsed.id;
  } catch {
    return undefined;
  }
};

async function main(): Promise<void> {
  const stack = await startStack({ name: 'payouts', gatewayEnv: { RATE_LIMIT_PER_MINUTE: '100000000' } });
  try {
    const { origin, key, sql, simOrigin } = stack;
    const email = 'payouts-bench@example.com';
    const customer = await api<{ id: string; providerId: string }>(origin, key, 'POST', '/v1/customers', {
      email,
      firstName: 'Payout',
      lastName: 'Bench',
      phone: '712345678',
      countryCode: '+254',
    });
    const beneficiary = await api<{ id: string; providerId: string }>(origin, key, 'POST', '/v1/beneficiaries', {
      customerId: customer.id,
      country: 'KE',
      currency: 'KES',
      destination: { type: 'MOBILEMONEY', network: 'MPESA', accountNumber: '254712345678' },
    });

    const json = { 'content-type': 'application/json' };
    const gatewaySteps = (): SequenceStep[] => [
      {
        name: 'gateway POST /v1/payouts',
        method: 'POST',
        path: '/v1/payouts',
        setupRequest: (request) => ({
          ...request,
          headers: { ...json, authorization: `Bearer ${key}`, 'idempotency-key': randomUUID() },
          body: JSON.stringify({
            customerId: customer.id,
            beneficiaryId: beneficiary.id,
            amount: AMOUNT,
            description: 'payouts bench',
          }),
        }),
        onResponse: (status: number, body: string, context: Flow) => {
          context.id = status < 300 ? idOf(body, false) : undefined;
        },
      },
      {
        name: 'gateway POST /v1/payouts/{id}/confirm',
        method: 'POST',
        // Nothing to confirm when the create failed: start the sequence over (counted as a reset).
        setupRequest: (request, context: Flow) =>
          context.id
            ? {
                ...request,
                path: `/v1/payouts/${context.id}/confirm`,
                headers: { authorization: `Bearer ${key}`, 'idempotency-key': randomUUID() },
              }
            : (undefined as unknown as typeof request),
      },
    ];
    const providerAuth = { ...json, authorization: `Bearer ${BENCH_PROVIDER_KEY}` };
    const simulatorSteps = (): SequenceStep[] => [
      {
        name: 'simulator initialize',
        method: 'POST',
        path: '/api/v1/wallets/payout/initialize',
        setupRequest: (request) => ({
          ...request,
          headers: providerAuth,
          body: JSON.stringify({
            amount: AMOUNT,
            reference: `${BASE_PREFIX}${randomUUID()}`,
            customerEmail: email,
            description: 'payouts bench baseline',
            beneficiaryId: beneficiary.providerId,
            sourceWalletCurrency: 'USD',
          }),
        }),
        onResponse: (status: number, body: string, context: Flow) => {
          context.id = status < 300 ? idOf(body, true) : undefined;
        },
      },
      {
        name: 'simulator finalize',
        method: 'POST',
        path: '/api/v1/wallets/payout/finalize',
        setupRequest: (request, context: Flow) =>
          context.id
            ? { ...request, headers: providerAuth, body: JSON.stringify({ transactionId: context.id }) }
            : (undefined as unknown as typeof request),
      },
    ];

    type Measured = FlatOutResult & { cpuPerRequestUs: number; cpu: { before: CpuSnapshot; after: CpuSnapshot } };
    /** The database's commit and row counters (pg_stat_database), to show the work behind each payout. */
    const dbCounters = async () =>
      (
        await sql.query<{ commits: string; inserted: string; updated: string; deleted: string }>(
          `SELECT xact_commit AS commits, tup_inserted AS inserted, tup_updated AS updated, tup_deleted AS deleted
           FROM pg_stat_database WHERE datname = current_database()`,
        )
      ).rows[0];
    const window = { fromUs: 0, toUs: 0 };
    let dbBefore: Awaited<ReturnType<typeof dbCounters>> | undefined;
    // The measured process (`measured`) is read from the same snapshots as the machine's budget.
    const run = async (
      name: string,
      o: string,
      steps: () => SequenceStep[],
      measured: 'simulator' | 'gateway',
    ): Promise<Measured> => {
      const funded = await fetch(`${simOrigin}/__admin/wallets/USD/fund`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ amount: FUNDING }),
      });
      if (!funded.ok) throw new Error(`funding the simulator's USD wallet answered ${funded.status}`);
      await flatOut({ name: 'warm-up', origin: o, requests: steps(), seconds: 2, connections: CLIENTS });
      await new Promise((r) => setTimeout(r, 1100));
      dbBefore = await dbCounters();
      window.fromUs = monotonicMicros();
      const before = cpuSnapshot(stack.pids);
      const result = await flatOut({ name, origin: o, requests: steps(), seconds: SECONDS, connections: CLIENTS });
      const after = cpuSnapshot(stack.pids);
      window.toUs = monotonicMicros();
      const cpuPerRequestUs = result.requests ? (after[measured] - before[measured]) / result.requests : 0;
      return { ...result, cpuPerRequestUs, cpu: { before, after } };
    };
    process.stdout.write(`payouts: ${CLIENTS} clients, ${SECONDS} s each: the simulator directly, then the gateway…\n`);
    const base = await run('simulator initialize + finalize', simOrigin, simulatorSteps, 'simulator');
    const gateway = await run('gateway create + confirm', origin, gatewaySteps, 'gateway');
    // Requests cut off by the end of the run still finish in the gateway: let them land before comparing
    // (rows written ahead, or claimed for confirmation, still waiting for the provider's answer), and
    // PostgreSQL flush its statistics (at most once a second).
    const settleBy = Date.now() + 60_000;
    do await new Promise((r) => setTimeout(r, 1100));
    while (
      Date.now() < settleBy &&
      Number(
        (
          await sql.query<{ n: string }>(
            `SELECT count(*) AS n FROM transactions WHERE kind = 'payout'
               AND (status = 'created' OR (status = 'initiated' AND confirm_requested_at IS NOT NULL))`,
          )
        ).rows[0].n,
      ) > 0
    );
    const dbAfter = await dbCounters();

    // Payouts: confirmed (2xx on the second step) per second; CPU per payout = CPU per request × 2.
    const payouts = (r: Measured) => r.steps[1].requests - r.steps[1].non2xx;
    const perSecond = (r: Measured) => payouts(r) / r.seconds;
    const cpuPerPayout = (r: Measured) => (r.cpuPerRequestUs * r.requests) / Math.max(1, payouts(r));

    // Lost / doubled: every simulator payout of the gateway's (baseline references left out) against the ledger.
    const simRecords = (
      (await (await fetch(`${simOrigin}/__admin/records`)).json()) as { records: SimRecord[] }
    ).records.filter((r) => r.kind === 'payout' && !r.reference?.startsWith(BASE_PREFIX));
    const ledger = (
      await sql.query<{ id: string; status: string; reference: string; provider_id: string | null }>(
        `SELECT id, status, reference, provider_id FROM transactions WHERE kind = 'payout'`,
      )
    ).rows;
    const byProviderId = new Map(ledger.filter((r) => r.provider_id).map((r) => [r.provider_id as string, r]));
    const byReference = new Map(ledger.map((r) => [r.reference, r]));
    let lost = 0;
    const seen = new Map<string, number>();
    const examples: string[] = [];
    for (const record of simRecords) {
      const row = byProviderId.get(record.id) ?? (record.reference ? byReference.get(record.reference) : undefined);
      if (!row || row.status !== record.status.toLowerCase()) {
        lost += 1;
        if (examples.length < 5)
          examples.push(
            row ? `${row.id}: simulator ${record.status}, ledger ${row.status}` : `no ledger row for ${record.id}`,
          );
        continue;
      }
      seen.set(row.id, (seen.get(row.id) ?? 0) + 1);
    }
    const statusDoubles = Number(
      (
        await sql.query<{ n: string }>(
          `SELECT count(*) AS n FROM (SELECT transaction_id, "to" FROM transaction_status_changes
            GROUP BY transaction_id, "to" HAVING count(*) > 1) d`,
        )
      ).rows[0].n,
    );
    const doubled = [...seen.values()].filter((n) => n > 1).length + statusDoubles;
    const fivexx = [base, gateway]
      .flatMap((r) => Object.entries(r.statuses))
      .filter(([s]) => Number(s) >= 500)
      .reduce((n, [, c]) => n + c, 0);
    const byStatus = ledger.reduce<Record<string, number>>(
      (acc, r) => ({ ...acc, [r.status]: (acc[r.status] ?? 0) + 1 }),
      {},
    );
    const rate = perSecond(gateway);
    const out = [
      '',
      `payout benchmark: create + confirm flat out, ${CLIENTS} clients, ${SECONDS} s per run, simulator at 0 latency, node ${process.version}`,
      `baseline: the simulator's initialize + finalize called directly (the provider's own cost of a payout); cpu µs/req is the measured process's (simulator, then gateway)`,
      '',
      runTable([base, gateway], base),
      '',
      stepTable([...base.steps, ...gateway.steps]),
      '',
      `gateway: ${payouts(gateway)} payouts confirmed = ${rate.toFixed(0)} payouts/s (target ≥ ${TARGET}: ${rate >= TARGET ? 'met' : 'MISSED'}); ${(rate / perSecond(base)).toFixed(2)} × the simulator's ${perSecond(base).toFixed(0)} payouts/s`,
      `CPU per payout: gateway ${cpuPerPayout(gateway).toFixed(0)} µs, simulator alone ${cpuPerPayout(base).toFixed(0)} µs; create failures ${gateway.steps[0].non2xx}, confirm failures ${gateway.steps[1].non2xx}`,
      `database work per payout confirmed (pg_stat_database, warm-up excluded, includes the run's cut-off requests): ${(
        ['commits', 'inserted', 'updated', 'deleted'] as const
      )
        .map(
          (k) =>
            `${k} ${((Number(dbAfter[k]) - Number(dbBefore?.[k] ?? 0)) / Math.max(1, payouts(gateway))).toFixed(1)}`,
        )
        .join(', ')}`,
      `ledger payouts by status: ${Object.entries(byStatus)
        .map(([s, n]) => `${s} ${n}`)
        .join(', ')}; simulator payouts compared: ${simRecords.length}`,
      `5xx: ${fivexx}   lost: ${lost}   doubled: ${doubled}   (all must be 0)`,
      ...examples.map((e) => `  e.g. ${e}`),
      '',
      budgetTable(cpuBudget(gateway.cpu.before, gateway.cpu.after, payouts(gateway)), 'payout', TARGET),
    ];
    process.stdout.write(out.join('\n'));
    process.stdout.write(await whereTheTimeGoes(stack, window, rate < TARGET));
    if (fivexx || lost || doubled) throw new Error('payouts: 5xx answers, lost or doubled payouts');
  } finally {
    await stack.stop();
  }
}

runBench(main);
