import { randomUUID } from 'node:crypto';
import { PrismaService } from '../src/database/prisma.service';
import { LedgerService } from '../src/transactions/ledger.service';
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
      // The seeded payout's own amount (10000 + i minor units): a callback stating another is held for review.
      data: {
        id: `iso-po-${i}`,
        reference: `iso-ref-${i}`,
        status: 'success',
        amount: ((10000 + i) / 100).toFixed(2),
        ...extra,
      },
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

  describe('a batch of stored events applied together', () => {
    /** Stores `events` as a dead process leaves them (pending), in this order, and reads them back as the apply queue gets them. */
    async function stored(prefix: string, events: Array<{ event: string; data: Record<string, unknown> }>) {
      for (const [i, body] of events.entries()) {
        const text = JSON.stringify(body);
        await h.db.query(
          `INSERT INTO webhook_events (id, dedupe_key, event, provider_id, reference, raw_body, payload, signature_header, received_at)
           VALUES (gen_random_uuid(), $1, $2, $3, $4, $5::text, $5::jsonb, 'x-brails-signature', now() - interval '5 minutes' + $6 * interval '1 millisecond')`,
          [`${prefix}-${i}`, body.event, body.data.id ?? null, body.data.reference ?? null, text, i],
        );
      }
      return h.app
        .get(PrismaService)
        .webhookEvent.findMany({ where: { dedupeKey: { startsWith: `${prefix}-` } }, orderBy: { receivedAt: 'asc' } });
    }
    const payoutRow = async (providerId: string) =>
      (
        await h.db.query<{ id: string; status: string; failure_reason: string | null }>(
          'SELECT id, status, failure_reason FROM transactions WHERE provider_id = $1',
          [providerId],
        )
      )[0];
    const moves = (transactionId: string) =>
      h.db.query<{ from: string; to: string }>(
        `SELECT "from", "to" FROM transaction_status_changes WHERE transaction_id = $1 AND source = 'webhook' ORDER BY id`,
        [transactionId],
      );
    /** Every outcome the batch path and the one-by-one path decide, in one batch, in the order received. */
    const mixed = (p: string) => [
      { event: 'payout.transfer.success', data: { id: `${p}-po-1`, status: 'success' } },
      // A second event for the same payout in the same batch: applied after the first, so refused.
      { event: 'payout.transfer.failed', data: { id: `${p}-po-1`, status: 'failed', reason: 'late' } },
      { event: 'payout.transfer.success', data: { id: `${p}-po-2`, status: 'success' } },
      { event: 'payout.transfer.success', data: { id: `${p}-nobody`, status: 'success' } },
      { event: 'payout.transfer.failed', data: { reference: `${p}-ref-3`, status: 'failed', reason: 'no funds' } },
      { event: 'test.batch.unknown', data: { id: `${p}-x` } },
      { event: 'payout.transfer.success', data: { id: `${p}-po-4`, status: 'success' } },
    ];

    async function expectMixedOutcomes(p: string, rows: Array<{ id: string }>, outcomes: string[]) {
      expect(outcomes).toEqual(['applied', 'refused', 'unchanged', 'unmatched', 'applied', 'unhandled', 'refused']);
      const inbox = await h.db.query<{
        id: string;
        outcome: string;
        attempts: number;
        error: string | null;
        due: boolean;
      }>(
        `SELECT id, outcome, attempts, error, next_attempt_at IS NOT NULL AS due FROM webhook_events WHERE dedupe_key LIKE $1 || '-%' ORDER BY received_at`,
        [p],
      );
      expect(inbox.map((r) => r.id)).toEqual(rows.map((r) => r.id));
      expect(inbox.map((r) => [r.outcome, r.attempts, r.due])).toEqual([
        ['applied', 1, false],
        ['refused', 1, false],
        ['unchanged', 1, false],
        ['unmatched', 1, true],
        ['applied', 1, false],
        ['unhandled', 1, false],
        ['refused', 1, false],
      ]);
      expect(inbox[1].error).toMatch(/is success: payout.transfer.failed would move it to failed/);
      expect(inbox[6].error).toMatch(/is needs_review/);
      const first = await payoutRow(`${p}-po-1`);
      expect(first.status).toBe('success');
      expect(await moves(first.id)).toEqual([{ from: 'pending', to: 'success' }]);
      expect(await moves((await payoutRow(`${p}-po-2`)).id)).toEqual([]);
      const third = await payoutRow(`${p}-po-3`);
      expect(third).toMatchObject({ status: 'failed', failure_reason: 'no funds' });
      expect(await moves(third.id)).toEqual([{ from: 'pending', to: 'failed' }]);
      expect((await payoutRow(`${p}-po-4`)).status).toBe('needs_review');
    }

    async function seedMixed(p: string) {
      await seedPayouts(p, 4);
      await h.db.query(`UPDATE transactions SET status = 'success' WHERE provider_id = $1`, [`${p}-po-2`]);
      await h.db.query(`UPDATE transactions SET status = 'needs_review' WHERE provider_id = $1`, [`${p}-po-4`]);
    }

    it('decides each event as it would alone, in the order received', async () => {
      await seedMixed('mix');
      const rows = await stored('mix', mixed('mix'));
      const outcomes = await h.app.get(WebhooksService).processBatch(rows);
      await expectMixedOutcomes('mix', rows, outcomes);
    });

    it('applies each event on its own when the batch statement fails: the same outcomes', async () => {
      await seedMixed('fall');
      const rows = await stored('fall', mixed('fall'));
      const ledger = h.app.get(LedgerService);
      const failing = jest.spyOn(ledger, 'transitionMany').mockRejectedValueOnce(new Error('deadlock detected'));
      try {
        const outcomes = await h.app.get(WebhooksService).processBatch(rows);
        expect(failing).toHaveBeenCalledTimes(1);
        await expectMixedOutcomes('fall', rows, outcomes);
      } finally {
        failing.mockRestore();
      }
    });
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
