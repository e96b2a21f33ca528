import { randomUUID } from 'node:crypto';
import { ApiClientsRepository } from '../../src/auth/api-clients.repository';
import { hashApiKey } from '../../src/auth/api-key';
import { CollectionsRepository } from '../../src/collections/collections.repository';
import { encodeCursor } from '../../src/common/pagination';
import { CustomersRepository } from '../../src/customers/customers.repository';
import { HealthRepository } from '../../src/health/health.repository';
import { DISABLED_ERROR, WebhookSubscriptionsRepository } from '../../src/outbound/webhook-subscriptions.repository';
import { mediumWorld, type MediumWorld } from '../support/medium';

describe('ApiClients, Customers and WebhookSubscriptions repositories on a real database', () => {
  let world: MediumWorld;
  let clients: ApiClientsRepository;
  let customers: CustomersRepository;
  let subscriptions: WebhookSubscriptionsRepository;

  beforeAll(async () => {
    world = await mediumWorld([ApiClientsRepository, CustomersRepository, WebhookSubscriptionsRepository]);
    clients = world.moduleRef.get(ApiClientsRepository);
    customers = world.moduleRef.get(CustomersRepository);
    subscriptions = world.moduleRef.get(WebhookSubscriptionsRepository);
  });
  afterAll(() => world.close());

  it('ApiClientsRepository stores only the key hash and finds active clients by it, not revoked ones', async () => {
    const { client, key } = await clients.create('finance', ['transactions:read']);
    const [stored] = await world.db.query<{ key_hash: string; key_prefix: string }>(
      `SELECT key_hash, key_prefix FROM api_clients WHERE id = $1`,
      [client.id],
    );
    expect(stored.key_hash).toBe(hashApiKey(key));
    expect(stored.key_hash).not.toContain(key);
    expect(key.startsWith(stored.key_prefix)).toBe(true);
    expect((await clients.findActiveByKeyHash(hashApiKey(key)))?.id).toBe(client.id);
    await world.db.query(`UPDATE api_clients SET revoked_at = now() WHERE id = $1`, [client.id]);
    expect(await clients.findActiveByKeyHash(hashApiKey(key))).toBeNull();
    expect(await clients.findActiveByKeyHash(hashApiKey('wg_unknown'))).toBeNull();
  });

  it('CustomersRepository creates, finds, updates and lists newest first with a keyset cursor', async () => {
    const made = [];
    for (let i = 0; i < 3; i++) {
      made.push(
        await customers.create({
          providerId: `cus-${randomUUID()}`,
          email: `c${i}-${randomUUID()}@x.test`,
          createdAt: new Date(Date.UTC(2026, 0, 1, 0, i)),
        }),
      );
    }
    expect((await customers.findById(made[0].id))?.email).toBe(made[0].email);
    expect((await customers.findByEmail(made[1].email))?.id).toBe(made[1].id);
    expect(await customers.findById(randomUUID())).toBeNull();
    expect((await customers.update(made[2].id, { firstName: 'Ada' })).firstName).toBe('Ada');

    const first = await customers.list({}, undefined, 1);
    expect(first.map((c) => c.id)).toEqual([made[2].id, made[1].id]);
    // The page reads its instants as the text a Date read would answer (isoTimeSql).
    const stored = await customers.findById(made[1].id);
    expect(first[1]).toEqual({
      ...stored,
      createdAt: '2026-01-01T00:01:00.000Z',
      updatedAt: stored?.updatedAt.toISOString(),
    });
    const next = await customers.list({}, encodeCursor(first[0]), 1);
    expect(next.map((c) => c.id)).toEqual([made[1].id, made[0].id]);
    expect((await customers.list({ email: made[0].email }, undefined, 10)).map((c) => c.id)).toEqual([made[0].id]);
  });

  it('WebhookSubscriptionsRepository: owned reads, disable (once) fails pending messages, requeue of failed ones', async () => {
    const { client: owner } = await clients.create('owner', []);
    const { client: stranger } = await clients.create('stranger', []);
    const sub = await subscriptions.create({
      clientId: owner.id,
      url: 'https://example.test/hook',
      secret: 'whsec_x',
      eventTypes: [],
      description: null,
    });
    expect((await subscriptions.findOwned(sub.id, owner.id))?.id).toBe(sub.id);
    expect(await subscriptions.findOwned(sub.id, stranger.id)).toBeNull();

    const [delivered, pending] = await world.db.query<{ id: string }>(
      `INSERT INTO outbox_messages (id, subscription_id, event_type, payload, status, created_at)
       VALUES (gen_random_uuid(), $1, 'payout.succeeded', '{}', 'delivered', now() - interval '1 minute'),
              (gen_random_uuid(), $1, 'payout.failed', '{}', 'pending', now())
       RETURNING id`,
      [sub.id],
    );
    expect((await subscriptions.listMessages(sub.id, undefined, undefined, 10)).map((m) => m.id)).toEqual([
      pending.id,
      delivered.id,
    ]);
    expect((await subscriptions.listMessages(sub.id, 'delivered', undefined, 10)).map((m) => m.id)).toEqual([
      delivered.id,
    ]);

    const disabled = await subscriptions.disable(sub.id);
    expect(disabled.disabledAt).toBeInstanceOf(Date);
    expect((await subscriptions.disable(sub.id)).disabledAt).toEqual(disabled.disabledAt);
    expect(await subscriptions.findMessage(sub.id, pending.id)).toMatchObject({
      status: 'failed',
      lastError: DISABLED_ERROR,
    });
    expect((await subscriptions.findMessage(sub.id, delivered.id))?.status).toBe('delivered');
    expect(await subscriptions.listOwned(owner.id, false, undefined, 10)).toEqual([]);
    expect((await subscriptions.listOwned(owner.id, true, undefined, 10)).map((s) => s.id)).toEqual([sub.id]);

    expect(await subscriptions.requeueFailed(sub.id, delivered.id)).toBeNull();
    const requeued = await subscriptions.requeueFailed(sub.id, pending.id);
    expect(requeued).toMatchObject({ status: 'pending', attempts: 0, lastError: DISABLED_ERROR });
    expect(await subscriptions.requeueFailed(sub.id, pending.id)).toBeNull();
  });
});

