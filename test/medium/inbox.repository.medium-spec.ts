import { randomUUID } from 'node:crypto';
import { type InboxInsert, InboxRepository, isDataError } from '../../src/webhooks/inbox.repository';
import { mediumWorld, type MediumWorld } from '../support/medium';

/** InboxRepository's writes and claims on `webhook_events`, one test per outcome. */
describe('InboxRepository on a real database', () => {
  let world: MediumWorld;
  let repo: InboxRepository;

  beforeAll(async () => {
    world = await mediumWorld([InboxRepository]);
    repo = world.moduleRef.get(InboxRepository);
  });
  afterAll(() => world.close());

  const event = (fields: Partial<InboxInsert> = {}): InboxInsert => ({
    dedupeKey: `key-${randomUUID()}`,
    event: 'payout.transfer.success',
    providerId: `po-${randomUUID()}`,
    reference: null,
    rawBody: '{"event":"payout.transfer.success"}',
    payloadJson: JSON.stringify({ event: 'payout.transfer.success', data: { id: 'x' } }),
    signatureHeader: 't=1,v1=abc',
    headersJson: '{}',
    ...fields,
  });

  /** Stores one event and sets its state columns as given (received_at, outcome, next_attempt_at, processed_at). */
  async function stored(state: {
    outcome: string;
    receivedAt?: Date;
    nextAttemptAt?: Date | null;
    processedAt?: Date | null;
  }) {
    const [row] = await repo.insertMany([{ id: randomUUID(), values: event() }]);
    await world.db.query(
      `UPDATE webhook_events SET outcome = $2, received_at = $3, next_attempt_at = $4, processed_at = $5 WHERE id = $1`,
      [row.id, state.outcome, state.receivedAt ?? new Date(), state.nextAttemptAt ?? null, state.processedAt ?? null],
    );
    return row.id;
  }

  const now = new Date('2030-01-01T00:00:00.000Z');
  const due = (limit = 100, notProcessedSince: Date | null = null) =>
    repo.claimDue({
      now,
      staleBefore: new Date(now.getTime() - 60_000),
      leaseUntil: new Date(now.getTime() + 300_000),
      limit,
      notProcessedSince,
    });

  it('insertMany stores each new event once, as a pending WebhookEvent with the given id', async () => {
    const rows = [event(), event()].map((values) => ({ id: randomUUID(), values }));
    const inserted = await repo.insertMany(rows);
    expect(inserted.map((r) => r.id).sort()).toEqual(rows.map((r) => r.id).sort());
    expect(inserted[0]).toMatchObject({ outcome: 'pending', attempts: 0, processedAt: null, nextAttemptAt: null });
    expect(inserted[0].payload).toEqual({ event: 'payout.transfer.success', data: { id: 'x' } });
    // The rows returned (built from the values given) are the rows stored, column for column.
    for (const row of inserted) {
      expect(row).toEqual(await world.prisma.webhookEvent.findUniqueOrThrow({ where: { id: row.id } }));
    }
  });

  it('insertMany claim: an event whose dedupe key is stored already is not inserted again (nor returned)', async () => {
    const values = event();
    const [first] = await repo.insertMany([{ id: randomUUID(), values }]);
    const again = await repo.insertMany([
      { id: randomUUID(), values },
      { id: randomUUID(), values: event() },
    ]);
    expect(again).toHaveLength(1);
    expect(again[0].dedupeKey).not.toBe(values.dedupeKey);
    expect(await world.db.query(`SELECT id FROM webhook_events WHERE dedupe_key = $1`, [values.dedupeKey])).toEqual([
      { id: first.id },
    ]);
  });

  it('insertMany: a value the database refuses fails the statement with a data error, storing nothing', async () => {
    const good = event();
    const error = await repo
      .insertMany([
        { id: randomUUID(), values: good },
        { id: randomUUID(), values: event({ payloadJson: '{"event":"x","data":{"t":"\\u0000"}}' }) },
      ])
      .catch((e: unknown) => e);
    expect(isDataError(error)).toBe(true);
    expect(isDataError(new Error('connection refused'))).toBe(false);
    expect(await world.db.query(`SELECT 1 FROM webhook_events WHERE dedupe_key = $1`, [good.dedupeKey])).toEqual([]);
  });

  it('markDue and recordOutcomes write the state columns of the events named, each its own', async () => {
    const id = await stored({ outcome: 'pending' });
    const other = await stored({ outcome: 'pending' });
    const untouched = await stored({ outcome: 'pending' });
    await repo.markDue([id, other], now);
    const read = (eventId: string) => world.prisma.webhookEvent.findUniqueOrThrow({ where: { id: eventId } });
    expect((await read(id)).nextAttemptAt).toEqual(now);
    expect((await read(other)).nextAttemptAt).toEqual(now);
    expect((await read(untouched)).nextAttemptAt).toBeNull();
    const next = new Date(now.getTime() + 5_000);
    await repo.recordOutcomes([
      { id, outcome: 'failed', error: 'boom', processedAt: now, attempts: 3, nextAttemptAt: next },
      { id: other, outcome: 'unchanged', error: null, processedAt: next, attempts: 1, nextAttemptAt: null },
    ]);
    expect(await read(id)).toMatchObject({
      outcome: 'failed',
      error: 'boom',
      processedAt: now,
      attempts: 3,
      nextAttemptAt: next,
    });
    expect(await read(other)).toMatchObject({
      outcome: 'unchanged',
      error: null,
      processedAt: next,
      attempts: 1,
      nextAttemptAt: null,
    });
    expect(await read(untouched)).toMatchObject({ outcome: 'pending', processedAt: null, attempts: 0 });
    await repo.recordOutcomes([
      { id, outcome: 'applied', error: null, processedAt: now, attempts: 4, nextAttemptAt: null },
    ]);
    expect(await read(id)).toMatchObject({ outcome: 'applied', error: null, nextAttemptAt: null });
  });

  describe('claimDue (claim: lease the due events once)', () => {
    beforeEach(() => world.db.query(`DELETE FROM webhook_events`));

    it('leases failed/unmatched events that are due, pending ones marked due, and stale pending ones; the oldest first', async () => {
      const past = new Date(now.getTime() - 1_000);
      const received = (msAgo: number) => new Date(now.getTime() - msAgo);
      const failed = await stored({ outcome: 'failed', nextAttemptAt: past, receivedAt: received(5_000) });
      const unmatched = await stored({ outcome: 'unmatched', nextAttemptAt: now, receivedAt: received(4_000) });
      const marked = await stored({ outcome: 'pending', nextAttemptAt: past, receivedAt: received(3_000) });
      const stale = await stored({ outcome: 'pending', receivedAt: received(120_000) });
      // Under a limit, the oldest received are taken first (RETURNING itself keeps no order).
      const oldest = await due(2);
      expect(oldest.map((r) => r.id).sort()).toEqual([stale, failed].sort());
      expect(oldest.every((r) => r.nextAttemptAt?.getTime() === now.getTime() + 300_000)).toBe(true);
      await world.db.query(`UPDATE webhook_events SET next_attempt_at = $2 WHERE id = ANY($1)`, [
        [stale, failed],
        past,
      ]);
      const all = await due();
      expect(all.map((r) => r.id).sort()).toEqual([stale, failed, unmatched, marked].sort());
    });

    it('refuses events not due: a later retry, a fresh pending one, a settled one', async () => {
      await stored({ outcome: 'failed', nextAttemptAt: new Date(now.getTime() + 1_000) });
      await stored({ outcome: 'pending', receivedAt: new Date(now.getTime() - 1_000) });
      await stored({ outcome: 'applied', receivedAt: new Date(now.getTime() - 120_000) });
      await stored({ outcome: 'failed', nextAttemptAt: null });
      expect(await due()).toEqual([]);
    });

    it('already leased: a second pass right after finds nothing (the lease pushed next_attempt_at)', async () => {
      await stored({ outcome: 'failed', nextAttemptAt: now });
      expect(await due()).toHaveLength(1);
      expect(await due()).toEqual([]);
    });

    it('lost race: concurrent passes take disjoint events, each exactly once', async () => {
      for (let i = 0; i < 12; i++) await stored({ outcome: 'failed', nextAttemptAt: now });
      const passes = await Promise.all([due(5), due(5), due(5)]);
      const ids = passes.flat().map((r) => r.id);
      expect(ids).toHaveLength(12);
      expect(new Set(ids).size).toBe(12);
    });

    it('skips events processed since the pass began (notProcessedSince) and honours the limit', async () => {
      const before = await stored({ outcome: 'failed', nextAttemptAt: now, processedAt: new Date(now.getTime() - 10) });
      await stored({ outcome: 'failed', nextAttemptAt: now, processedAt: now });
      expect((await due(100, now)).map((r) => r.id)).toEqual([before]);
      await stored({ outcome: 'failed', nextAttemptAt: now });
      await stored({ outcome: 'failed', nextAttemptAt: now });
      expect(await due(1)).toHaveLength(1);
    });
  });
});
