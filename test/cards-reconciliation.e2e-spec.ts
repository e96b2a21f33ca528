import { randomUUID } from 'node:crypto';
import { ReconciliationService } from '../src/reconciliation/reconciliation.service';
import { cardKit } from './support/cards';
import { type Harness, startHarness } from './support/harness';

/**
 * A card top-up whose provider answer was lost (the gateway timed out while the provider went on)
 * and whose callback never came (this gateway does not listen): reconciliation reads the card's
 * listing at the provider and settles it, once.
 */
describe('card movements settled by reconciliation (e2e)', () => {
  let h: Harness;
  let auth: Record<string, string>;
  let cardId: string;

  beforeAll(async () => {
    h = await startHarness({ simulator: { cardTxnSettleDelayMs: 10 } });
    auth = { Authorization: `Bearer ${await h.key()}` };
  });
  afterAll(() => h.close());

  /**
   * A top-up of `amount` on `card` whose answer the gateway lost (the provider takes 1.5 s, the
   * gateway gives up after 0.8 s: 504, row `unknown`) but which the provider made; returns its row
   * once the simulator has recorded it.
   */
  async function timedOutTopUp(kit: ReturnType<typeof cardKit>, cardId: string, amount: number) {
    await h.sim.setFault('topUpCard', { latencyMs: 1500, times: 1 });
    const timedOut = await h
      .http()
      .post(`/v1/cards/${cardId}/top-ups`)
      .set(auth)
      .set('Idempotency-Key', randomUUID())
      .send({ amount });
    expect(timedOut.status).toBe(504);
    const [row] = (await kit.ledger(cardId)).filter((r) => r.kind === 'card_topup' && r.amount === String(amount));
    expect(row.status).toBe('unknown');
    const deadline = Date.now() + 5000;
    const atProvider = async () =>
      ((await h.sim.admin('GET', '/records')).body.records as Array<{ reference: string | null }>).some(
        (r) => r.reference === row.reference,
      );
    while (!(await atProvider())) {
      if (Date.now() > deadline) throw new Error('the simulator never recorded the top-up');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await h.sim.admin('POST', '/flush');
    return row;
  }

  it('settles a timed-out top-up from the card listing, and only once', async () => {
    const kit = cardKit(h, () => auth);
    const card = await kit.activeCard('card-recon@example.com', 5000);
    expect(card.balance).toBe(5000);

    const row = await timedOutTopUp(kit, card.id, 700);

    const reconciliation = h.app.get(ReconciliationService);
    const report = await reconciliation.run({ olderThanMs: 0 });
    expect(report).toMatchObject({ cardsSynced: 1, errors: 0 });
    expect(report.cardMoved).toBeGreaterThanOrEqual(1);
    const [settled] = (await kit.ledger(card.id)).filter((r) => r.id === row.id);
    expect(settled.status).toBe('success');
    expect(settled.provider_id).not.toBeNull();
    const moves = await h.db.query(
      'SELECT "from", "to", source FROM transaction_status_changes WHERE transaction_id = $1 ORDER BY id',
      [row.id],
    );
    expect(moves.filter((m) => m.source === 'reconciliation').map((m) => m.to)).toEqual(
      expect.arrayContaining(['success']),
    );
    expect((await h.http().get(`/v1/cards/${card.id}`).set(auth)).body.balance).toBe(5700);

    const again = await reconciliation.run({ olderThanMs: 0 });
    expect(again).toMatchObject({ cardsSynced: 0, cardMoved: 0 });
    expect((await h.http().get(`/v1/cards/${card.id}`).set(auth)).body.balance).toBe(5700);
    expect((await kit.ledger(card.id)).filter((r) => r.kind === 'card_topup' && r.amount === '700')).toHaveLength(1);
    cardId = card.id;
  });

  it('holds a top-up needs_review when the listing shows another amount than its row, the balance untouched', async () => {
    const kit = cardKit(h, () => auth);
    const card = await kit.activeCard('card-recon-amount@example.com', 5000);
    const row = await timedOutTopUp(kit, card.id, 800);
    // The row says 8.01 USD where the provider credited 8.00.
    await h.db.query('UPDATE transactions SET amount = 801 WHERE id = $1', [row.id]);
    await h.app.get(ReconciliationService).run({ olderThanMs: 0 });
    const [held] = await h.db.query<{ status: string; failure_reason: string }>(
      'SELECT status, failure_reason FROM transactions WHERE id = $1',
      [row.id],
    );
    expect(held.status).toBe('needs_review');
    expect(held.failure_reason).toMatch(/8\.00 USD \(800 minor units\).*8\.01 USD \(801 minor units\)/);
    expect((await h.http().get(`/v1/cards/${card.id}`).set(auth)).body.balance).toBe(5000);
  });

  it('reports a card whose stored balance drifted from its ledger, and corrects nothing itself', async () => {
    const reconciliation = h.app.get(ReconciliationService);
    const gauge = async () => {
      const text = (await h.http().get('/metrics')).text;
      return /^card_balance_drift_cards (\d+)$/m.exec(text)?.[1];
    };
    // The card of the test above: 5000 funding + 700 top-up, all settled through the ledger.
    expect((await reconciliation.run({ olderThanMs: 0 })).cardBalanceDrift).toBe(0);
    expect(await gauge()).toBe('0');
    // A move that bypasses the ledger (a bug, a hand edit).
    await h.db.query('UPDATE cards SET balance = balance + 100 WHERE id = $1', [cardId]);
    expect((await reconciliation.run({ olderThanMs: 0 })).cardBalanceDrift).toBe(1);
    expect(await gauge()).toBe('1');
    expect((await h.http().get(`/v1/cards/${cardId}`).set(auth)).body.balance).toBe(5800);
    await h.db.query('UPDATE cards SET balance = balance - 100 WHERE id = $1', [cardId]);
    expect((await reconciliation.run({ olderThanMs: 0 })).cardBalanceDrift).toBe(0);
  });

  it('GET /v1/transactions/{id}?refresh=true settles a card movement from the card listing, never the lookup', async () => {
    const kit = cardKit(h, () => auth);
    await h.sim.setFault('topUpCard', { latencyMs: 1500, times: 1 });
    const timedOut = await h
      .http()
      .post(`/v1/cards/${cardId}/top-ups`)
      .set(auth)
      .set('Idempotency-Key', randomUUID())
      .send({ amount: 800 });
    expect(timedOut.status).toBe(504);
    const [row] = (await kit.ledger(cardId)).filter((r) => r.kind === 'card_topup' && r.amount === '800');
    const deadline = Date.now() + 5000;
    while (
      !((await h.sim.admin('GET', '/records')).body.records as Array<{ reference: string | null }>).some(
        (r) => r.reference === row.reference,
      )
    ) {
      if (Date.now() > deadline) throw new Error('the simulator never recorded the top-up');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await h.sim.admin('POST', '/flush');
    await h.sim.admin('DELETE', '/calls');

    const refreshed = await h.http().get(`/v1/transactions/${row.id}?refresh=true`).set(auth);
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.status).toBe('success');
    expect(refreshed.body.statusHistory.at(-1)).toMatchObject({ to: 'success', source: 'reconciliation' });
    // A final row is not looked up again; card movements never go to GET /transactions/{id}.
    expect((await h.http().get(`/v1/transactions/${row.id}?refresh=true`).set(auth)).status).toBe(200);
    expect(await h.sim.calls('getTransaction')).toEqual([]);
    expect(await h.sim.calls('listCardTransactions')).toHaveLength(1);
  });

  it('syncs a long history once, then reads only its newest page', async () => {
    const provider = (
      await h.db.query<{ provider_id: string }>('SELECT provider_id FROM cards WHERE id = $1', [cardId])
    )[0].provider_id;
    // 120 spends the gateway never heard of (it does not listen for callbacks here): two listing pages.
    for (let i = 0; i < 120; i++) {
      const spent = await h.sim.admin('POST', `/cards/${provider}/spend`, { amount: 1, narrative: `Coffee ${i}` });
      expect(spent.status).toBe(200);
    }
    await h.sim.admin('DELETE', '/calls');
    const first = await h.http().get(`/v1/cards/${cardId}/transactions`).set(auth);
    expect(first.status).toBe(200);
    expect(await h.sim.calls('listCardTransactions')).toHaveLength(2);
    const spends = await h.db.query(`SELECT 1 FROM transactions WHERE card_id = $1 AND kind = 'card_spend'`, [cardId]);
    expect(spends).toHaveLength(120);

    await h.sim.admin('DELETE', '/calls');
    const again = await h.http().get(`/v1/cards/${cardId}/transactions`).set(auth);
    expect(again.status).toBe(200);
    expect(await h.sim.calls('listCardTransactions')).toHaveLength(1);
    expect(
      await h.db.query(`SELECT 1 FROM transactions WHERE card_id = $1 AND kind = 'card_spend'`, [cardId]),
    ).toHaveLength(120);
    expect((await h.http().get(`/v1/cards/${cardId}`).set(auth)).body.balance).toBe(5700 + 800 - 120);
  });
});