describe('Health and Collections repositories on a real database', () => {
  let world: MediumWorld;

  beforeAll(async () => {
    world = await mediumWorld([HealthRepository, CollectionsRepository]);
  });
  afterAll(() => world.close());

  it('HealthRepository.ping resolves while the database answers', async () => {
    await expect(world.moduleRef.get(HealthRepository).ping()).resolves.toBeUndefined();
  });

  it("HealthRepository.ping answers on its own connection while every connection of Prisma's pool is busy", async () => {
    const busy = await mediumWorld([HealthRepository], { DATABASE_POOL_SIZE: 1 });
    try {
      const health = busy.moduleRef.get(HealthRepository);
      await health.ping(); // the probe's connection is open
      // The pool's one connection, for 3 s (`then` sends it: a Prisma query runs when awaited).
      const held = busy.prisma.$queryRaw`SELECT 1 AS one FROM pg_sleep(3)`.then(() => undefined);
      await new Promise((r) => setTimeout(r, 200));
      const started = Date.now();
      await health.ping();
      expect(Date.now() - started).toBeLessThan(1500);
      await held;
    } finally {
      await busy.close();
    }
  });

  it('CollectionsRepository finds the ledger row id of a collection by its provider id, null for none', async () => {
    const customer = await world.prisma.customer.create({
      data: { providerId: `cus-${randomUUID()}`, email: `c-${randomUUID()}@example.test` },
    });
    const transaction = await world.prisma.transaction.create({
      data: {
        kind: 'collection',
        direction: 'credit',
        status: 'pending',
        amount: 1n,
        currency: 'NGN',
        reference: `ref-${randomUUID()}`,
      },
    });
    const providerId = `col-${randomUUID()}`;
    await world.prisma.collection.create({
      data: { providerId, customerId: customer.id, transactionId: transaction.id, country: 'NG' },
    });
    const collections = world.moduleRef.get(CollectionsRepository);
    expect(await collections.findTransactionIdByProviderId(providerId)).toBe(transaction.id);
    expect(await collections.findTransactionIdByProviderId('col-unknown')).toBeNull();
  });
});
