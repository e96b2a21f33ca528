/**
 * `npm run bench:webhooks`: provider callbacks applied end to end (received → effect committed),
 * acknowledged, and exactly once.
 *
 * Seeds BENCH_EVENTS (default 20,000) pending payouts in a fresh database and signs one
 * `payout.transfer.success` callback per payout, plus BENCH_DUPLICATES (default 25 %) duplicates of
 * already-sent events mixed in (the provider retries). Through bench/load.ts `flatOut`
 * (BENCH_CONNECTIONS, default 64, callbacks always in flight, each sent once in that order):
 *   1. the baseline: a raw Fastify receiver (bench/raw-baseline.ts) that only checks the signature,
 *      parses the JSON and answers 200: what any receiver must do, with nothing stored or applied;
 *   2. the compiled gateway, while a sampler counts the inbox's `pending` events every 100 ms; then
 *      the run waits until nothing is pending.
 * Prints: the APPLIED rate (events whose effect committed / seconds from the first send to the
 * last `processed_at`; target on 2 cores ≥ 1,500 events/s), the acknowledged rate, each as a ratio
 * to the raw receiver's rate, the backlog's peak, the received → applied latency p50/p99 from the
 * inbox's own timestamps (`received_at` → `processed_at`, written after the effect commits), the
 * gateway's CPU µs per callback received and per event applied (/proc), and the exactly-once
 * checks: one inbox row per event, one `webhook` status change per payout, no other outcome.
 * BENCH_PROFILE=1: the gateway runs under `--cpu-prof` and its top frames during the run are printed.
 *
 * `--recovery` (`npm run bench:webhooks -- --recovery`): the restart after a crash instead. Seeds
 * BENCH_EVENTS pending payouts and as many inbox events left `pending` by a dead process (stored,
 * never applied), then starts the gateway with its jobs on: its start-up inbox recovery drains
 * them. Prints the recovery rate (events / span of their processed_at, and / time since the
 * gateway was started) and checks every event was applied exactly once. Target: ≥ 1,000 events/s.
 */
import 'dotenv/config';
import { createHmac, randomUUID } from 'node:crypto';
import type { Client } from 'pg';
import { cpuMicros, flatOut, type FlatOutResult, runTable, type SequenceStep, withCpu } from './load';
import { monotonicMicros, whereTheTimeGoes } from './profile';
import { BENCH_WEBHOOK_SECRET, runBench, startRawBaseline, startStack } from './stack';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 20_000);
const DUPLICATE_SHARE = Number(process.env.BENCH_DUPLICATES ?? 0.25);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);

interface SignedEvent {
  body: string;
  signature: string;
}

/**
 * Seeds one customer and EVENTS pending payouts (provider ids `bench-po-<i>`, references
 * `bench-ref-<i>`, amounts 10000 + i minor units) that the benchmark's callbacks settle.
 */
async function seedPendingPayouts(
  sql: { query: (text: string, values?: unknown[]) => Promise<unknown> },
  customerId: string,
): Promise<void> {
  await sql.query(
    `INSERT INTO customers (id, provider_id, email, updated_at) VALUES ($1, 'bench-customer', 'bench@example.com', now())`,
    [customerId],
  );
  await sql.query(
    `INSERT INTO transactions (id, kind, direction, status, amount, currency, customer_id, provider_id, reference, updated_at)
     SELECT gen_random_uuid(), 'payout', 'debit', 'pending', 10000 + i, 'USD', $1, 'bench-po-' || i, 'bench-ref-' || i, now()
     FROM generate_series(1, $2::int) AS i`,
    [customerId, EVENTS],
  );
}

