import { randomUUID } from 'node:crypto';
import { IdempotencyRepository } from '../../src/common/idempotency/idempotency.repository';
import { encodeCursor } from '../../src/common/pagination';
import { isUniqueViolation } from '../../src/database/prisma.service';
import type { TransactionKind, TransactionStatus } from '../../src/generated/prisma/client';
import { LedgerRepository, patchFitsOneStatement } from '../../src/transactions/ledger.repository';
import { movableFrom } from '../../src/transactions/ledger.service';
import { insertCard, insertLedgerRow, mediumWorld, type MediumWorld } from '../support/medium';

/** LedgerRepository's methods and claims, one test per outcome (LedgerService's rules: ledger.medium-spec.ts). */
describe('LedgerRepository on a real database', () => {
  let world: MediumWorld;
  let repo: LedgerRepository;

  beforeAll(async () => {
    world = await mediumWorld([LedgerRepository]);
    repo = world.moduleRef.get(LedgerRepository);
  });
  afterAll(() => world.close());

  const row = (status?: TransactionStatus, kind?: TransactionKind, providerId?: string) =>
    insertLedgerRow(world, status, kind, providerId);

  async function history(id: string) {
    return world.db.query<{
      from: string | null;
      to: string;
      source: string;
      payload: unknown;
      actor_id: string | null;
    }>(
      `SELECT "from", "to", source::text, payload, actor_id FROM transaction_status_changes WHERE transaction_id = $1 ORDER BY at, id`,
      [id],
    );
  }

  async function outboxFor(id: string) {
    return world.db.query<{ event_type: string }>(
      `SELECT event_type FROM outbox_messages WHERE payload->'data'->>'id' = $1`,
      [id],
    );
  }

  async function subscribeAll() {
    const [client] = await world.db.query<{ id: string }>(
      `INSERT INTO api_clients (id, name, key_hash, key_prefix, scopes) VALUES (gen_random_uuid(), 'c', $1, 'wg_', '{}') RETURNING id`,
      [randomUUID()],
    );
    await world.db.query(
      `INSERT INTO webhook_subscriptions (id, client_id, url, secret, event_types, updated_at)
       VALUES (gen_random_uuid(), $1, 'https://example.test/hook', 'whsec_x', '{payout.succeeded}', now())`,
      [client.id],
    );
  }

  const move = (source: 'webhook' | 'reconciliation' | 'manual' = 'webhook', failureReason: string | null = null) => ({
    now: new Date(),
    final: true,
    failureReason,
    entry: { source, actorId: null },
  });

  it('insert writes the row and its first history entry (from null) in the caller transaction', async () => {
    const reference = `ref-${randomUUID()}`;
    const inserted = await repo.withTransaction((tx) =>
      repo.insert(
        tx,
        { kind: 'payout', direction: 'debit', amount: 5n, currency: 'NGN', reference, status: 'created' },
        { source: 'api', actorId: null },
      ),
    );
    expect(inserted).toMatchObject({ reference, status: 'created', amount: 5n });
    expect(await history(inserted.id)).toEqual([
      { from: null, to: 'created', source: 'api', payload: null, actor_id: null },
    ]);
  });

  it('insert notes the Idempotency-Key resource in its one statement: noteKept says whether the claim is ours', async () => {
    const [client] = await world.db.query<{ id: string }>(
      `INSERT INTO api_clients (id, name, key_hash, key_prefix, scopes) VALUES (gen_random_uuid(), 'c', $1, 'wg_', '{}') RETURNING id`,
      [randomUUID()],
    );
    const lease = new Date(Date.now() + 60_000);
    await world.db.query(
      `INSERT INTO idempotency_records (id, client_id, key, fingerprint, lease_expires_at, expires_at)
       VALUES (gen_random_uuid(), $1, 'k-ins', 'fp', $2, now() + interval '1 day')`,
      [client.id, lease],
    );
    const claim = { clientId: client.id, key: 'k-ins', leaseExpiresAt: lease };
    const data = () => ({
      id: randomUUID(),
      kind: 'payout' as const,
      direction: 'debit' as const,
      amount: 5n,
      currency: 'NGN',
      reference: `ref-${randomUUID()}`,
      status: 'created' as const,
    });
    const lost = data();
    const stale = IdempotencyRepository.noteResourceSql(
      { ...claim, leaseExpiresAt: new Date(lease.getTime() + 1) },
      'payout',
      lost.id,
    );
    const notKept = await repo.withTransaction((tx) => repo.insert(tx, lost, { source: 'api', actorId: null }, stale));
    expect(notKept).toMatchObject({ id: lost.id, noteKept: false });
    const kept = data();
    const note = IdempotencyRepository.noteResourceSql(claim, 'payout', kept.id);
    const inserted = await repo.withTransaction((tx) => repo.insert(tx, kept, { source: 'api', actorId: null }, note));
    expect(inserted).toMatchObject({ id: kept.id, status: 'created', amount: 5n, fee: 0n, noteKept: true });
    expect(await history(kept.id)).toEqual([
      { from: null, to: 'created', source: 'api', payload: null, actor_id: null },
    ]);
    expect(
      await world.db.query(`SELECT resource_type, resource_id FROM idempotency_records WHERE key = 'k-ins'`),
    ).toEqual([{ resource_type: 'payout', resource_id: kept.id }]);
  });

  it('insert of a taken reference is a unique violation (isUniqueViolation) and writes nothing', async () => {
    const reference = `ref-${randomUUID()}`;
    const data = { kind: 'payout' as const, direction: 'debit' as const, amount: 5n, currency: 'NGN', reference };
    await repo.withTransaction((tx) =>
      repo.insert(tx, { ...data, status: 'created' }, { source: 'api', actorId: null }),
    );
    const error = await repo
      .withTransaction((tx) => repo.insert(tx, { ...data, status: 'created' }, { source: 'api', actorId: null }))
      .catch((e: unknown) => e);
    expect(isUniqueViolation(error)).toBe(true);
    expect(await world.db.query(`SELECT 1 FROM transactions WHERE reference = $1`, [reference])).toHaveLength(1);
  });

  it('insert inside a transaction that rolls back leaves nothing', async () => {
    const reference = `ref-${randomUUID()}`;
    await expect(
      repo.withTransaction(async (tx) => {
        await repo.insert(
          tx,
          { kind: 'payout', direction: 'debit', amount: 5n, currency: 'NGN', reference, status: 'created' },
          { source: 'api', actorId: null },
        );
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await world.db.query(`SELECT 1 FROM transactions WHERE reference = $1`, [reference])).toEqual([]);
  });

  it('lockStatus returns kind and status under the lock, undefined for an unknown id', async () => {
    const t = await row('pending', 'collection');
    expect(await repo.withTransaction((tx) => repo.lockStatus(tx, t.id))).toEqual({
      id: t.id,
      kind: 'collection',
      status: 'pending',
    });
    expect(await repo.withTransaction((tx) => repo.lockStatus(tx, randomUUID()))).toBeUndefined();
  });

  it('find, peek and update read and patch a row without moving it', async () => {
    const t = await row('initiated');
    expect(await repo.find(t.id)).toEqual(t);
    const { providerPayload: _payload, ...fields } = t;
    expect(await repo.peek(t.id)).toMatchObject(fields);
    expect(await repo.find(randomUUID())).toBeNull();
    expect(await repo.peek(randomUUID())).toBeUndefined();
    const patched = await repo.withTransaction((tx) => repo.update(tx, t.id, { description: 'patched' }));
    expect(patched).toMatchObject({ status: 'initiated', description: 'patched' });
    expect(await history(t.id)).toEqual([]);
  });

  it('move writes the decided move and its history entry; completedAt only for a final status', async () => {
    const t = await row('pending');
    const actor = randomUUID();
    const processing = await repo.withTransaction((tx) =>
      repo.move(tx, t.id, 'pending', 'processing', {}, false, { source: 'webhook', payload: { n: 1 }, actorId: actor }),
    );
    expect(processing).toMatchObject({ status: 'processing', completedAt: null });
    const done = await repo.withTransaction((tx) =>
      repo.move(tx, t.id, 'processing', 'success', { failureReason: null }, true, {
        source: 'reconciliation',
        actorId: null,
      }),
    );
    expect(done.status).toBe('success');
    expect(done.completedAt).toBeInstanceOf(Date);
    expect(await history(t.id)).toEqual([
      { from: 'pending', to: 'processing', source: 'webhook', payload: { n: 1 }, actor_id: actor },
      { from: 'processing', to: 'success', source: 'reconciliation', payload: null, actor_id: null },
    ]);
  });

  describe('moveOnce (claim: move the row once, in one statement)', () => {
    /** The moved row, or null when nothing moved. */
    const moveIfFrom = async (...args: Parameters<LedgerRepository['moveOnce']>) =>
      (await repo.moveOnce(...args))?.row ?? null;

    it('moved: the row, its history entry (from the status it left) and the outbox message, together', async () => {
      await subscribeAll();
      const t = await row('pending');
      const moved = await moveIfFrom(
        t.id,
        movableFrom('payout', 'success', 'webhook'),
        'success',
        { ...move('webhook'), entry: { source: 'webhook', payload: { event: 'x' }, actorId: null } },
        { type: 'payout.succeeded', data: { id: t.id } } as { type: string },
      );
      expect(moved).toMatchObject({ id: t.id, status: 'success', amount: 10_000n });
      expect(moved?.completedAt).toBeInstanceOf(Date);
      expect(await history(t.id)).toEqual([
        { from: 'pending', to: 'success', source: 'webhook', payload: { event: 'x' }, actor_id: null },
      ]);
      expect(await outboxFor(t.id)).toEqual([{ event_type: 'payout.succeeded' }]);
    });

    it('moveOnce sets the provider answer with the move and says the status it left', async () => {
      const t = await row('created');
      const moved = await repo.moveOnce(
        t.id,
        ['created'],
        'initiated',
        {
          ...move('webhook'),
          final: false,
          entry: { source: 'api', actorId: null },
          patch: { providerId: `p-${t.id}`, fee: 100n, exchangeRate: '129.5', providerPayload: { id: 'x', n: 1 } },
        },
        null,
      );
      expect(moved?.from).toBe('created');
      expect(moved?.row).toMatchObject({ status: 'initiated', providerId: `p-${t.id}`, fee: 100n, completedAt: null });
      expect(moved?.row.exchangeRate?.toString()).toBe('129.5');
      expect(await repo.find(t.id)).toMatchObject({ providerPayload: { id: 'x', n: 1 }, fee: 100n });
      expect(await history(t.id)).toEqual([
        { from: 'created', to: 'initiated', source: 'api', payload: null, actor_id: null },
      ]);
      expect(patchFitsOneStatement({ providerId: 'x', failureReason: 'why' })).toBe(true);
      expect(patchFitsOneStatement({ failureReason: null })).toBe(false);
      expect(patchFitsOneStatement({ description: 'x' })).toBe(false);
      expect(patchFitsOneStatement({ fee: { increment: 1n } })).toBe(false);
    });

    it('keeps failureReason when given and the existing one when not', async () => {
      const t = await row('pending');
      const failed = await moveIfFrom(t.id, ['pending'], 'failed', move('webhook', 'insufficient funds'), null);
      expect(failed).toMatchObject({ status: 'failed', failureReason: 'insufficient funds' });
      const reversed = await moveIfFrom(t.id, ['failed'], 'reversed', move('webhook'), null);
      expect(reversed).toMatchObject({ status: 'reversed', failureReason: 'insufficient funds' });
    });

    it('refused by the state table: a status not in `from` moves nothing and writes nothing', async () => {
      const t = await row('success');
      expect(movableFrom('payout', 'failed', 'webhook')).not.toContain('success');
      expect(
        await moveIfFrom(t.id, movableFrom('payout', 'failed', 'webhook'), 'failed', move('webhook'), {
          type: 'payout.failed',
        }),
      ).toBeNull();
      expect(await repo.find(t.id)).toMatchObject({ status: 'success' });
      expect(await history(t.id)).toEqual([]);
      expect(await outboxFor(t.id)).toEqual([]);
    });

    it('an unknown id moves nothing', async () => {
      expect(await moveIfFrom(randomUUID(), ['pending'], 'success', move(), null)).toBeNull();
    });

    it('lost race: of concurrent claims on one row exactly one moves it; a later one finds it already moved', async () => {
      const t = await row('pending');
      const results = await Promise.all(
        (['success', 'failed', 'success', 'failed'] as const).map((to) =>
          moveIfFrom(t.id, ['pending'], to, move('webhook'), null),
        ),
      );
      const winners = results.filter((r) => r !== null);
      expect(winners).toHaveLength(1);
      expect(await history(t.id)).toHaveLength(1);
      expect(await moveIfFrom(t.id, ['pending'], 'success', move('webhook'), null)).toBeNull();
      expect((await repo.find(t.id))?.status).toBe(winners[0]?.status);
    });

    it('needs_review: only the manual sources leave it, and the manual sources leave nothing else', async () => {
      const t = await row('needs_review');
      for (const source of ['webhook', 'reconciliation', 'api'] as const) {
        expect(
          await moveIfFrom(t.id, movableFrom('payout', 'success', source), 'success', move('webhook'), null),
        ).toBeNull();
      }
      const pending = await row('pending');
      expect(
        await moveIfFrom(pending.id, movableFrom('payout', 'success', 'manual'), 'success', move('manual'), null),
      ).toBeNull();
      const resolved = await moveIfFrom(
        t.id,
        movableFrom('payout', 'success', 'manual'),
        'success',
        move('manual'),
        null,
      );
      expect(resolved).toMatchObject({ status: 'success' });
      expect(await history(t.id)).toEqual([
        { from: 'needs_review', to: 'success', source: 'manual', payload: null, actor_id: null },
      ]);
    });
  });

  it('findByProviderIdOrReference: by provider id (preferred), by reference, of the asked kind only', async () => {
    const byProvider = await row('pending', 'payout', `po-${randomUUID()}`);
    const byReference = await row('pending', 'payout');
    expect((await repo.findByProviderIdOrReference('payout', byProvider.providerId, byReference.reference))?.id).toBe(
      byProvider.id,
    );
    expect((await repo.findByProviderIdOrReference('payout', null, byReference.reference))?.id).toBe(byReference.id);
    expect(await repo.findByProviderIdOrReference('collection', byProvider.providerId, null)).toBeNull();
    expect(await repo.findByProviderIdOrReference('payout', 'nobody', 'nothing')).toBeNull();
  });

  /** An active card (with its customer and card holder) for the card movement tests. */
  const card = () => insertCard(world);

  describe('card movements on the ledger', () => {
    const movement = (
      cardId: string,
      opts: {
        kind?: 'card_topup' | 'card_withdrawal' | 'card_spend';
        status?: 'created' | 'pending' | 'success';
        providerId?: string | null;
        reference?: string;
      } = {},
    ) =>
      world.prisma.transaction.create({
        data: {
          kind: opts.kind ?? 'card_topup',
          direction: opts.kind === 'card_topup' || !opts.kind ? 'credit' : 'debit',
          status: opts.status ?? 'pending',
          amount: 700n,
          currency: 'USD',
          cardId,
          providerId: opts.providerId ?? null,
          reference: opts.reference ?? `ref-${randomUUID()}`,
        },
      });

    it('findCardMovement: by provider id (any card), else by reference of this card and kind, else null', async () => {
      const c = await card();
      const other = await card();
      const byId = await movement(other.id, { providerId: `ptx-${randomUUID()}` });
      const byRef = await movement(c.id);
      expect((await repo.findCardMovement(c.id, 'card_topup', byId.providerId as string, byRef.reference))?.id).toBe(
        byId.id,
      );
      expect((await repo.findCardMovement(c.id, 'card_topup', 'nobody', byRef.reference))?.id).toBe(byRef.id);
      expect(await repo.findCardMovement(c.id, 'card_withdrawal', 'nobody', byRef.reference)).toBeNull();
      expect(await repo.findCardMovement(other.id, 'card_topup', 'nobody', byRef.reference)).toBeNull();
      expect(await repo.findCardMovement(c.id, 'card_topup', 'nobody', null)).toBeNull();
    });

    it("findCardSpend: the card's movement by provider id, else by reference, else null", async () => {
      const c = await card();
      const spend = await movement(c.id, { kind: 'card_spend', providerId: `sp-${randomUUID()}` });
      expect((await repo.findCardSpend(c.id, spend.providerId, null))?.id).toBe(spend.id);
      expect((await repo.findCardSpend(c.id, 'nobody', spend.reference))?.id).toBe(spend.id);
      expect(await repo.findCardSpend((await card()).id, spend.providerId, spend.reference)).toBeNull();
      expect(await repo.findCardSpend(c.id, null, null)).toBeNull();
    });

    it('referenceTaken: true for a ledger reference in use, false otherwise', async () => {
      const row = await movement((await card()).id);
      expect(await repo.referenceTaken(row.reference)).toBe(true);
      expect(await repo.referenceTaken(`ref-${randomUUID()}`)).toBe(false);
    });

    it("attachProviderId: set when none; kept when one is there; another row's id is left off", async () => {
      const c = await card();
      const row = await movement(c.id);
      const id = `ptx-${randomUUID()}`;
      expect(await repo.attachProviderId(row.id, id)).toBe(true);
      expect(await repo.attachProviderId(row.id, 'ptx-other')).toBe(false);
      const second = await movement(c.id);
      expect(await repo.attachProviderId(second.id, id)).toBe(false);
      const stored = await world.prisma.transaction.findMany({ where: { id: { in: [row.id, second.id] } } });
      expect(stored.find((r) => r.id === row.id)?.providerId).toBe(id);
      expect(stored.find((r) => r.id === second.id)?.providerId).toBeNull();
    });

    it("cardMovementsPage: the card's owner and its movements newest first, after a cursor; openCardMovements: created, unknown, pending only", async () => {
      const c = await card();
      const a = await movement(c.id, { status: 'success' });
      const b = await movement(c.id, { kind: 'card_spend', status: 'pending', providerId: `sp-${randomUUID()}` });
      const listed = await repo.cardMovementsPage(c.id, undefined, 5);
      expect(listed.card).toEqual({ createdBy: c.createdBy });
      expect(listed.rows.map((r) => r.id)).toEqual([b.id, a.id]);
      const cursor = encodeCursor({ createdAt: b.createdAt, id: b.id });
      const after = await repo.cardMovementsPage(c.id, cursor, 5);
      expect(after.rows.map((r) => r.id)).toEqual([a.id]);
      // Past the last movement: the card is still found, with no rows; an unknown card: null.
      expect(await repo.cardMovementsPage(c.id, encodeCursor({ createdAt: a.createdAt, id: a.id }), 5)).toEqual({
        card: { createdBy: c.createdBy },
        rows: [],
      });
      expect(await repo.cardMovementsPage(randomUUID(), undefined, 5)).toEqual({ card: null, rows: [] });
      expect(await repo.openCardMovements(c.id)).toEqual([{ reference: b.reference, providerId: b.providerId }]);
    });
  });
});
