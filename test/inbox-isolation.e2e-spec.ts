import { randomUUID } from 'node:crypto';
import { InboxWriter } from '../src/webhooks/inbox-writer';
import { type InboxInsert, InboxRepository, isDataError } from '../src/webhooks/inbox.repository';
import { signWebhook } from '../src/webhooks/signature';
import { RECOVERY_BATCH, WebhooksService } from '../src/webhooks/webhooks.service';
import { postCallback } from './support/fixtures';
import { type Harness, startHarness, startPeer, WEBHOOK_SECRET } from './support/harness';

/**
 * The inbox isolates events: a callback the database could not store as sent (NUL, lone
 * surrogates) is stored sanitized, one nested absurdly deep is refused alone with 400, a row the
 * database refuses inside a group insert fails alone — never its neighbours; and after a crash the
 * stored-but-unapplied events are drained back to back, each applied exactly once.
 */
describe('inbox isolation and recovery throughput (e2e)', () => {
  let h: Harness;
  let customerId: string;

  /** `count` pending payouts `<prefix>-po-<i>` / `<prefix>-ref-<i>` (i from 1), seeded by SQL. */
  const seedPayouts = (prefix: string, count: number) =>
    h.db.query(
      `INSERT INTO transactions (id, kind, direction, status, amount, currency, customer_id, provider_id, reference, updated_at)
       SELECT gen_random_uuid(), 'payout', 'debit', 'pending', 10000 + i, 'USD', $1, $2 || '-po-' || i, $2 || '-ref-' || i, now()
       FROM generate_series(1, $3::int) AS i`,
      [customerId, prefix, count],
    );
  /** Per payout of `prefix`: its status and how many `webhook` status changes it has. */
  const payoutEffects = (prefix: string) =>
    h.db.query<{ status: string; moves: number; n: number }>(
      `SELECT t.status, count(c.id)::int AS moves, count(*) OVER ()::int AS n
       FROM transactions t LEFT JOIN transaction_status_changes c ON c.transaction_id = t.id AND c.source = 'webhook'
       WHERE t.provider_id LIKE $1 || '-po-%' GROUP BY t.id, t.status`,
      [prefix],
    );

  beforeAll(async () => {
    h = await startHarness();
    customerId = randomUUID();
    await h.db.query(
      `INSERT INTO customers (id, provider_id, email, updated_at) VALUES ($1, 'iso-customer', 'iso@example.com', now())`,
      [customerId],
    );
  });
  afterAll(() => h.close());

  it('stores poisoned callbacks (NUL, lone surrogates) sanitized among 300 valid ones sent at once; all applied, none 500', async () => {
    await seedPayouts('iso', 302);
    const success = (i: number, extra: Record<string, unknown> = {}) => ({
      event: 'payout.transfer.success',
      data: { id: `iso-po-${i}`, reference: `iso-ref-${i}`, status: 'success', amount: '100.00', ...extra },
    });
    const nul = success(301, { narration: 'evil\u0000tail' });
    const surrogate = success(302, { ['k\ud800']: 'v\udc00x', note: ['\ud83d', 'ok \ud83d\ude00'] });
    const bodies = [...Array.from({ length: 300 }, (_, i) => success(i + 1))];
    bodies.splice(150, 0, nul);
    bodies.splice(200, 0, surrogate);
    // postCallback sends JSON.stringify of each: the escapes (\u0000, \ud800) as the provider would send them.

    const answers = await Promise.all(bodies.map((body) => postCallback(h, body)));
    expect(answers.map((a) => a.status).filter((s) => s !== 200)).toEqual([]);
    expect(answers.every((a) => a.body.outcome === 'applied' && a.body.duplicate === false)).toBe(true);
    const effects = await payoutEffects('iso');
    expect(effects).toHaveLength(302);
    expect(effects.every((e) => e.status === 'success' && e.moves === 1)).toBe(true);

    const [stored] = await h.db.query<{ narration: string; raw_ok: boolean; raw_nul: boolean }>(
      `SELECT payload->'data'->>'narration' AS narration, (raw_body::jsonb = payload) AS raw_ok,
              position(E'\\\\u0000' IN raw_body) > 0 AS raw_nul
       FROM webhook_events WHERE provider_id = 'iso-po-301'`,
    );
    expect(stored).toEqual({ narration: 'evil\ufffdtail', raw_ok: true, raw_nul: false });
    const [second] = await h.db.query<{ data: Record<string, unknown> }>(
      `SELECT payload->'data' AS data FROM webhook_events WHERE provider_id = 'iso-po-302'`,
    );
    expect(second.data).toMatchObject({ 'k\ufffd': 'v\ufffdx', note: ['\ufffd', 'ok \ud83d\ude00'] });

    // The dedupe key is computed on the stored form: the same poisoned callback again is a duplicate.
    const again = await postCallback(h, nul);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ duplicate: true });
    const [{ n }] = await h.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM webhook_events WHERE provider_id LIKE 'iso-po-%'`,
    );
    expect(n).toBe(302);
  });

  it('refuses a callback nested 5,000 levels deep with 400, alone', async () => {
    await seedPayouts('deep', 20);
    const body =
      '{"event":"payout.transfer.success","data":{"id":"deep-po-x","status":"success","x":' +
      '{"a":'.repeat(5000) +
      '1' +
      '}'.repeat(5000) +
      '}}';
    const deep = h
      .http()
      .post('/webhooks/provider')
      .set('content-type', 'application/json')
      .set('x-brails-signature', signWebhook(body, WEBHOOK_SECRET))
      .send(body)
      .then((res) => res);
    const valid = Array.from({ length: 20 }, (_, i) =>
      postCallback(h, {
        event: 'payout.transfer.success',
        data: { id: `deep-po-${i + 1}`, reference: `deep-ref-${i + 1}`, status: 'success' },
      }),
    );
    const [refused, ...others] = await Promise.all([deep, ...valid]);
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('validation_failed');
    expect(others.map((a) => a.status)).toEqual(Array(20).fill(200));
    const effects = await payoutEffects('deep');
    expect(effects).toHaveLength(20);
    expect(effects.every((e) => e.status === 'success' && e.moves === 1)).toBe(true);
    expect(await h.db.query(`SELECT 1 FROM webhook_events WHERE provider_id = 'deep-po-x'`)).toEqual([]);
  });

  it('a row the database refuses inside a group insert fails alone; its neighbours are stored', async () => {
    // One insert at a time: while the first runs, the rest wait and go together in one statement.
    const writer = new InboxWriter(h.app.get(InboxRepository), 1, 200);
    const values = (i: number, payloadJson = JSON.stringify({ event: 'test.group', data: { id: `g-${i}` } })) =>
      ({
        dedupeKey: `group-${i}-${randomUUID()}`,
        event: 'test.group',
        providerId: `g-${i}`,
        reference: null,
        rawBody: payloadJson,
        payloadJson,
        signatureHeader: 'x-brails-signature',
        headersJson: '{}',
      }) satisfies InboxInsert;
    // A payload PostgreSQL refuses as jsonb (what an unsanitized NUL looked like).
    const bad = values(25, '{"event":"test.group","data":{"id":"g-25","x":"\\u0000"}}');
    const results = await Promise.allSettled(
      Array.from({ length: 50 }, (_, i) => writer.insert(i === 25 ? bad : values(i))),
    );
    const rejected = results.flatMap((r, i) => (r.status === 'rejected' ? [{ i, reason: r.reason }] : []));
    expect(rejected.map((r) => r.i)).toEqual([25]);
    expect(isDataError(rejected[0].reason)).toBe(true);
    const [{ n }] = await h.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM webhook_events WHERE event = 'test.group'`,
    );
    expect(n).toBe(49);
    // Not events the gateway knows: out of the way of the recovery test below.
    await h.db.query(`DELETE FROM webhook_events WHERE event = 'test.group'`);
  });

  it('recovers 4,000 events left pending by a dead process: two instances drain them, each applied exactly once', async () => {
    // Eight recovery batches (RECOVERY_BATCH 500): each instance leases several, back to back. The
    // rate at scale is measured by `npm run bench:webhooks -- --recovery`, not here.
    const count = 8 * RECOVERY_BATCH;
    await seedPayouts('rec', count);
    // What WebhooksService.receive had stored when the process died: the rows, outcome pending.
    await h.db.query(
      `INSERT INTO webhook_events (id, dedupe_key, event, provider_id, reference, raw_body, payload, signature_header, received_at)
       SELECT gen_random_uuid(), 'rec-' || i, 'payout.transfer.success', 'rec-po-' || i, 'rec-ref-' || i, p::text, p,
              'x-brails-signature', now() - interval '5 minutes' + i * interval '1 millisecond'
       FROM generate_series(1, $1::int) AS i,
            LATERAL (SELECT jsonb_build_object('event', 'payout.transfer.success', 'data',
              jsonb_build_object('id', 'rec-po-' || i, 'reference', 'rec-ref-' || i, 'status', 'success')) AS p) AS body`,
      [count],
    );
    const peer = await startPeer(h);
    try {
      const started = process.hrtime.bigint();
      const reports = await Promise.all([
        h.app.get(WebhooksService).retryDue(),
        peer.app.get(WebhooksService).retryDue(),
      ]);
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      process.stdout.write(
        `inbox recovery: ${count} events in ${seconds.toFixed(2)} s = ${(count / seconds).toFixed(0)} events/s ` +
          `(two instances: ${reports.map((r) => r.retried).join(' + ')})\n`,
      );
      expect(reports[0].retried + reports[1].retried).toBe(count);
      expect(reports[0].settled + reports[1].settled).toBe(count);
    } finally {
      await peer.close();
    }
    const [inbox] = await h.db.query<{ applied: number; once: number; other: number }>(
      `SELECT count(*) FILTER (WHERE outcome = 'applied')::int AS applied,
              count(*) FILTER (WHERE attempts = 1)::int AS once,
              count(*) FILTER (WHERE outcome <> 'applied')::int AS other
       FROM webhook_events WHERE dedupe_key LIKE 'rec-%'`,
    );
    expect(inbox).toEqual({ applied: count, once: count, other: 0 });
    const [moves] = await h.db.query<{ payouts: number; success: number; moved_once: number }>(
      `SELECT count(*)::int AS payouts, count(*) FILTER (WHERE status = 'success')::int AS success,
              count(*) FILTER (WHERE moves = 1)::int AS moved_once
       FROM (SELECT t.id, t.status, count(c.id) AS moves FROM transactions t
             LEFT JOIN transaction_status_changes c ON c.transaction_id = t.id AND c.source = 'webhook'
             WHERE t.provider_id LIKE 'rec-po-%' GROUP BY t.id, t.status) x`,
    );
    expect(moves).toEqual({ payouts: count, success: count, moved_once: count });
    expect((await h.app.get(WebhooksService).retryDue()).retried).toBe(0);
  }, 120_000);
});
