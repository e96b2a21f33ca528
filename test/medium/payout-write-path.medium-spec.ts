import { randomUUID } from 'node:crypto';
import { insertAuditEventSql } from '../../src/audit/audit.repository';
import type { IdempotencyClaim } from '../../src/common/idempotency/idempotency-context';
import { IdempotencyRepository } from '../../src/common/idempotency/idempotency.repository';
import { Prisma } from '../../src/generated/prisma/client';
import { CONFIRM_CLAIMABLE, CONFIRM_WON, PayoutsRepository } from '../../src/payouts/payouts.repository';
import { INSERTED, LedgerRepository } from '../../src/transactions/ledger.repository';
import { deferredClaim, insertLedgerRow, keyNote, mediumWorld, NO_KEY, type MediumWorld } from '../support/medium';

/**
 * The payout write path's statements sent through node-postgres (one statement each, no
 * transaction): the write-ahead insert and the confirm claim, with the Idempotency-Key's note and
 * the audit event written together with the change or not at all, rows typed as Prisma reads them.
 */
describe('payout write path statements (node-postgres) on a real database', () => {
  let world: MediumWorld;
  let ledger: LedgerRepository;
  let payouts: PayoutsRepository;
  let idempotency: IdempotencyRepository;

  beforeAll(async () => {
    world = await mediumWorld([LedgerRepository, PayoutsRepository, IdempotencyRepository]);
    ledger = world.moduleRef.get(LedgerRepository);
    payouts = world.moduleRef.get(PayoutsRepository);
    idempotency = world.moduleRef.get(IdempotencyRepository);
  });
  afterAll(() => world.close());

  /** A new API client and an in-progress Idempotency-Key claim of it. */
  async function claim(): Promise<IdempotencyClaim> {
    const [row] = await world.db.query<{ id: string }>(
      `INSERT INTO api_clients (id, name, key_hash, key_prefix, scopes) VALUES (gen_random_uuid(), 'c', $1, 'wg_', '{}') RETURNING id`,
      [randomUUID()],
    );
    const leaseExpiresAt = new Date(Date.now() + 60_000);
    const key = `k-${randomUUID()}`;
    await idempotency.insertInProgress({
      clientId: row.id,
      key,
      fingerprint: 'fp',
      expiresAt: new Date(Date.now() + 86_400_000),
      leaseExpiresAt,
    });
    return { clientId: row.id, key, leaseExpiresAt };
  }
  const record = async (c: IdempotencyClaim) =>
    (
      await world.db.query<{ resource_type: string | null; resource_id: string | null }>(
        'SELECT resource_type, resource_id FROM idempotency_records WHERE client_id = $1 AND key = $2',
        [c.clientId, c.key],
      )
    )[0];
  const auditEvents = async (targetId: string) =>
    (
      await world.db.query<{ n: number }>('SELECT count(*)::int AS n FROM audit_events WHERE target_id = $1', [
        targetId,
      ])
    )[0].n;
  const event = (targetId: string) => ({
    actorId: null,
    actorName: 'test',
    action: 'payout.create',
    targetType: 'payout',
    targetId,
    requestId: null,
    outcome: 'succeeded' as const,
    details: { why: 'test' },
  });

  it('insertAlone writes the row, its history, the note and the audit event in one statement, typed as Prisma reads them', async () => {
    const c = await claim();
    const id = randomUUID();
    const row = await ledger.insertAlone(
      {
        id,
        kind: 'payout',
        direction: 'debit',
        status: 'created',
        amount: 12_345n,
        currency: 'USD',
        exchangeRate: '1.25',
        reference: `ref-${randomUUID()}`,
      },
      { source: 'api', actorId: c.clientId },
      IdempotencyRepository.noteResourceSql(c, 'payout', id),
      insertAuditEventSql(event(id), INSERTED),
    );
    expect(row).toMatchObject({ id, status: 'created', amount: 12_345n, fee: 0n, currency: 'USD' });
    if (row === 'lost' || row === null) throw new Error('not written');
    expect(row.createdAt).toBeInstanceOf(Date);
    expect(row.exchangeRate).toBeInstanceOf(Prisma.Decimal);
    expect(row.exchangeRate?.toString()).toBe('1.25');
    expect(await world.prisma.transaction.findUniqueOrThrow({ where: { id } })).toEqual(row);
    expect(
      await world.db.query(
        'SELECT "from", "to", source, actor_id FROM transaction_status_changes WHERE transaction_id = $1',
        [id],
      ),
    ).toEqual([{ from: null, to: 'created', source: 'api', actor_id: c.clientId }]);
    expect(await record(c)).toEqual({ resource_type: 'payout', resource_id: id });
    expect(await auditEvents(id)).toBe(1);
  });

  it('insertAlone writes nothing when the Idempotency-Key claim is lost (another lease): `lost`', async () => {
    const c = await claim();
    const id = randomUUID();
    const lost = { ...c, leaseExpiresAt: new Date(c.leaseExpiresAt.getTime() + 1) };
    const row = await ledger.insertAlone(
      {
        id,
        kind: 'payout',
        direction: 'debit',
        status: 'created',
        amount: 1n,
        currency: 'USD',
        reference: `ref-${id}`,
      },
      { source: 'api', actorId: null },
      IdempotencyRepository.noteResourceSql(lost, 'payout', id),
      insertAuditEventSql(event(id), INSERTED),
    );
    expect(row).toBe('lost');
    expect(await world.prisma.transaction.findUnique({ where: { id } })).toBeNull();
    expect(await world.db.query('SELECT 1 FROM transaction_status_changes WHERE transaction_id = $1', [id])).toEqual(
      [],
    );
    expect(await record(c)).toEqual({ resource_type: null, resource_id: null });
    expect(await auditEvents(id)).toBe(0);
  });

  it('claimConfirm: one caller wins (claim, note and audit event together); the next gets null, nothing written', async () => {
    const row = await insertLedgerRow(world, 'initiated');
    const [first, second] = [await claim(), await claim()];
    const won = await payouts.claimConfirm(
      row.id,
      keyNote(IdempotencyRepository.noteResourceSql(first, 'payout', row.id, CONFIRM_CLAIMABLE)),
      insertAuditEventSql(event(row.id), CONFIRM_WON),
      undefined,
    );
    expect(won).toMatchObject({ row: { id: row.id, status: 'initiated', amount: 10_000n }, keyHeld: false });
    expect(won.row !== 'lost' && won.row?.confirmRequestedAt).toBeInstanceOf(Date);
    expect(await record(first)).toEqual({ resource_type: 'payout', resource_id: row.id });
    const again = await payouts.claimConfirm(
      row.id,
      keyNote(IdempotencyRepository.noteResourceSql(second, 'payout', row.id, CONFIRM_CLAIMABLE)),
      insertAuditEventSql(event(row.id), CONFIRM_WON),
      undefined,
    );
    expect(again).toEqual({ row: null, keyHeld: false });
    expect(await record(second)).toEqual({ resource_type: null, resource_id: null });
    expect(await auditEvents(row.id)).toBe(1);
  });

  it('claimConfirm: a lost Idempotency-Key claim is `lost` and writes nothing; another owner or status is null', async () => {
    const row = await insertLedgerRow(world, 'initiated');
    const c = await claim();
    const lost = { ...c, leaseExpiresAt: new Date(c.leaseExpiresAt.getTime() + 1) };
    expect(
      await payouts.claimConfirm(
        row.id,
        keyNote(IdempotencyRepository.noteResourceSql(lost, 'payout', row.id, CONFIRM_CLAIMABLE)),
        insertAuditEventSql(event(row.id), CONFIRM_WON),
        undefined,
      ),
    ).toEqual({ row: 'lost', keyHeld: false });
    expect((await world.prisma.transaction.findUniqueOrThrow({ where: { id: row.id } })).confirmRequestedAt).toBeNull();
    expect(await record(c)).toEqual({ resource_type: null, resource_id: null });
    expect(await auditEvents(row.id)).toBe(0);
    // OWNERSHIP=client: another client's payout is not claimed (its created_by is null here).
    expect((await payouts.claimConfirm(row.id, NO_KEY, null, c.clientId)).row).toBeNull();
    const created = await insertLedgerRow(world, 'created');
    expect((await payouts.claimConfirm(created.id, NO_KEY, null, undefined)).row).toBeNull();
    expect((await payouts.claimConfirm(row.id, NO_KEY, null, undefined)).row).toMatchObject({ id: row.id });
  });

  /** A new API client and a deferred Idempotency-Key claim of it (nothing inserted yet). */
  const deferred = async () => deferredClaim((await claim()).clientId);
  const fullRecord = async (c: IdempotencyClaim) =>
    (
      await world.db.query<{ state: string; resource_type: string | null; resource_id: string | null }>(
        'SELECT state, resource_type, resource_id FROM idempotency_records WHERE client_id = $1 AND key = $2',
        [c.clientId, c.key],
      )
    )[0];

  /** A customer and a beneficiary of it (registered upstream unless `providerId` is null), created by `owner`. */
  async function customerAndBeneficiary(owner: string | null = null, providerId: string | null = `b-${randomUUID()}`) {
    const [customer] = await world.db.query<{ id: string }>(
      `INSERT INTO customers (id, provider_id, email, created_by, updated_at) VALUES (gen_random_uuid(), $1, $2, $3, now()) RETURNING id`,
      [`c-${randomUUID()}`, `${randomUUID()}@example.com`, owner],
    );
    const [beneficiary] = await world.db.query<{ id: string }>(
      `INSERT INTO beneficiaries (id, provider_id, customer_id, country, currency, type, destination, status, reference, created_by, updated_at)
       VALUES (gen_random_uuid(), $1, $2, 'KE', 'KES', 'MOBILEMONEY', '{}', 'active', $3, $4, now()) RETURNING id`,
      [providerId, customer.id, `r-${randomUUID()}`, owner],
    );
    return { customerId: customer.id, beneficiaryId: beneficiary.id };
  }
  const payoutData = (id: string, refs: { customerId: string; beneficiaryId: string }) => ({
    id,
    kind: 'payout' as const,
    direction: 'debit' as const,
    status: 'created' as const,
    amount: 500n,
    currency: 'USD',
    customerId: refs.customerId,
    beneficiaryId: refs.beneficiaryId,
    reference: `ref-${id}`,
  });

  it('insertGuarded with a deferred claim: key, row (counterCurrency from the beneficiary), history, note and audit event in one statement', async () => {
    const refs = await customerAndBeneficiary();
    const d = await deferred();
    const id = randomUUID();
    const guard = payouts.payoutRefsGuard(refs.customerId, refs.beneficiaryId, undefined);
    const written = await ledger.insertGuarded(
      payoutData(id, refs),
      { source: 'api', actorId: d.claim.clientId },
      d.key('payout', id, guard.onlyIf),
      insertAuditEventSql(event(id), INSERTED),
      guard,
    );
    expect(written).toMatchObject({ keyHeld: true, guardHeld: true, row: { id, status: 'created', amount: 500n } });
    expect(written?.row?.counterCurrency).toBe('KES');
    expect(written?.found).toMatchObject({
      refCustomerId: refs.customerId,
      refBeneficiaryProviderId: expect.any(String),
    });
    expect(written?.row).not.toHaveProperty('refCustomerId');
    expect(await world.prisma.transaction.findUniqueOrThrow({ where: { id } })).toEqual(written?.row);
    expect(await fullRecord(d.claim)).toEqual({ state: 'in_progress', resource_type: 'payout', resource_id: id });
    expect(await auditEvents(id)).toBe(1);
  });

  it("insertGuarded: an unknown beneficiary, another customer's or one not registered upstream, or another owner writes nothing but the key (no resource)", async () => {
    const refs = await customerAndBeneficiary();
    const other = await customerAndBeneficiary();
    const unregistered = await customerAndBeneficiary(null, null);
    const owned = await customerAndBeneficiary(null);
    const cases: Array<[{ customerId: string; beneficiaryId: string }, string | undefined]> = [
      [{ customerId: refs.customerId, beneficiaryId: randomUUID() }, undefined],
      [{ customerId: randomUUID(), beneficiaryId: refs.beneficiaryId }, undefined],
      [{ customerId: refs.customerId, beneficiaryId: other.beneficiaryId }, undefined],
      [unregistered, undefined],
      [owned, (await claim()).clientId],
    ];
    for (const [pair, owner] of cases) {
      const d = await deferred();
      const id = randomUUID();
      const guard = payouts.payoutRefsGuard(pair.customerId, pair.beneficiaryId, owner);
      const written = await ledger.insertGuarded(
        payoutData(id, pair),
        { source: 'api', actorId: null },
        d.key('payout', id, guard.onlyIf),
        insertAuditEventSql(event(id), INSERTED),
        guard,
      );
      expect(written).toMatchObject({ row: null, keyHeld: true, guardHeld: false });
      expect(await world.prisma.transaction.findUnique({ where: { id } })).toBeNull();
      expect(await world.db.query('SELECT 1 FROM transaction_status_changes WHERE transaction_id = $1', [id])).toEqual(
        [],
      );
      expect(await fullRecord(d.claim)).toEqual({ state: 'in_progress', resource_type: null, resource_id: null });
      expect(await auditEvents(id)).toBe(0);
    }
  });

  it('insertGuarded: a key already taken writes nothing (keyHeld false); a held claim lost to a retry writes nothing (guardHeld, no row)', async () => {
    const refs = await customerAndBeneficiary();
    const first = await deferred();
    const guard = payouts.payoutRefsGuard(refs.customerId, refs.beneficiaryId, undefined);
    const firstId = randomUUID();
    await ledger.insertGuarded(
      payoutData(firstId, refs),
      { source: 'api', actorId: null },
      first.key('payout', firstId, guard.onlyIf),
      null,
      guard,
    );
    const id = randomUUID();
    const again = await ledger.insertGuarded(
      payoutData(id, refs),
      { source: 'api', actorId: null },
      first.key('payout', id, guard.onlyIf),
      insertAuditEventSql(event(id), INSERTED),
      guard,
    );
    expect(again).toMatchObject({ row: null, keyHeld: false });
    expect(await world.prisma.transaction.findUnique({ where: { id } })).toBeNull();
    expect(await fullRecord(first.claim)).toEqual({
      state: 'in_progress',
      resource_type: 'payout',
      resource_id: firstId,
    });
    expect(await auditEvents(id)).toBe(0);

    const held = await claim();
    const lost = { ...held, leaseExpiresAt: new Date(held.leaseExpiresAt.getTime() + 1) };
    const lostId = randomUUID();
    const written = await ledger.insertGuarded(
      payoutData(lostId, refs),
      { source: 'api', actorId: null },
      keyNote(IdempotencyRepository.noteResourceSql(lost, 'payout', lostId, guard.onlyIf)),
      insertAuditEventSql(event(lostId), INSERTED),
      guard,
    );
    expect(written).toMatchObject({ row: null, keyHeld: false, guardHeld: true });
    expect(await world.prisma.transaction.findUnique({ where: { id: lostId } })).toBeNull();
    expect(await record(held)).toEqual({ resource_type: null, resource_id: null });
  });

  it('claimConfirm with a deferred claim: the key and the claim together; a taken key is not held (nothing written); not confirmable still claims the key', async () => {
    const row = await insertLedgerRow(world, 'initiated');
    const d = await deferred();
    const won = await payouts.claimConfirm(
      row.id,
      d.key('payout', row.id, CONFIRM_CLAIMABLE),
      insertAuditEventSql(event(row.id), CONFIRM_WON),
      undefined,
    );
    expect(won).toMatchObject({ row: { id: row.id, status: 'initiated' }, keyHeld: true });
    expect(await fullRecord(d.claim)).toEqual({ state: 'in_progress', resource_type: 'payout', resource_id: row.id });
    expect(await auditEvents(row.id)).toBe(1);

    const other = await insertLedgerRow(world, 'initiated');
    const taken = await payouts.claimConfirm(
      other.id,
      d.key('payout', other.id, CONFIRM_CLAIMABLE),
      insertAuditEventSql(event(other.id), CONFIRM_WON),
      undefined,
    );
    // Claimable, but the key is another request's: nothing written (`settled(false)` throws
    // IdempotencyKeyTaken before `row` is read).
    expect(taken).toEqual({ row: 'lost', keyHeld: false });
    expect(
      (await world.prisma.transaction.findUniqueOrThrow({ where: { id: other.id } })).confirmRequestedAt,
    ).toBeNull();
    expect(await auditEvents(other.id)).toBe(0);

    const late = await deferred();
    expect(
      await payouts.claimConfirm(
        row.id,
        late.key('payout', row.id, CONFIRM_CLAIMABLE),
        insertAuditEventSql(event(row.id), CONFIRM_WON),
        undefined,
      ),
    ).toEqual({ row: null, keyHeld: true });
    expect(await fullRecord(late.claim)).toEqual({ state: 'in_progress', resource_type: null, resource_id: null });
    expect(await auditEvents(row.id)).toBe(1);
  });
});
