import { randomUUID } from 'node:crypto';
import { OutboxRepository } from '../../src/outbound/outbox.repository';
import { mediumWorld, type MediumWorld } from '../support/medium';

describe('OutboxRepository on a real database', () => {
  let world: MediumWorld;
  let outbox: OutboxRepository;

  beforeAll(async () => {
    world = await mediumWorld([OutboxRepository]);
    outbox = world.moduleRef.get(OutboxRepository);
  });
  afterAll(() => world.close());

  async function subscription(eventTypes: string[], disabled = false) {
    const [client] = await world.db.query<{ id: string }>(
      `INSERT INTO api_clients (id, name, key_hash, key_prefix, scopes) VALUES (gen_random_uuid(), 'c', $1, 'wg_', '{}') RETURNING id`,
      [randomUUID()],
    );
    const [sub] = await world.db.query<{ id: string }>(
      `INSERT INTO webhook_subscriptions (id, client_id, url, secret, event_types, updated_at, disabled_at)
       VALUES (gen_random_uuid(), $1, $2, 'whsec_x', $3, now(), $4) RETURNING id`,
      [client.id, `https://example.test/${randomUUID()}`, eventTypes, disabled ? new Date() : null],
    );
    return sub.id;
  }

  async function messagesOf(subscriptionId: string) {
    return world.db.query<{ id: string; status: string; attempts: number; event_type: string }>(
      `SELECT id, status::text, attempts, event_type FROM outbox_messages WHERE subscription_id = $1`,
      [subscriptionId],
    );
  }

  /** Only this test's messages stay due: everything else is pushed far ahead. */
  async function onlyDue(subscriptionId: string) {
    await world.db.query(
      `UPDATE outbox_messages SET next_attempt_at = now() + interval '1 day' WHERE subscription_id <> $1 AND status = 'pending'`,
      [subscriptionId],
    );
  }

  it('insertForEvent writes one message per active subscription taking the event (named, or all types)', async () => {
    const named = await subscription(['payout.succeeded']);
    const all = await subscription([]);
    const other = await subscription(['payout.failed']);
    const disabled = await subscription(['payout.succeeded'], true);
    const written = await outbox.insertForEvent('payout.succeeded', { type: 'payout.succeeded', data: {} });
    expect(written).toBeGreaterThanOrEqual(2);
    expect(await messagesOf(named)).toHaveLength(1);
    expect(await messagesOf(all)).toHaveLength(1);
    expect(await messagesOf(other)).toHaveLength(0);
    expect(await messagesOf(disabled)).toHaveLength(0);
  });

  it('insertForEvent: a message is due at once by the clock claimDue reads, the application’s', async () => {
    // The column's default (the database's now(), rounded to the millisecond) could be up to 0.5 ms
    // ahead of it, so a claim in the same millisecond missed the message: seen as a flaky e2e test.
    const sub = await subscription(['card.frozen']);
    for (let i = 0; i < 100; i++) {
      await onlyDue(sub);
      await outbox.insertForEvent('card.frozen', { i });
      const claimed = await outbox.claimDue(new Date(), new Date(Date.now() + 60_000), 10);
      // (Earlier tests' subscriptions to every type take it too: count this one's.)
      expect([i, claimed.filter((m) => m.subscriptionId === sub).length]).toEqual([i, 1]);
    }
  });

  it('insertForEvent in a transaction that rolls back leaves nothing', async () => {
    const sub = await subscription(['card.frozen']);
    await world.prisma
      .$transaction(async (tx) => {
        await outbox.insertForEvent('card.frozen', {}, tx);
        throw new Error('rollback');
      })
      .catch(() => undefined);
    expect(await messagesOf(sub)).toHaveLength(0);
  });

  it('claimDue: won (counted as an attempt, leased), lost to a live lease, taken again after the lease lapsed', async () => {
    const sub = await subscription(['payout.expired']);
    await outbox.insertForEvent('payout.expired', { n: 1 });
    await onlyDue(sub);
    const now = new Date();
    const lease = new Date(now.getTime() + 60_000);
    const [won, ...more] = await outbox.claimDue(now, lease, 10);
    expect(more).toEqual([]);
    expect(won).toMatchObject({ subscriptionId: sub, eventType: 'payout.expired', attempts: 1, leaseUntil: lease });
    expect(won.url).toMatch(/^https:\/\/example\.test\//);
    // Lost: the lease holds, the message is not due.
    expect(await outbox.claimDue(new Date(), new Date(Date.now() + 60_000), 10)).toEqual([]);
    // The lease lapsed (its pass died): due again, a second attempt.
    const later = new Date(lease.getTime() + 1);
    const [retaken] = await outbox.claimDue(later, new Date(later.getTime() + 60_000), 10);
    expect(retaken).toMatchObject({ id: won.id, attempts: 2 });
    // The first attempt's result no longer applies; the second's does.
    expect(await outbox.markDelivered(won, 200, new Date())).toBe(false);
    expect(await outbox.markDelivered(retaken, 204, new Date())).toBe(true);
    expect(await messagesOf(sub)).toMatchObject([{ status: 'delivered', attempts: 2 }]);
  });

  it('claimDue skips rows locked by a concurrent pass (FOR UPDATE SKIP LOCKED)', async () => {
    const sub = await subscription(['payout.reversed']);
    await outbox.insertForEvent('payout.reversed', { n: 1 });
    await outbox.insertForEvent('payout.reversed', { n: 2 });
    await onlyDue(sub);
    const ids = (await messagesOf(sub)).map((m) => m.id);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const lockTaken = new Promise<void>((r) => (locked = r));
    const holder = world.prisma.$transaction(async (tx) => {
      await tx.$queryRaw`SELECT id FROM outbox_messages WHERE id = ${ids[0]}::uuid FOR UPDATE`;
      locked();
      await held;
    });
    await lockTaken;
    const claimed = await outbox.claimDue(new Date(), new Date(Date.now() + 60_000), 10);
    release();
    await holder;
    expect(claimed.map((m) => m.id)).toEqual([ids[1]]);
  });

  it('claimDue ignores messages of a disabled subscription and respects the limit', async () => {
    const sub = await subscription(['collection.paid']);
    for (let i = 0; i < 3; i++) await outbox.insertForEvent('collection.paid', { i });
    await onlyDue(sub);
    expect(await outbox.claimDue(new Date(), new Date(Date.now() + 60_000), 2)).toHaveLength(2);
    await world.db.query(`UPDATE webhook_subscriptions SET disabled_at = now() WHERE id = $1`, [sub]);
    await world.db.query(
      `UPDATE outbox_messages SET next_attempt_at = now() - interval '1 second' WHERE subscription_id = $1`,
      [sub],
    );
    expect(await outbox.claimDue(new Date(), new Date(Date.now() + 60_000), 10)).toEqual([]);
  });

  it('markAttemptFailed: pending again at the next time, or failed for good; only while the lease holds', async () => {
    const sub = await subscription(['collection.expired']);
    await outbox.insertForEvent('collection.expired', {});
    await onlyDue(sub);
    const lease = new Date(Date.now() + 60_000);
    const [m] = await outbox.claimDue(new Date(), lease, 10);
    const next = new Date(Date.now() + 120_000);
    expect(
      await outbox.markAttemptFailed(
        m,
        { statusCode: 500, error: 'HTTP 500' },
        { status: 'pending', nextAttemptAt: next },
      ),
    ).toBe(true);
    const [row] = await world.db.query<{
      status: string;
      next_attempt_at: Date;
      last_status_code: number;
      last_error: string;
    }>(`SELECT status::text, next_attempt_at, last_status_code, last_error FROM outbox_messages WHERE id = $1`, [m.id]);
    expect(row).toEqual({ status: 'pending', next_attempt_at: next, last_status_code: 500, last_error: 'HTTP 500' });
    // The same attempt's result again: its lease is gone, nothing written.
    expect(await outbox.markAttemptFailed(m, { statusCode: null, error: 'x' }, { status: 'failed' })).toBe(false);
    const [again] = await outbox.claimDue(new Date(next.getTime() + 1), new Date(next.getTime() + 60_000), 10);
    expect(await outbox.markAttemptFailed(again, { statusCode: null, error: 'timeout' }, { status: 'failed' })).toBe(
      true,
    );
    expect(await messagesOf(sub)).toMatchObject([{ status: 'failed', attempts: 2 }]);
  });
});
