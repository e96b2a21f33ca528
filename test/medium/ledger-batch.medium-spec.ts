import { randomUUID } from 'node:crypto';
import type { TransactionStatus } from '../../src/generated/prisma/client';
import { OutboxRepository } from '../../src/outbound/outbox.repository';
import { OutboxService } from '../../src/outbound/outbox.service';
import type { LedgerRow } from '../../src/transactions/ledger-row';
import { LedgerRepository } from '../../src/transactions/ledger.repository';
import { LedgerService } from '../../src/transactions/ledger.service';
import { insertLedgerRow, mediumWorld, type MediumWorld } from '../support/medium';

/**
 * The ledger's batch methods for provider callbacks (LedgerService.findManyByProviderIdOrReference,
 * transitionMany; LedgerRepository.moveManyIfFrom): the same outcomes as one `transition` per row.
 */
describe('LedgerService batch moves on a real database', () => {
  let world: MediumWorld;
  let ledger: LedgerService;
  let repo: LedgerRepository;

  beforeAll(async () => {
    world = await mediumWorld([LedgerService, LedgerRepository, OutboxService, OutboxRepository]);
    ledger = world.moduleRef.get(LedgerService);
    repo = world.moduleRef.get(LedgerRepository);
    const [client] = await world.db.query<{ id: string }>(
      `INSERT INTO api_clients (id, name, key_hash, key_prefix, scopes) VALUES (gen_random_uuid(), 'c', $1, 'wg_', '{}') RETURNING id`,
      [randomUUID()],
    );
    await world.db.query(
      `INSERT INTO webhook_subscriptions (id, client_id, url, secret, event_types, updated_at)
       VALUES (gen_random_uuid(), $1, 'https://example.test/hook', 'whsec_x', '{payout.succeeded,payout.failed}', now())`,
      [client.id],
    );
  });
  afterAll(() => world.close());

  const payout = (status: TransactionStatus, providerId: string | undefined = `po-${randomUUID()}`) =>
    insertLedgerRow(world, status, 'payout', providerId);
  const read = async (id: string) =>
    (
      await ledger.findManyByProviderIdOrReference('payout', [
        { providerId: null, reference: (await ledger.get(id)).reference },
      ])
    )[0] as LedgerRow;
  const history = (id: string) =>
    world.db.query<{ from: string | null; to: string; source: string; payload: unknown }>(
      `SELECT "from", "to", source::text, payload FROM transaction_status_changes WHERE transaction_id = $1 ORDER BY id`,
      [id],
    );
  const outbox = (id: string) =>
    world.db.query<{ event_type: string; payload: { type: string; data: Record<string, unknown> } }>(
      `SELECT event_type, payload FROM outbox_messages WHERE payload->'data'->>'id' = $1`,
      [id],
    );

  it('findManyByProviderIdOrReference matches each key in order, the provider id winning, null when nothing matches', async () => {
    const byId = await payout('pending');
    const byReference = await payout('pending', undefined);
    const collection = await insertLedgerRow(world, 'pending', 'collection', `co-${randomUUID()}`);
    // The provider id of one row and the reference of another: the provider id wins.
    const both = await payout('pending');
    const other = await payout('pending');
    const found = await ledger.findManyByProviderIdOrReference('payout', [
      { providerId: byId.providerId, reference: null },
      { providerId: 'nobody', reference: byReference.reference },
      { providerId: collection.providerId, reference: collection.reference },
      { providerId: null, reference: null },
      { providerId: both.providerId, reference: other.reference },
      { providerId: byId.providerId, reference: null },
    ]);
    expect(found.map((row) => row?.id ?? null)).toEqual([byId.id, byReference.id, null, null, both.id, byId.id]);
    const { providerPayload: _payload, ...expected } = await ledger.get(byId.id);
    expect(found[0]).toEqual(expected);
    expect(typeof found[0]?.amount).toBe('bigint');
  });

  it('transitionMany moves the rows it may in one statement, with history and outbox, like transition', async () => {
    const a = await payout('pending');
    const b = await payout('processing');
    const moves = [
      { before: await read(a.id), to: 'success' as const, payload: { event: 'payout.transfer.success', n: 1 } },
      { before: await read(b.id), to: 'failed' as const, failureReason: 'insufficient funds', payload: { n: 2 } },
    ];
    expect(await ledger.transitionMany(moves, 'webhook')).toEqual(['applied', 'applied']);
    const movedA = await ledger.get(a.id);
    expect(movedA).toMatchObject({ status: 'success', failureReason: null });
    expect(movedA.completedAt).toBeInstanceOf(Date);
    expect(await ledger.get(b.id)).toMatchObject({ status: 'failed', failureReason: 'insufficient funds' });
    expect(await history(a.id)).toEqual([
      { from: 'pending', to: 'success', source: 'webhook', payload: { event: 'payout.transfer.success', n: 1 } },
    ]);
    expect(await history(b.id)).toEqual([{ from: 'processing', to: 'failed', source: 'webhook', payload: { n: 2 } }]);
    const [message] = await outbox(a.id);
    expect(message.event_type).toBe('payout.succeeded');
    expect(message.payload.data).toMatchObject({
      id: a.id,
      status: 'success',
      amount: 10_000,
      completedAt: movedA.completedAt?.toISOString(),
    });
    expect((await outbox(b.id)).map((m) => m.event_type)).toEqual(['payout.failed']);
  });

  it('transitionMany leaves undecided what the general path must decide, and writes nothing for it', async () => {
    const done = await payout('success');
    const already = await payout('success');
    const duplicate = await payout('failed');
    const same = await payout('pending');
    const review = await payout('needs_review');
    const moves = [
      // A backward move: refused by the state machine from the status read.
      { before: await read(done.id), to: 'failed' as const },
      // Already there: a duplicate, nothing to write; with a failureReason to set, the general path decides.
      { before: await read(already.id), to: 'success' as const },
      { before: await read(duplicate.id), to: 'failed' as const, failureReason: 'again' },
      // The same row twice: the first moves, the second waits for the general path.
      { before: await read(same.id), to: 'success' as const },
      { before: await read(same.id), to: 'failed' as const },
      // Callbacks never move a row out of needs_review.
      { before: await read(review.id), to: 'success' as const },
    ];
    expect(await ledger.transitionMany(moves, 'webhook')).toEqual([null, 'unchanged', null, 'applied', null, null]);
    expect((await ledger.get(done.id)).status).toBe('success');
    expect((await ledger.get(duplicate.id)).failureReason).toBeNull();
    expect((await ledger.get(review.id)).status).toBe('needs_review');
    expect(await history(done.id)).toEqual([]);
    expect(await history(already.id)).toEqual([]);
    expect(await history(same.id)).toEqual([{ from: 'pending', to: 'success', source: 'webhook', payload: null }]);
    expect(await ledger.transitionMany([{ before: await read(same.id), to: 'success' }], 'manual')).toEqual([null]);
  });

  it('moveManyIfFrom claim (lost race): a row whose status changed after it was read does not move', async () => {
    const raced = await payout('pending');
    const fine = await payout('pending');
    const before = await read(raced.id);
    // Another caller settles it between the read and the statement.
    await ledger.transition(raced.id, 'failed', 'reconciliation');
    expect(
      await ledger.transitionMany(
        [
          { before, to: 'success' },
          { before: await read(fine.id), to: 'success' },
        ],
        'webhook',
      ),
    ).toEqual([null, 'applied']);
    expect((await ledger.get(raced.id)).status).toBe('failed');
    expect((await history(raced.id)).map((c) => c.source)).toEqual(['reconciliation']);
    expect((await outbox(raced.id)).map((m) => m.event_type)).toEqual(['payout.failed']);
  });

  it('moveManyIfFrom: concurrent statements over the same rows move each row once and never deadlock', async () => {
    const rows = await Promise.all(Array.from({ length: 20 }, () => payout('pending')));
    const statement = (order: typeof rows) =>
      repo.moveManyIfFrom(
        order.map((row) => ({
          id: row.id,
          from: ['pending'],
          to: 'success',
          final: true,
          failureReason: null,
          payload: undefined,
          event: null,
        })),
        { now: new Date(), source: 'webhook', actorId: null },
      );
    const results = await Promise.all([statement(rows), statement([...rows].reverse()), statement(rows.slice(5))]);
    const moved = results.flatMap((set) => [...set]);
    expect(moved.sort()).toEqual(rows.map((row) => row.id).sort());
    for (const row of rows) expect(await history(row.id)).toHaveLength(1);
  });
});