async function recovery(): Promise<void> {
  const customerId = randomUUID();
  let seeded = 0;
  const stack = await startStack({
    name: 'webhooks_recovery',
    gatewayEnv: { WEBHOOK_APPLY_CONCURRENCY: process.env.WEBHOOK_APPLY_CONCURRENCY ?? '2', JOBS_ENABLED: 'true' },
    beforeGateway: async (sql) => {
      process.stdout.write(`seeding ${EVENTS} pending payouts and ${EVENTS} unapplied inbox events…\n`);
      await seedPendingPayouts(sql, customerId);
      // As WebhooksService.receive leaves them when the process dies after storing: outcome pending.
      await sql.query(
        `INSERT INTO webhook_events (id, dedupe_key, event, provider_id, reference, raw_body, payload, signature_header, received_at)
         SELECT gen_random_uuid(), 'bench-' || i, 'payout.transfer.success', 'bench-po-' || i, 'bench-ref-' || i, p::text, p,
                'x-brails-signature', now() - interval '5 minutes' + i * interval '1 millisecond'
         FROM generate_series(1, $1::int) AS i,
              LATERAL (SELECT jsonb_build_object('event', 'payout.transfer.success', 'data',
                jsonb_build_object('id', 'bench-po-' || i, 'reference', 'bench-ref-' || i, 'status', 'success',
                                   'amount', ((10000 + i) / 100.0)::text)) AS p) AS body`,
        [EVENTS],
      );
      seeded = EVENTS;
    },
  });
  try {
    const { sql } = stack;
    const started = Date.now() - stack.startToReadyMs;
    const one = async (query: string) => Number((await sql.query<{ n: string }>(query)).rows[0].n);
    const deadline = Date.now() + 600_000;
    let pending = Infinity;
    while (Date.now() < deadline) {
      pending = await one(`SELECT count(*) AS n FROM webhook_events WHERE outcome = 'pending'`);
      if (pending === 0) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const sinceStart = (Date.now() - started) / 1000;
    const cpuUs = cpuMicros(stack.pids.gateway);
    const span = (
      await sql.query<{ s: number }>(
        `SELECT extract(epoch FROM max(processed_at) - min(processed_at)) AS s FROM webhook_events WHERE outcome <> 'pending'`,
      )
    ).rows[0].s;
    const applied = await one(`SELECT count(*) AS n FROM webhook_events WHERE outcome = 'applied' AND attempts = 1`);
    const succeeded = await one(`SELECT count(*) AS n FROM transactions WHERE kind = 'payout' AND status = 'success'`);
    const webhookMoves = await one(`SELECT count(*) AS n FROM transaction_status_changes WHERE source = 'webhook'`);
    const doubled = await one(
      `SELECT count(*) AS n FROM (SELECT transaction_id FROM transaction_status_changes
        WHERE source = 'webhook' GROUP BY transaction_id HAVING count(*) > 1) d`,
    );
    const out = [
      '',
      `inbox recovery benchmark: ${seeded} events left pending by a dead process, WEBHOOK_APPLY_CONCURRENCY ${process.env.WEBHOOK_APPLY_CONCURRENCY ?? '2'}, node ${process.version}`,
      `recovered: ${applied} in ${Number(span).toFixed(2)} s of processing = ${(applied / Number(span)).toFixed(0)} events/s (target ≥ 1000); ${(applied / sinceStart).toFixed(0)} events/s counting from the gateway's start (${sinceStart.toFixed(2)} s, ready after ${stack.startToReadyMs.toFixed(0)} ms); ${pending} still pending`,
      `gateway CPU: ${(cpuUs / Math.max(1, applied)).toFixed(0)} µs per event recovered (the whole process since its start, start-up included)`,
      `exactly once: applied once ${applied} (expected ${seeded}), payouts success ${succeeded}, webhook moves ${webhookMoves}, doubled ${doubled}`,
      '',
    ];
    process.stdout.write(out.join('\n'));
    if (applied !== seeded || succeeded !== seeded || webhookMoves !== seeded || doubled !== 0) {
      throw new Error('recovered events were not applied exactly once (see above)');
    }
  } finally {
    await stack.stop();
  }
}

/** A pending-backlog sampler: `SELECT count(*) … WHERE outcome = 'pending'` every `everyMs` until stopped. */
function sampleBacklog(sql: Client, everyMs: number) {
  const samples: Array<{ at: number; pending: number }> = [];
  let stopped = false;
  const done = (async () => {
    while (!stopped) {
      const { rows } = await sql.query<{ n: string }>(
        `SELECT count(*) AS n FROM webhook_events WHERE outcome = 'pending'`,
      );
      samples.push({ at: Date.now(), pending: Number(rows[0].n) });
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    samples,
    latest: () => samples.at(-1)?.pending ?? Infinity,
    stop: async () => {
      stopped = true;
      await done;
    },
  };
}

async function main(): Promise<void> {
  const stack = await startStack({
    name: 'webhooks',
    gatewayEnv: { WEBHOOK_APPLY_CONCURRENCY: process.env.WEBHOOK_APPLY_CONCURRENCY ?? '2' },
  });
  try {
    const { sql } = stack;
    process.stdout.write(`seeding ${EVENTS} pending payouts…\n`);
    const customerId = randomUUID();
    await seedPendingPayouts(sql, customerId);

    const sign = (payload: unknown): SignedEvent => {
      const body = JSON.stringify(payload);
      return { body, signature: createHmac('sha512', BENCH_WEBHOOK_SECRET).update(body).digest('hex') };
    };
    const events: SignedEvent[] = [];
    for (let i = 1; i <= EVENTS; i++) {
      events.push(
        sign({
          event: 'payout.transfer.success',
          data: {
            id: `bench-po-${i}`,
            reference: `bench-ref-${i}`,
            status: 'success',
            amount: ((10000 + i) / 100).toFixed(2),
            fees: '0.50',
            action: 'usd_account_payout',
            channel: 'payout',
            type: 'debit',
          },
        }),
      );
    }
    // The send order: every event once, with duplicates of earlier events spread among them.
    const order: number[] = [];
    const duplicates = Math.round(EVENTS * DUPLICATE_SHARE);
    const every = duplicates > 0 ? Math.max(1, Math.floor(EVENTS / duplicates)) : Infinity;
    let sentDuplicates = 0;
    for (let i = 0; i < EVENTS; i++) {
      order.push(i);
      if (sentDuplicates < duplicates && i > 0 && i % every === 0) {
        order.push(Math.floor(Math.random() * i));
        sentDuplicates += 1;
      }
    }
    /** The callbacks in `order`, one per request, each connection taking the next. */
    const callbacks = (): SequenceStep[] => {
      let next = 0;
      return [
        {
          name: 'POST /webhooks/provider',
          method: 'POST',
          path: '/webhooks/provider',
          setupRequest: (request) => {
            const event = events[order[next++ % order.length]];
            return {
              ...request,
              body: event.body,
              headers: { 'content-type': 'application/json', 'x-brails-signature': event.signature },
            };
          },
        },
      ];
    };

    // The baseline: a raw Fastify receiver that checks the signature and answers 200, the same callbacks.
    const raw = await startRawBaseline(stack);
    let base: FlatOutResult & { cpuPerRequestUs: number };
    try {
      await flatOut({
        name: 'warm-up',
        origin: raw.origin,
        requests: callbacks(),
        seconds: 1,
        connections: CONNECTIONS,
      });
      base = await withCpu(raw.pid, () =>
        flatOut({
          name: 'raw receiver (signature check + 200)',
          origin: raw.origin,
          requests: callbacks(),
          amount: order.length,
          connections: CONNECTIONS,
        }),
      );
    } finally {
      await raw.stop();
    }

    // The gateway: the same callbacks, then until every stored event is applied.
    const backlog = sampleBacklog(sql, 100);
    const window = { fromUs: monotonicMicros(), toUs: 0 };
    const cpuBefore = cpuMicros(stack.pids.gateway);
    const firstSend = Date.now();
    const ack = await withCpu(stack.pids.gateway, () =>
      flatOut({
        name: 'gateway acknowledged',
        origin: stack.origin,
        requests: callbacks(),
        amount: order.length,
        connections: CONNECTIONS,
      }),
    );
    const deadline = Date.now() + 300_000;
    const ackEnd = Date.now();
    while (Date.now() < deadline) {
      const last = backlog.samples.at(-1);
      if (last && last.at > ackEnd && last.pending === 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await backlog.stop();
    window.toUs = monotonicMicros();
    const cpuUs = cpuMicros(stack.pids.gateway) - cpuBefore;
    const pending = backlog.latest();
    const peak = backlog.samples.reduce((p, s) => (s.pending > p.pending ? s : p), { at: firstSend, pending: 0 });

    const one = async (query: string) => Number((await sql.query<{ n: string }>(query)).rows[0].n);
    const inboxRows = await one(`SELECT count(*) AS n FROM webhook_events`);
    const notApplied = await one(`SELECT count(*) AS n FROM webhook_events WHERE outcome <> 'applied'`);
    const succeeded = await one(`SELECT count(*) AS n FROM transactions WHERE kind = 'payout' AND status = 'success'`);
    const webhookMoves = await one(`SELECT count(*) AS n FROM transaction_status_changes WHERE source = 'webhook'`);
    const doubled = await one(
      `SELECT count(*) AS n FROM (SELECT transaction_id FROM transaction_status_changes
        WHERE source = 'webhook' GROUP BY transaction_id HAVING count(*) > 1) d`,
    );
    // received → applied, from the inbox's own timestamps (processed_at is written after the effect commits).
    const effect = (
      await sql.query<{ applied: string; last_ms: number; p50: number; p99: number; max: number }>(
        `SELECT count(*) AS applied, extract(epoch FROM max(processed_at)) * 1000 AS last_ms,
                percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM processed_at - received_at) * 1000) AS p50,
                percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM processed_at - received_at) * 1000) AS p99,
                max(extract(epoch FROM processed_at - received_at) * 1000) AS max
         FROM webhook_events WHERE outcome = 'applied'`,
      )
    ).rows[0];
    const applied = Number(effect.applied);
    const appliedSeconds = (Number(effect.last_ms) - firstSend) / 1000;
    const appliedRate = applied / appliedSeconds;
    const acknowledged = ack.statuses[200] ?? 0;
    const ackRate = acknowledged / ack.seconds;
    const lost = EVENTS - succeeded;
    const met = (ok: boolean) => (ok ? 'met' : 'MISSED');

    const out = [
      '',
      `webhook benchmark: ${order.length} signed callbacks (${EVENTS} distinct + ${sentDuplicates} duplicates), ${CONNECTIONS} connections flat out, WEBHOOK_APPLY_CONCURRENCY ${process.env.WEBHOOK_APPLY_CONCURRENCY ?? '2'}, node ${process.version}`,
      `baseline: a raw Fastify receiver that checks the HMAC-SHA512 signature, parses the JSON and answers 200 (bench/raw-baseline.ts), same callbacks, same connections`,
      '',
      runTable([base, ack], base),
      '',
      `applied end to end (received → effect committed): ${applied} events in ${appliedSeconds.toFixed(2)} s from the first send to the last effect = ${appliedRate.toFixed(0)} events/s (target ≥ 1500: ${met(appliedRate >= 1500)}); ${(appliedRate / base.rps).toFixed(2)} × the raw receiver's rate`,
      `acknowledged: ${acknowledged} in ${ack.seconds.toFixed(2)} s = ${ackRate.toFixed(0)} callbacks/s (${(ackRate / base.rps).toFixed(2)} × raw); non-200 ${ack.non2xx}, errors ${ack.errors}`,
      `received → applied latency (inbox received_at → processed_at): p50 ${Number(effect.p50).toFixed(0)} ms, p99 ${Number(effect.p99).toFixed(0)} ms, max ${Number(effect.max).toFixed(0)} ms`,
      `backlog (stored, not yet applied; sampled every 100 ms): peak ${peak.pending} events ${((peak.at - firstSend) / 1000).toFixed(1)} s after the first send; ${pending} still pending at the end`,
      `gateway CPU: ${ack.cpuPerRequestUs.toFixed(0)} µs per callback received while acknowledging (raw receiver ${base.cpuPerRequestUs.toFixed(0)}); ${(cpuUs / Math.max(1, applied)).toFixed(0)} µs per event applied, first send to last effect`,
      `exactly once: inbox rows ${inboxRows} (expected ${EVENTS}), applied ${applied}, other outcomes ${notApplied}, payouts success ${succeeded}, webhook moves ${webhookMoves}, lost ${lost}, doubled ${doubled}`,
      '',
    ];
    process.stdout.write(out.join('\n'));
    process.stdout.write(await whereTheTimeGoes(stack, window, appliedRate < 1500));
    if (
      ack.non2xx > 0 ||
      lost !== 0 ||
      doubled !== 0 ||
      inboxRows !== EVENTS ||
      webhookMoves !== EVENTS ||
      notApplied
    ) {
      throw new Error('webhook effects were not applied exactly once (see above)');
    }
  } finally {
    await stack.stop();
  }
}

runBench(process.argv.includes('--recovery') ? recovery : main);
