/**
 * `npm run bench:webhooks`: provider callbacks acknowledged per second, and exactly-once effects.
 *
 * Seeds BENCH_EVENTS (default 20,000) pending payouts in a fresh database, then POSTs signed
 * `payout.transfer.success` callbacks to the compiled gateway at BENCH_CONNECTIONS (default 64)
 * concurrent connections, flat out: one per payout plus BENCH_DUPLICATES (default 25 %) duplicates
 * of already-sent events mixed in (the provider retries). Prints events/s acknowledged and the
 * acknowledgement latency (p50/p90/p99), then waits until the inbox has settled and checks that
 * every payout moved to `success` exactly once: one inbox row per event, one `webhook` status
 * change per payout, no failed events. Target (2 cores): ≥ 1,500 events/s.
 *
 * `--recovery` (`npm run bench:webhooks -- --recovery`): the restart after a crash instead. Seeds
 * BENCH_EVENTS pending payouts and as many inbox events left `pending` by a dead process (stored,
 * never applied), then starts the gateway with its jobs on: its start-up inbox recovery drains
 * them. Prints the recovery rate (events / span of their processed_at, and / time since the
 * gateway was started) and checks every event was applied exactly once. Target: ≥ 1,000 events/s.
 */
import 'dotenv/config';
import { createHmac, randomUUID } from 'node:crypto';
import { type EventEmitter } from 'node:events';
import autocannon from 'autocannon';
import * as hdr from 'hdr-histogram-js';
import { BENCH_WEBHOOK_SECRET, runBench, startStack } from './stack';

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

    const histogram = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000 });
    let next = 0;
    let non200 = 0;
    const started = process.hrtime.bigint();
    const instance = autocannon({
      url: `${stack.origin}/webhooks/provider`,
      connections: CONNECTIONS,
      amount: order.length,
      requests: [
        {
          method: 'POST',
          setupRequest: (request: autocannon.Request) => {
            const event = events[order[next++ % order.length]];
            return {
              ...request,
              body: event.body,
              headers: { 'content-type': 'application/json', 'x-brails-signature': event.signature },
            };
          },
        },
      ],
    }) as unknown as EventEmitter & Promise<autocannon.Result>;
    (instance as EventEmitter).on(
      'response',
      (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
        if (statusCode !== 200) non200 += 1;
        histogram.recordValue(Math.max(1, Math.round(responseTime * 1000)));
      },
    );
    const result = await instance;
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const acknowledged = histogram.totalCount - non200;

    // Settle: the inbox may still be applying what it acknowledged.
    const deadline = Date.now() + 300_000;
    let pending = Infinity;
    while (Date.now() < deadline) {
      pending = Number(
        (await sql.query<{ count: string }>(`SELECT count(*) FROM webhook_events WHERE outcome = 'pending'`)).rows[0]
          .count,
      );
      if (pending === 0) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const settledSeconds = Number(process.hrtime.bigint() - started) / 1e9;
    const one = async (query: string) => Number((await sql.query<{ n: string }>(query)).rows[0].n);
    const inboxRows = await one(`SELECT count(*) AS n FROM webhook_events`);
    const applied = await one(`SELECT count(*) AS n FROM webhook_events WHERE outcome = 'applied'`);
    const notApplied = await one(`SELECT count(*) AS n FROM webhook_events WHERE outcome <> 'applied'`);
    const succeeded = await one(`SELECT count(*) AS n FROM transactions WHERE kind = 'payout' AND status = 'success'`);
    const webhookMoves = await one(`SELECT count(*) AS n FROM transaction_status_changes WHERE source = 'webhook'`);
    const doubled = await one(
      `SELECT count(*) AS n FROM (SELECT transaction_id FROM transaction_status_changes
        WHERE source = 'webhook' GROUP BY transaction_id HAVING count(*) > 1) d`,
    );
    const lost = EVENTS - succeeded;
    const ms = (p: number) => (histogram.getValueAtPercentile(p) / 1000).toFixed(2);

    const out = [
      '',
      `webhook benchmark: ${order.length} signed callbacks (${EVENTS} distinct + ${sentDuplicates} duplicates), ${CONNECTIONS} connections, node ${process.version}`,
      `acknowledged: ${acknowledged} in ${seconds.toFixed(2)} s = ${(acknowledged / seconds).toFixed(0)} events/s (target ≥ 1500); non-200: ${non200}; errors: ${result.errors + result.timeouts}`,
      `acknowledgement latency ms: p50 ${ms(50)}  p90 ${ms(90)}  p99 ${ms(99)}  max ${ms(100)}`,
      `all effects applied after ${settledSeconds.toFixed(2)} s (${pending} still pending)`,
      `exactly once: inbox rows ${inboxRows} (expected ${EVENTS}), applied ${applied}, other outcomes ${notApplied}, payouts success ${succeeded}, webhook moves ${webhookMoves}, lost ${lost}, doubled ${doubled}`,
      '',
    ];
    process.stdout.write(out.join('\n'));
    if (non200 > 0 || lost !== 0 || doubled !== 0 || inboxRows !== EVENTS || webhookMoves !== EVENTS || notApplied) {
      throw new Error('webhook effects were not applied exactly once (see above)');
    }
  } finally {
    await stack.stop();
  }
}

runBench(process.argv.includes('--recovery') ? recovery : main);
