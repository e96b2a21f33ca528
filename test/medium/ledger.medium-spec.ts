import { randomUUID } from 'node:crypto';
import { ErrorCode, InvalidStateTransitionError, NotFoundError, ProviderError } from '../../src/common/errors';
import { IdempotencyRepository } from '../../src/common/idempotency/idempotency.repository';
import { IdempotencyService } from '../../src/common/idempotency/idempotency.service';
import { Prisma, type TransactionKind, type TransactionStatus } from '../../src/generated/prisma/client';
import { OutboxRepository } from '../../src/outbound/outbox.repository';
import { OutboxService } from '../../src/outbound/outbox.service';
import { ProviderAmountMismatchError } from '../../src/provider/answer-checks';
import { LedgerRepository } from '../../src/transactions/ledger.repository';
import { LedgerService } from '../../src/transactions/ledger.service';
import { insertLedgerRow, mediumWorld, type MediumWorld } from '../support/medium';

describe('LedgerService on a real database', () => {
  let world: MediumWorld;
  let ledger: LedgerService;
  let idempotency: IdempotencyService;

  beforeAll(async () => {
    world = await mediumWorld(
      [LedgerService, LedgerRepository, OutboxService, OutboxRepository, IdempotencyService, IdempotencyRepository],
      { SETTLEMENT_DEADLINE: 30, IDEMPOTENCY_LEASE_MS: 60_000 },
    );
    ledger = world.moduleRef.get(LedgerService);
    idempotency = world.moduleRef.get(IdempotencyService);
  });
  afterAll(() => world.close());

  const row = (status?: TransactionStatus, kind?: TransactionKind, providerId?: string) =>
    insertLedgerRow(world, status, kind, providerId);

  async function history(id: string) {
    return world.db.query<{ from: string | null; to: string; source: string; actor_id: string | null }>(
      `SELECT "from", "to", source::text, actor_id FROM transaction_status_changes WHERE transaction_id = $1 ORDER BY at, id`,
      [id],
    );
  }

  async function outboxFor(id: string) {
    return world.db.query<{ event_type: string }>(
      `SELECT event_type FROM outbox_messages WHERE payload->'data'->>'id' = $1`,
      [id],
    );
  }

  async function subscribe(eventTypes: string[]) {
    const [client] = await world.db.query<{ id: string }>(
      `INSERT INTO api_clients (id, name, key_hash, key_prefix, scopes) VALUES (gen_random_uuid(), 'c', $1, 'wg_', '{}') RETURNING id`,
      [randomUUID()],
    );
    const [sub] = await world.db.query<{ id: string }>(
      `INSERT INTO webhook_subscriptions (id, client_id, url, secret, event_types, updated_at)
       VALUES (gen_random_uuid(), $1, 'https://example.test/hook', 'whsec_x', $2, now()) RETURNING id`,
      [client.id, eventTypes],
    );
    return sub.id;
  }

  it('record writes the row in created with a first history entry (from null)', async () => {
    const recorded = await ledger.record(
      { kind: 'payout', direction: 'debit', amount: 500n, currency: 'NGN', reference: `ref-${randomUUID()}` },
      'api',
    );
    expect(recorded.status).toBe('created');
    expect(await history(recorded.id)).toEqual([{ from: null, to: 'created', source: 'api', actor_id: null }]);
  });

  it('applies an allowed move in one statement, writing history with from/to/source/actorId', async () => {
    const t = await row('created');
    const actor = randomUUID();
    const result = await ledger.transition(t.id, 'initiated', 'webhook', { actorId: actor });
    expect(result.outcome).toBe('applied');
    expect(result.transaction.status).toBe('initiated');
    expect(result.transaction.completedAt).toBeNull();
    expect(await history(t.id)).toEqual([{ from: 'created', to: 'initiated', source: 'webhook', actor_id: actor }]);
    const stored = await world.prisma.transaction.findUniqueOrThrow({ where: { id: t.id } });
    expect(stored.status).toBe('initiated');
  });

  it('applies a move to a final status with a failureReason in one statement and sets completedAt', async () => {
    const t = await row('initiated');
    const result = await ledger.transition(t.id, 'failed', 'webhook', { patch: { failureReason: 'declined' } });
    expect(result.outcome).toBe('applied');
    const stored = await world.prisma.transaction.findUniqueOrThrow({ where: { id: t.id } });
    expect(stored).toMatchObject({ status: 'failed', failureReason: 'declined' });
    expect(stored.completedAt).toBeInstanceOf(Date);
  });

  it('applies the provider answer with the move in one statement, from the row the caller knows, saying `from`', async () => {
    const t = await row('created');
    const result = await ledger.transition(t.id, 'initiated', 'api', {
      known: t,
      patch: { providerId: `prov-${t.id}`, fee: 25n, exchangeRate: '1.5', providerPayload: { ok: true } },
    });
    expect(result).toMatchObject({ outcome: 'applied', from: 'created' });
    const stored = await world.prisma.transaction.findUniqueOrThrow({ where: { id: t.id } });
    expect(stored).toMatchObject({
      status: 'initiated',
      providerId: `prov-${t.id}`,
      fee: 25n,
      providerPayload: { ok: true },
    });
    expect(result.transaction).toEqual(stored);
    expect(await history(t.id)).toEqual([{ from: 'created', to: 'initiated', source: 'api', actor_id: null }]);
  });

  describe('the request answer stored with the move (transition `answer`, under an Idempotency-Key)', () => {
    async function apiClient(): Promise<string> {
      const [client] = await world.db.query<{ id: string }>(
        `INSERT INTO api_clients (id, name, key_hash, key_prefix, scopes) VALUES (gen_random_uuid(), 'c', $1, 'wg_', '{}') RETURNING id`,
        [randomUUID()],
      );
      return client.id;
    }
    const storedAnswer = async (key: string) =>
      (
        await world.db.query(`SELECT state, response_status, response_body FROM idempotency_records WHERE key = $1`, [
          key,
        ])
      )[0];

    it('the move stores the answer in its statement; the request answers exactly it and a retry replays it', async () => {
      const clientId = await apiClient();
      const t = await row('created');
      const key = `k-${t.id}`;
      const view = (r: { id: string; status: string; providerId: string | null }) => ({
        id: r.id,
        status: r.status,
        providerId: r.providerId,
      });
      let answered: unknown;
      const work = async () => {
        const result = await ledger.transition(t.id, 'initiated', 'api', {
          known: t,
          patch: { providerId: `prov-${t.id}` },
          answer: view,
        });
        answered = result.answered;
        return { status: 201, body: answered ?? view(result.transaction) };
      };
      const first = await idempotency.run(clientId, key, 'fp', work);
      expect(answered).toEqual({ id: t.id, status: 'initiated', providerId: `prov-${t.id}` });
      expect(first.body).toBe(answered);
      expect(await storedAnswer(key)).toEqual({ state: 'completed', response_status: 201, response_body: answered });
      expect(await idempotency.run(clientId, key, 'fp', work)).toEqual({ ...first, replayed: true });
    });

    it('an answer predicted otherwise than the row was stored (a rate rounded to 12 places) is replaced by the stored row', async () => {
      const clientId = await apiClient();
      const t = await row('created');
      const key = `k-${t.id}`;
      const view = (r: { exchangeRate: { toFixed(): string } | null }) => ({ rate: r.exchangeRate?.toFixed() ?? null });
      let answered: unknown = 'not set';
      const first = await idempotency.run(clientId, key, 'fp', async () => {
        const result = await ledger.transition(t.id, 'initiated', 'api', {
          known: t,
          patch: { exchangeRate: '1.1234567890123456' },
          answer: view,
        });
        answered = result.answered;
        return { status: 201, body: answered ?? view(result.transaction) };
      });
      expect(answered).toBeUndefined();
      expect(first.body).toEqual({ rate: '1.123456789012' });
      expect(await storedAnswer(key)).toEqual({
        state: 'completed',
        response_status: 201,
        response_body: { rate: '1.123456789012' },
      });
    });
  });

  it('a stale known row changes nothing: the move is decided under the lock (refused, or from the real status)', async () => {
    const t = await row('created');
    await ledger.transition(t.id, 'failed', 'webhook', { patch: { failureReason: 'declined' } });
    const refused = await ledger.transition(t.id, 'initiated', 'api', { known: t, patch: { providerId: `p-${t.id}` } });
    expect(refused).toMatchObject({ outcome: 'refused', from: 'failed' });
    expect((await world.prisma.transaction.findUniqueOrThrow({ where: { id: t.id } })).providerId).toBeNull();
  });

  it('applies through the general path with a patch beyond the provider answer, saying `from`', async () => {
    const t = await row('created');
    const result = await ledger.transition(t.id, 'initiated', 'api', { patch: { description: 'patched' } });
    expect(result).toMatchObject({ outcome: 'applied', from: 'created' });
    const stored = await world.prisma.transaction.findUniqueOrThrow({ where: { id: t.id } });
    expect(stored).toMatchObject({ status: 'initiated', description: 'patched' });
    expect(await history(t.id)).toEqual([{ from: 'created', to: 'initiated', source: 'api', actor_id: null }]);
  });

  it('applies inside an outer transaction, and nothing stays when that transaction rolls back', async () => {
    const kept = await row('created');
    await world.prisma.$transaction((tx) => ledger.transition(kept.id, 'initiated', 'api', { tx }));
    expect((await world.prisma.transaction.findUniqueOrThrow({ where: { id: kept.id } })).status).toBe('initiated');

    const undone = await row('created');
    await expect(
      world.prisma.$transaction(async (tx) => {
        const r = await ledger.transition(undone.id, 'initiated', 'api', { tx });
        expect(r.outcome).toBe('applied');
        throw new Error('caller failed after the move');
      }),
    ).rejects.toThrow('caller failed after the move');
    expect((await world.prisma.transaction.findUniqueOrThrow({ where: { id: undone.id } })).status).toBe('created');
    expect(await history(undone.id)).toEqual([]);
  });

  it('stores the move payload in the history entry as JSON on both paths', async () => {
    const one = await row('created');
    const general = await row('created');
    const payload = { event: 'payout.updated', amount: 10_000, nested: { ok: true } };
    await ledger.transition(one.id, 'initiated', 'webhook', { payload });
    await ledger.transition(general.id, 'initiated', 'webhook', { payload, patch: { providerId: `p-${general.id}` } });
    const stored = await world.db.query<{ transaction_id: string; payload: unknown }>(
      `SELECT transaction_id, payload FROM transaction_status_changes WHERE transaction_id = ANY($1::uuid[])`,
      [[one.id, general.id]],
    );
    expect(stored).toHaveLength(2);
    for (const entry of stored) expect(entry.payload).toEqual(payload);
  });

  it('of concurrent moves of one row to different final statuses exactly one applies, with one history entry', async () => {
    const t = await row('processing', 'collection');
    const results = await Promise.all([
      ledger.transition(t.id, 'success', 'webhook'),
      ledger.transition(t.id, 'failed', 'reconciliation'),
      ledger.transition(t.id, 'success', 'webhook', { patch: { providerId: `p-${t.id}` } }),
      ledger.transition(t.id, 'expired', 'reconciliation', { patch: { failureReason: 'late' } }),
    ]);
    expect(results.filter((r) => r.outcome === 'applied')).toHaveLength(1);
    const stored = await world.prisma.transaction.findUniqueOrThrow({ where: { id: t.id } });
    expect(await history(t.id)).toHaveLength(1);
    expect((await history(t.id))[0]).toMatchObject({ from: 'processing', to: stored.status });
  });

  it('a duplicate move is unchanged and writes no history; a duplicate with a patch updates the patch only', async () => {
    const t = await row('initiated');
    expect((await ledger.transition(t.id, 'initiated', 'webhook')).outcome).toBe('unchanged');
    const patched = await ledger.transition(t.id, 'initiated', 'webhook', { patch: { failureReason: 'note' } });
    expect(patched.outcome).toBe('unchanged');
    expect(patched.transaction.failureReason).toBe('note');
    expect(await history(t.id)).toEqual([]);
  });

  it('refuses a move the state table does not allow, changing nothing', async () => {
    const t = await row('success');
    const result = await ledger.transition(t.id, 'pending', 'webhook');
    expect(result.outcome).toBe('refused');
    expect(result.transaction.status).toBe('success');
    expect(await history(t.id)).toEqual([]);
  });

  it('a strict refused move throws InvalidStateTransitionError (409)', async () => {
    const t = await row('success');
    const error = await ledger.transition(t.id, 'pending', 'api', { strict: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidStateTransitionError);
    expect((error as InvalidStateTransitionError).status).toBe(409);
  });

  it('a strict move to the status the row already has is refused (409) on both paths, writing nothing', async () => {
    const t = await row('created');
    await ledger.transition(t.id, 'initiated', 'api');
    for (const opts of [{}, { patch: { failureReason: 'again' } }]) {
      const alone = await ledger
        .transition(t.id, 'initiated', 'api', { strict: true, ...opts })
        .catch((e: unknown) => e);
      expect(alone).toBeInstanceOf(InvalidStateTransitionError);
      const inTx = await world.prisma
        .$transaction((tx) => ledger.transition(t.id, 'initiated', 'api', { strict: true, tx, ...opts }))
        .catch((e: unknown) => e);
      expect(inTx).toBeInstanceOf(InvalidStateTransitionError);
    }
    expect((await world.prisma.transaction.findUniqueOrThrow({ where: { id: t.id } })).failureReason).toBeNull();
    expect(await history(t.id)).toHaveLength(1);
  });

  describe('claimTransition (a decision taken once)', () => {
    it('of 10 concurrent claims of one row exactly one moves it, with one history entry and one event', async () => {
      await subscribe(['payout.rejected']);
      const t = await row('awaiting_approval', 'payout');
      const claims = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          ledger.claimTransition(t.id, 'payout', 'awaiting_approval', i % 2 ? 'created' : 'rejected', 'api', {
            patch: i % 2 ? undefined : { failureReason: 'no' },
          }),
        ),
      );
      const won = claims.filter((c) => c !== null);
      expect(won).toHaveLength(1);
      const stored = await world.prisma.transaction.findUniqueOrThrow({ where: { id: t.id } });
      expect(won[0]).toEqual(stored);
      expect(await history(t.id)).toEqual([
        { from: 'awaiting_approval', to: stored.status, source: 'api', actor_id: null },
      ]);
      expect(await outboxFor(t.id)).toHaveLength(stored.status === 'rejected' ? 1 : 0);
    });

    it('moves nothing from another status, even one already at the target, nor where the guard fails', async () => {
      const t = await row('created', 'payout');
      expect(await ledger.claimTransition(t.id, 'payout', 'awaiting_approval', 'created', 'api')).toBeNull();
      const held = await row('awaiting_approval', 'payout');
      const guard = Prisma.sql`t.created_at < now() - interval '1 day'`;
      expect(
        await ledger.claimTransition(held.id, 'payout', 'awaiting_approval', 'expired', 'api', { guard }),
      ).toBeNull();
      expect((await world.prisma.transaction.findUniqueOrThrow({ where: { id: held.id } })).status).toBe(
        'awaiting_approval',
      );
      expect(await history(t.id)).toEqual([]);
      expect(await history(held.id)).toEqual([]);
    });

    it('refuses a claim the state table does not allow (a programming error)', async () => {
      const t = await row('awaiting_approval', 'payout');
      await expect(ledger.claimTransition(t.id, 'payout', 'awaiting_approval', 'success', 'api')).rejects.toThrow(
        /may not move/,
      );
    });
  });

  it('an unknown id is NotFound', async () => {
    await expect(ledger.transition(randomUUID(), 'initiated', 'webhook')).rejects.toBeInstanceOf(NotFoundError);
    await expect(ledger.get(randomUUID())).rejects.toBeInstanceOf(NotFoundError);
  });

  it('only a manual move leaves needs_review, and a manual move leaves nothing else', async () => {
    const held = await row('needs_review');
    expect((await ledger.transition(held.id, 'success', 'webhook')).outcome).toBe('refused');
    expect((await ledger.transition(held.id, 'success', 'reconciliation')).outcome).toBe('refused');
    const actor = randomUUID();
    const moved = await ledger.transition(held.id, 'success', 'manual', { actorId: actor });
    expect(moved.outcome).toBe('applied');
    expect(await history(held.id)).toEqual([
      { from: 'needs_review', to: 'success', source: 'manual', actor_id: actor },
    ]);

    const other = await row('initiated');
    expect((await ledger.transition(other.id, 'success', 'manual')).outcome).toBe('refused');
    await expect(ledger.transition(other.id, 'success', 'manual', { strict: true })).rejects.toBeInstanceOf(
      InvalidStateTransitionError,
    );
  });

  it('writes outbox messages for a subscribed event type in the same transaction, on both paths', async () => {
    const oneStatement = await row('initiated');
    const general = await row('initiated');
    const rolledBack = await row('initiated');
    const unsubscribed = await row('initiated', 'collection');
    await subscribe(['payout.succeeded']);

    await ledger.transition(oneStatement.id, 'success', 'webhook');
    await ledger.transition(general.id, 'success', 'webhook', { patch: { providerId: `p-${general.id}` } });
    await world.prisma
      .$transaction(async (tx) => {
        await ledger.transition(rolledBack.id, 'success', 'webhook', { tx });
        throw new Error('rollback');
      })
      .catch(() => undefined);
    await ledger.transition(unsubscribed.id, 'processing', 'webhook');
    await ledger.transition(unsubscribed.id, 'success', 'webhook');

    expect(await outboxFor(oneStatement.id)).toEqual([{ event_type: 'payout.succeeded' }]);
    expect(await outboxFor(general.id)).toEqual([{ event_type: 'payout.succeeded' }]);
    expect(await outboxFor(rolledBack.id)).toEqual([]);
    // collection.paid is not subscribed to: nothing written.
    expect(await outboxFor(unsubscribed.id)).toEqual([]);
  });

  describe('recordProviderFailure', () => {
    it('a provider refusal → failed, with no extensions added', async () => {
      const t = await row('created');
      const error = new ProviderError(ErrorCode.ProviderRejected, 'no', 'createPayout', 400);
      expect(await ledger.recordProviderFailure(t.id, error)).toBe('failed');
      expect(await world.prisma.transaction.findUniqueOrThrow({ where: { id: t.id } })).toMatchObject({
        status: 'failed',
        failureReason: 'no',
      });
      expect(error.extensions).toEqual({ operation: 'createPayout' });
    });

    it('a timeout → unknown, naming the row, its status and settlesBy (creation + SETTLEMENT_DEADLINE)', async () => {
      const t = await row('created');
      const error = new ProviderError(ErrorCode.ProviderTimeout, 'slow', 'createPayout');
      expect(await ledger.recordProviderFailure(t.id, error)).toBe('unknown');
      expect(error.extensions).toEqual({
        operation: 'createPayout',
        transactionId: t.id,
        transactionStatus: 'unknown',
        settlesBy: new Date(t.createdAt.getTime() + 30 * 60_000).toISOString(),
      });
    });

    it('an amount mismatch → needs_review with the provider id and answer kept', async () => {
      const t = await row('created');
      const error = new ProviderAmountMismatchError(
        'createPayout',
        { amountMinor: 10_000n, currency: 'NGN' },
        { amountMinor: 1_000_000n, currency: 'NGN' },
        `prov-${t.id}`,
        { amount: 1_000_000 },
      );
      expect(await ledger.recordProviderFailure(t.id, error)).toBe('needs_review');
      expect(await world.prisma.transaction.findUniqueOrThrow({ where: { id: t.id } })).toMatchObject({
        status: 'needs_review',
        providerId: `prov-${t.id}`,
        providerPayload: { amount: 1_000_000 },
      });
      expect(error.extensions).toMatchObject({ transactionId: t.id, transactionStatus: 'needs_review' });
      expect(error.extensions).not.toHaveProperty('settlesBy');
    });

    it('a row already moved on (callback during the call) stays, and the error names it with settlesBy only', async () => {
      const t = await row('success');
      const error = new ProviderError(ErrorCode.ProviderUnavailable, 'down', 'confirmPayout', 503);
      expect(await ledger.recordProviderFailure(t.id, error)).toBe('unknown');
      expect((await world.prisma.transaction.findUniqueOrThrow({ where: { id: t.id } })).status).toBe('success');
      expect(error.extensions).toEqual({
        operation: 'confirmPayout',
        transactionId: t.id,
        settlesBy: ledger.settlesBy(t).toISOString(),
      });
    });
  });

  it('findByProviderIdOrReference prefers the provider id over the reference', async () => {
    const byRef = await row('created');
    const byProvider = await world.prisma.transaction.update({
      where: { id: (await row('created')).id },
      data: { providerId: `prov-${randomUUID()}` },
    });
    expect((await ledger.findByProviderIdOrReference('payout', byProvider.providerId, byRef.reference))?.id).toBe(
      byProvider.id,
    );
    expect((await ledger.findByProviderIdOrReference('payout', 'nobody', byRef.reference))?.id).toBe(byRef.id);
    expect(await ledger.findByProviderIdOrReference('collection', byProvider.providerId, null)).toBeNull();
    expect(await ledger.findByProviderIdOrReference('payout', null, null)).toBeNull();
  });

  it('registerManualMoveEffect runs the kind owner effect on applyManualMoveEffect, and refuses a second owner', async () => {
    const seen: string[] = [];
    ledger.registerManualMoveEffect(['swap'], (tx, moved, from) => {
      seen.push(`${moved.id}:${from}->${moved.status}`);
      return tx.transaction
        .update({ where: { id: moved.id }, data: { description: 'effect ran' } })
        .then(() => undefined);
    });
    expect(() => ledger.registerManualMoveEffect(['swap'], () => Promise.resolve())).toThrow(/already registered/);

    const swap = await row('needs_review', 'swap');
    const payout = await row('needs_review', 'payout');
    await world.prisma.$transaction(async (tx) => {
      const { transaction } = await ledger.transition(swap.id, 'success', 'manual', { tx });
      await ledger.applyManualMoveEffect(tx, transaction, 'needs_review');
      const other = await ledger.transition(payout.id, 'failed', 'manual', { tx });
      await ledger.applyManualMoveEffect(tx, other.transaction, 'needs_review');
    });
    expect(seen).toEqual([`${swap.id}:needs_review->success`]);
    expect((await world.prisma.transaction.findUniqueOrThrow({ where: { id: swap.id } })).description).toBe(
      'effect ran',
    );
    expect((await world.prisma.transaction.findUniqueOrThrow({ where: { id: payout.id } })).description).toBeNull();
  });
});
