import { randomUUID } from 'node:crypto';
import { insertAuditEventSql } from '../../src/audit/audit.repository';
import { CARD_WRITABLE, CardsRepository } from '../../src/cards/cards.repository';
import type { IdempotencyClaim } from '../../src/common/idempotency/idempotency-context';
import { IdempotencyRepository } from '../../src/common/idempotency/idempotency.repository';
import { Prisma } from '../../src/generated/prisma/client';
import { QUOTE_CLAIMABLE, QUOTE_INSERTED, SwapsRepository } from '../../src/swaps/swaps.repository';
import { INSERTED, LedgerRepository, MOVED } from '../../src/transactions/ledger.repository';
import { deferredClaim, insertCard, keyNote, mediumWorld, NO_KEY, type MediumWorld } from '../support/medium';

/**
 * The swap and card top-up write paths' statements sent through node-postgres (one statement
 * each, no transaction): a quote claimed with its swap's write-ahead row, a card movement written
 * under the card's share lock, a move with its effect on another table; each with the
 * Idempotency-Key's note and the audit event written together with the change or not at all.
 */
describe('swap and card write path statements (node-postgres) on a real database', () => {
  let world: MediumWorld;
  let swaps: SwapsRepository;
  let cards: CardsRepository;
  let ledger: LedgerRepository;
  let idempotency: IdempotencyRepository;

  beforeAll(async () => {
    world = await mediumWorld([SwapsRepository, CardsRepository, LedgerRepository, IdempotencyRepository], {
      PROVIDER_TIMEOUT_MS: 1000,
    });
    swaps = world.moduleRef.get(SwapsRepository);
    cards = world.moduleRef.get(CardsRepository);
    ledger = world.moduleRef.get(LedgerRepository);
    idempotency = world.moduleRef.get(IdempotencyRepository);
  });
  afterAll(() => world.close());

  async function apiClient(): Promise<string> {
    const [row] = await world.db.query<{ id: string }>(
      `INSERT INTO api_clients (id, name, key_hash, key_prefix, scopes) VALUES (gen_random_uuid(), 'c', $1, 'wg_', '{}') RETURNING id`,
      [randomUUID()],
    );
    return row.id;
  }

  /** An in-progress Idempotency-Key claim of `clientId`. */
  async function claim(clientId: string): Promise<IdempotencyClaim> {
    const leaseExpiresAt = new Date(Date.now() + 60_000);
    const key = `k-${randomUUID()}`;
    await idempotency.insertInProgress({
      clientId,
      key,
      fingerprint: 'fp',
      expiresAt: new Date(Date.now() + 86_400_000),
      leaseExpiresAt,
    });
    return { clientId, key, leaseExpiresAt };
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
  const event = (targetId: string, details: Record<string, unknown> | null = null) => ({
    actorId: null,
    actorName: 'test',
    action: 'test.change',
    targetType: 'test',
    targetId,
    requestId: null,
    outcome: 'succeeded' as const,
    details,
  });
  const rowCount = async (id: string) =>
    (await world.db.query<{ n: number }>('SELECT count(*)::int AS n FROM transactions WHERE id = $1', [id]))[0].n;

  async function quote(clientId: string, expiresAt = new Date(Date.now() + 60_000)) {
    const id = randomUUID();
    const row = await swaps.createQuote(
      {
        id,
        providerId: `q-${id}`,
        clientId,
        sourceCurrency: 'USD',
        targetCurrency: 'NGN',
        sourceAmount: 10_000n,
        targetAmount: 15_000_000n,
        fee: 50n,
        rate: '1500.123456789012',
        status: 'open',
        expiresAt,
        providerPayload: { id: `q-${id}` },
      },
      insertAuditEventSql(event(id), QUOTE_INSERTED),
    );
    return row;
  }
  const swapRow = (quoteId: string) => {
    const id = randomUUID();
    return {
      id,
      kind: 'swap' as const,
      direction: 'debit' as const,
      status: 'created' as const,
      amount: 10_000n,
      currency: 'USD',
      counterAmount: 15_000_000n,
      counterCurrency: 'NGN',
      exchangeRate: new Prisma.Decimal('1500.123456789012'),
      fee: 50n,
      reference: `swap-${id}`,
      description: `Swap USD to NGN (quote ${quoteId})`,
    };
  };

  it('createQuote stores the quote with its audit event, typed as Prisma reads it', async () => {
    const clientId = await apiClient();
    const row = await quote(clientId);
    expect(await world.prisma.swapQuote.findUniqueOrThrow({ where: { id: row.id } })).toEqual(row);
    expect(await swaps.findQuote(row.id)).toEqual(row);
    expect(row.rate.toString()).toBe('1500.123456789012');
    expect(await auditEvents(row.id)).toBe(1);
  });

  it('claimAndRecord: of concurrent claims of one quote exactly one writes its row, note and audit event', async () => {
    const clientId = await apiClient();
    const q = await quote(clientId);
    const attempts = await Promise.all(
      Array.from({ length: 5 }, async () => {
        const c = await claim(clientId);
        const data = swapRow(q.id);
        const { row: result, keyHeld } = await swaps.claimAndRecord(
          q.id,
          clientId,
          new Date(),
          data,
          { source: 'api', actorId: clientId },
          keyNote(IdempotencyRepository.noteResourceSql(c, 'swap', data.id, QUOTE_CLAIMABLE)),
          insertAuditEventSql(event(data.id), INSERTED),
        );
        // A note, not a deferred claim: the statement inserts no key record.
        expect(keyHeld).toBe(false);
        return { c, data, result };
      }),
    );
    const won = attempts.filter((a) => a.result !== null);
    expect(won).toHaveLength(1);
    const [{ c, data, result }] = won;
    expect(result).toMatchObject({ id: data.id, status: 'created', amount: 10_000n, currency: 'USD' });
    expect(await world.prisma.transaction.findUniqueOrThrow({ where: { id: data.id } })).toEqual(result);
    expect(await record(c)).toEqual({ resource_type: 'swap', resource_id: data.id });
    expect(await auditEvents(data.id)).toBe(1);
    expect(await world.prisma.swapQuote.findUniqueOrThrow({ where: { id: q.id } })).toMatchObject({
      status: 'executing',
      transactionId: data.id,
    });
    for (const lost of attempts.filter((a) => a.result === null)) {
      expect(await rowCount(lost.data.id)).toBe(0);
      expect(await record(lost.c)).toEqual({ resource_type: null, resource_id: null });
      expect(await auditEvents(lost.data.id)).toBe(0);
    }
  });

  it('claimAndRecord claims no quote of another client, and none expired: null, nothing written', async () => {
    const clientId = await apiClient();
    const other = await apiClient();
    for (const [q, by] of [
      [await quote(clientId), other],
      [await quote(clientId, new Date(Date.now() - 1)), clientId],
    ] as const) {
      const c = await claim(by);
      const data = swapRow(q.id);
      const { row: result } = await swaps.claimAndRecord(
        q.id,
        by,
        new Date(),
        data,
        { source: 'api', actorId: by },
        keyNote(IdempotencyRepository.noteResourceSql(c, 'swap', data.id, QUOTE_CLAIMABLE)),
        insertAuditEventSql(event(data.id), INSERTED),
      );
      expect(result).toBeNull();
      expect(await rowCount(data.id)).toBe(0);
      expect(await record(c)).toEqual({ resource_type: null, resource_id: null });
      expect((await swaps.findQuote(q.id))?.status).toBe('open');
    }
  });

  it('claimAndRecord with the Idempotency-Key claim lost: `lost`, the quote stays open, nothing written', async () => {
    const clientId = await apiClient();
    const q = await quote(clientId);
    const c = await claim(clientId);
    const data = swapRow(q.id);
    const { row: result } = await swaps.claimAndRecord(
      q.id,
      clientId,
      new Date(),
      data,
      { source: 'api', actorId: clientId },
      keyNote(
        IdempotencyRepository.noteResourceSql(
          { ...c, leaseExpiresAt: new Date(c.leaseExpiresAt.getTime() + 1) },
          'swap',
          data.id,
          QUOTE_CLAIMABLE,
        ),
      ),
      insertAuditEventSql(event(data.id), INSERTED),
    );
    expect(result).toBe('lost');
    expect(await rowCount(data.id)).toBe(0);
    expect(await auditEvents(data.id)).toBe(0);
    expect((await swaps.findQuote(q.id))?.status).toBe('open');
  });

  it('claimAndRecord with a deferred claim: the key held with the row; the same key again is not held and writes nothing', async () => {
    const clientId = await apiClient();
    const d = deferredClaim(clientId);
    const [first, second] = [await quote(clientId), await quote(clientId)];
    /** claimAndRecord of quote `quoteId`'s swap `row` under the deferred claim `d`. */
    const claimUnder = (quoteId: string, row: ReturnType<typeof swapRow>) =>
      swaps.claimAndRecord(
        quoteId,
        clientId,
        new Date(),
        row,
        { source: 'api', actorId: clientId },
        d.key('swap', row.id, QUOTE_CLAIMABLE),
        insertAuditEventSql(event(row.id), INSERTED),
      );
    const data = swapRow(first.id);
    expect(await claimUnder(first.id, data)).toMatchObject({ keyHeld: true, row: { id: data.id, status: 'created' } });
    expect(await record(d.claim)).toEqual({ resource_type: 'swap', resource_id: data.id });

    const again = swapRow(second.id);
    const taken = await claimUnder(second.id, again);
    expect(taken).toEqual({ row: 'lost', keyHeld: false });
    expect(await rowCount(again.id)).toBe(0);
    expect(await auditEvents(again.id)).toBe(0);
    expect((await swaps.findQuote(second.id))?.status).toBe('open');
    expect(await record(d.claim)).toEqual({ resource_type: 'swap', resource_id: data.id });
  });

  it("moveOnce with a quote's settlement as its effect: both or neither", async () => {
    const clientId = await apiClient();
    const q = await quote(clientId);
    const data = swapRow(q.id);
    await swaps.claimAndRecord(q.id, clientId, new Date(), data, { source: 'api', actorId: null }, NO_KEY, null);
    const move = () =>
      ledger.moveOnce(
        data.id,
        ['created', 'unknown'],
        'success',
        {
          now: new Date(),
          final: true,
          failureReason: null,
          entry: { source: 'api', actorId: null },
          patch: { providerId: `swap-${data.id}` },
          effects: [swaps.settleQuoteSql(q.id, 'executed', MOVED)],
        },
        null,
      );
    expect((await move())?.row).toMatchObject({ status: 'success', providerId: `swap-${data.id}` });
    const settled = await world.prisma.swapQuote.findUniqueOrThrow({ where: { id: q.id } });
    expect(settled.status).toBe('executed');
    expect(settled.executedAt).toBeInstanceOf(Date);
    // Moved already: nothing moves, the quote is not written again.
    await world.db.query(`UPDATE swap_quotes SET status = 'executing' WHERE id = $1`, [q.id]);
    expect(await move()).toBeNull();
    expect((await swaps.findQuote(q.id))?.status).toBe('executing');
  });

  describe('card movements', () => {
    const card = (status: 'active' | 'frozen' = 'active', createdBy: string | null = null) =>
      insertCard(world, { status, createdBy });
    const topUp = (cardId: string) => {
      const id = randomUUID();
      return {
        id,
        kind: 'card_topup' as const,
        direction: 'credit' as const,
        status: 'created' as const,
        amount: 500n,
        cardId,
        reference: `card-topup-${id}`,
        createdBy: null,
      };
    };
    const conditions = (owner?: string) => ({
      statuses: ['active' as const],
      liveSince: new Date(Date.now() - cards.leaseMs),
      owner,
      creator: null,
    });
    /** recordMoneyMove of top-up `data` on card `cardId` by `actorId`, noting it under `key` with its audit event. */
    const recordTopUp = async (
      cardId: string,
      owner: string | undefined,
      actorId: string,
      key: IdempotencyClaim,
      data: ReturnType<typeof topUp>,
    ) =>
      cards.recordMoneyMove(
        cardId,
        conditions(owner),
        data,
        { source: 'api', actorId },
        keyNote(IdempotencyRepository.noteResourceSql(key, 'card_topup', data.id, CARD_WRITABLE)),
        insertAuditEventSql(event(cardId, { transactionId: data.id }), INSERTED),
      );

    it("recordMoneyMove writes the row (the card's currency, customer and owner), note and audit event together", async () => {
      const clientId = await apiClient();
      const c = await card('active', clientId);
      const k = await claim(clientId);
      const data = topUp(c.id);
      const written = await recordTopUp(c.id, clientId, clientId, k, data);
      expect(written.writable).toBe(true);
      // A note, not a deferred claim: the statement inserts no key record.
      expect(written.keyHeld).toBe(false);
      expect(written.card).toMatchObject({ id: c.id, status: 'active', providerId: c.providerId });
      expect(written.row).toMatchObject({
        id: data.id,
        status: 'created',
        currency: c.currency,
        customerId: c.customerId,
        createdBy: clientId,
        amount: 500n,
      });
      expect(await world.prisma.transaction.findUniqueOrThrow({ where: { id: data.id } })).toEqual(written.row);
      expect(await record(k)).toEqual({ resource_type: 'card_topup', resource_id: data.id });
      expect(await auditEvents(c.id)).toBe(1);
    });

    it('recordMoneyMove writes nothing for a frozen card, a terminating one, another client’s, or a lost claim', async () => {
      const clientId = await apiClient();
      const frozen = await card('frozen');
      const terminating = await card('active');
      await world.db.query(`UPDATE cards SET transition = 'terminate', transition_started_at = now() WHERE id = $1`, [
        terminating.id,
      ]);
      const others = await card('active', await apiClient());
      const lostOne = await card('active');
      for (const [c, owner, lose] of [
        [frozen, undefined, false],
        [terminating, undefined, false],
        [others, clientId, false],
        [lostOne, undefined, true],
      ] as const) {
        const k = await claim(clientId);
        const data = topUp(c.id);
        const key = lose ? { ...k, leaseExpiresAt: new Date(k.leaseExpiresAt.getTime() + 1) } : k;
        const written = await recordTopUp(c.id, owner, clientId, key, data);
        expect(written.row).toBeNull();
        expect(written.writable).toBe(lose);
        expect(await rowCount(data.id)).toBe(0);
        expect(await record(k)).toEqual({ resource_type: null, resource_id: null });
        expect(await auditEvents(c.id)).toBe(0);
      }
      const absent = randomUUID();
      expect(
        await cards.recordMoneyMove(
          absent,
          conditions(),
          topUp(absent),
          { source: 'api', actorId: null },
          NO_KEY,
          null,
        ),
      ).toEqual({ card: null, writable: false, row: null, keyHeld: false });
    });

    it('recordMoneyMove with a deferred claim: the key held with the row; the same key again is not held and writes nothing', async () => {
      const clientId = await apiClient();
      const c = await card('active', clientId);
      const d = deferredClaim(clientId);
      const data = topUp(c.id);
      const move = (row: ReturnType<typeof topUp>) =>
        cards.recordMoneyMove(
          c.id,
          conditions(clientId),
          row,
          { source: 'api', actorId: clientId },
          d.key('card_topup', row.id, CARD_WRITABLE),
          insertAuditEventSql(event(c.id, { transactionId: row.id }), INSERTED),
        );
      expect(await move(data)).toMatchObject({ keyHeld: true, writable: true, row: { id: data.id } });
      const again = topUp(c.id);
      const taken = await move(again);
      expect(taken).toMatchObject({ keyHeld: false, row: null });
      expect(await rowCount(again.id)).toBe(0);
      expect(await auditEvents(c.id)).toBe(1);
      expect(await record(d.claim)).toEqual({ resource_type: 'card_topup', resource_id: data.id });
    });

    it("moveOnce with the card's balance as its effect: counted once however often the move is sent", async () => {
      const c = await card('active');
      const data = topUp(c.id);
      await cards.recordMoneyMove(c.id, conditions(), data, { source: 'api', actorId: null }, NO_KEY, null);
      const settle = () =>
        ledger.moveOnce(
          data.id,
          ['created', 'unknown', 'pending'],
          'success',
          {
            now: new Date(),
            final: true,
            failureReason: null,
            entry: { source: 'webhook', actorId: null },
            effects: [cards.addToBalanceSql(c.id, 500n, MOVED)],
          },
          null,
        );
      const results = await Promise.all([settle(), settle(), settle()]);
      expect(results.filter(Boolean)).toHaveLength(1);
      expect((await world.prisma.card.findUniqueOrThrow({ where: { id: c.id } })).balance).toBe(500n);
      expect(await cards.balanceDrift()).toEqual([]);
    });
  });
});
