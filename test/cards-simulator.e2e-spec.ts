import { randomUUID } from 'node:crypto';
import { WebhooksService } from '../src/webhooks/webhooks.service';
import { cardKit, waitFor } from './support/cards';
import { type Harness, startHarness } from './support/harness';

/**
 * Cards end to end with the simulator's own signed callbacks (delivered to the listening gateway).
 * The simulator's delays are long and every delayed move is run by `POST /__admin/flush`, which
 * also waits for the callbacks it sends: each test decides when the provider "settles".
 * Failure triggers of the simulator: amounts whose dollars end in 13, id numbers ending in 13.
 */
describe('cards with the simulator (e2e): callbacks from the provider to the ledger', () => {
  let h: Harness;
  let key: string;
  const auth = () => ({ Authorization: `Bearer ${key}` });
  let kit: ReturnType<typeof cardKit>;
  const flush = () => h.sim.admin('POST', '/flush');
  const card = async (id: string) => (await h.http().get(`/v1/cards/${id}`).set(auth())).body;
  const holder = async (id: string) => (await h.http().get(`/v1/card-holders/${id}`).set(auth())).body;
  const move = (path: string, amount: number) =>
    h.http().post(path).set(auth()).set('Idempotency-Key', randomUUID()).send({ amount });
  const secretOf = async (providerId: string) =>
    ((await h.sim.admin('GET', '/cards/secrets')).body as Array<{ id: string; cardNumber: string }>).find(
      (s) => s.id === providerId,
    );

  beforeAll(async () => {
    h = await startHarness({
      listen: true,
      simulator: { cardCreateDelayMs: 60_000, cardTxnSettleDelayMs: 60_000, kycCallbackDelayMs: 60_000 },
    });
    key = await h.key();
    kit = cardKit(h, auth);
  });
  afterAll(() => h.close());

  it('KYC: the holder becomes active, or failed for an id number ending in 13', async () => {
    const ok = await kit.holder(await kit.customer('sim-kyc-ok@example.com'));
    const bad = await kit.holder(await kit.customer('sim-kyc-bad@example.com'), { idNumber: 'B99999913' });
    expect([ok.status, bad.status]).toEqual(['pending', 'pending']);
    await flush();
    await waitFor(
      'KYC verdicts',
      async () => (await holder(ok.id)).status === 'active' && (await holder(bad.id)).status === 'failed',
    );
    expect((await holder(bad.id)).failureReason).toBeTruthy();
  });

  it('a card becomes active with the real last4 and expiry; its funding settles; 13.00 USD fails creation', async () => {
    const customerId = await kit.customer('sim-card@example.com');
    await kit.holder(customerId);
    const good = (await kit.createCard(customerId, 5000)).body;
    const doomed = (await kit.createCard(customerId, 1300)).body;
    expect([good.status, doomed.status]).toEqual(['pending', 'pending']);
    await flush();
    await waitFor(
      'creation callbacks',
      async () => (await card(good.id)).status === 'active' && (await card(doomed.id)).status === 'failed',
    );
    const active = await card(good.id);
    const secret = await secretOf(good.providerId);
    expect(active.last4).toBe(secret?.cardNumber.slice(-4));
    expect(active).toMatchObject({ createdStatus: 'success', balance: 5000, expiryMonth: expect.any(Number) });
    expect(active.expiryYear).toBeGreaterThanOrEqual(new Date().getUTCFullYear() + 2);
    expect((await kit.ledger(good.id)).map((r) => r.status)).toEqual(['success']);
    expect(await card(doomed.id)).toMatchObject({ status: 'failed', balance: 0 });
    expect((await kit.ledger(doomed.id)).map((r) => r.status)).toEqual(['failed']);
  });

  it('top-ups and withdrawals settle by callback (13.00 USD fails); the balance follows', async () => {
    const active = await waitFor('an active card', async () => {
      const [row] = await h.db.query<{ id: string }>(
        "SELECT c.id FROM cards c JOIN customers u ON u.id = c.customer_id WHERE u.email = 'sim-card@example.com' AND c.status = 'active'",
      );
      return row;
    });
    const up = (await move(`/v1/cards/${active.id}/top-ups`, 2500)).body;
    const upFails = (await move(`/v1/cards/${active.id}/top-ups`, 1300)).body;
    const down = (await move(`/v1/cards/${active.id}/withdrawals`, 1000)).body;
    const downFails = (await move(`/v1/cards/${active.id}/withdrawals`, 1300)).body;
    expect([up, upFails, down, downFails].map((t) => t.status)).toEqual(['pending', 'pending', 'pending', 'pending']);
    await flush();
    const statusOf = async (id: string) => (await kit.ledger(active.id)).find((r) => r.id === id)?.status;
    await waitFor(
      'settlements',
      async () => (await statusOf(downFails.id)) === 'failed' && (await statusOf(up.id)) === 'success',
    );
    expect([await statusOf(up.id), await statusOf(upFails.id), await statusOf(down.id)]).toEqual([
      'success',
      'failed',
      'success',
    ]);
    expect((await card(active.id)).balance).toBe(5000 + 2500 - 1000);
    for (const t of [up, down]) {
      expect((await kit.history(t.id)).at(-1)).toEqual({ from: 'pending', to: 'success', source: 'webhook' });
    }
  });

  it('spending: debit, decline, merchant credit and reversal arrive as callbacks; a sync adds no duplicate', async () => {
    const [active] = await h.db.query<{ id: string; provider_id: string }>(
      "SELECT c.id, c.provider_id FROM cards c JOIN customers u ON u.id = c.customer_id WHERE u.email = 'sim-card@example.com' AND c.status = 'active'",
    );
    const spent = await h.sim.admin('POST', `/cards/${active.provider_id}/spend`, { amount: 700, narrative: 'Books' });
    expect(spent.status).toBe(200);
    await h.sim.admin('POST', `/cards/${active.provider_id}/decline`, { amount: 90_000, narrative: 'TV' });
    await h.sim.admin('POST', `/cards/${active.provider_id}/credit`, { amount: 150, narrative: 'Refund' });
    const spend2 = await h.sim.admin('POST', `/cards/${active.provider_id}/spend`, { amount: 400, narrative: 'Taxi' });
    const spends = async () => (await kit.ledger(active.id)).filter((r) => r.kind === 'card_spend');
    // Reversed once its spend is known here (the out-of-order case is the last test).
    await waitFor('the second spend', async () => (await spends()).length === 4);
    await h.sim.admin('POST', `/card-transactions/${spend2.body.transaction.id}/reverse`);
    await waitFor(
      'spend callbacks',
      async () => (await spends()).length === 4 && (await spends()).some((r) => r.status === 'reversed'),
    );
    expect((await spends()).map((r) => [r.direction, r.status, r.amount])).toEqual([
      ['debit', 'success', '700'],
      ['debit', 'failed', '90000'],
      ['credit', 'success', '150'],
      ['debit', 'reversed', '400'],
    ]);
    const expected = 5000 + 2500 - 1000 - 700 + 150;
    expect((await card(active.id)).balance).toBe(expected);

    const before = await kit.ledger(active.id);
    const listed = await h.http().get(`/v1/cards/${active.id}/transactions?limit=100`).set(auth());
    expect(listed.status).toBe(200);
    expect(await kit.ledger(active.id)).toEqual(before);
    expect((await card(active.id)).balance).toBe(expected);
  });

  it('duplicate and late callbacks change nothing', async () => {
    const [active] = await h.db.query<{ id: string; provider_id: string }>(
      "SELECT c.id, c.provider_id FROM cards c JOIN customers u ON u.id = c.customer_id WHERE u.email = 'sim-card@example.com' AND c.status = 'active'",
    );
    const balance = (await card(active.id)).balance;
    await h.sim.admin('PUT', '/callback-faults', { duplicate: 2, times: 1 });
    const up = (await move(`/v1/cards/${active.id}/top-ups`, 1000)).body;
    await flush();
    await waitFor(
      'the top-up',
      async () => (await kit.ledger(active.id)).find((r) => r.id === up.id)?.status === 'success',
    );
    const deliveries = (await h.sim.admin('GET', '/callbacks?event=virtualcard.topup.success')).body.callbacks.filter(
      (c: { data: { reference: string } }) => c.data.reference === up.reference,
    );
    expect(deliveries.length).toBeGreaterThanOrEqual(1);
    expect((await card(active.id)).balance).toBe(balance + 1000);

    const late = await h.sim.admin('POST', '/callbacks/send', {
      event: 'virtualcard.topup.failed',
      data: {
        id: up.providerId,
        cardId: active.provider_id,
        amount: '10.00',
        status: 'failed',
        reference: up.reference,
      },
    });
    expect(late.body.callback.attempts).toEqual([200]);
    const [inbox] = await h.db.query<{ outcome: string }>(
      "SELECT outcome FROM webhook_events WHERE event = 'virtualcard.topup.failed' AND provider_id = $1",
      [up.providerId],
    );
    expect(inbox.outcome).toBe('refused');
    expect((await card(active.id)).balance).toBe(balance + 1000);
  });

  it('out-of-order: a reversal before its spend is kept unmatched, then applied by the inbox retry', async () => {
    const [active] = await h.db.query<{ id: string; provider_id: string }>(
      "SELECT c.id, c.provider_id FROM cards c JOIN customers u ON u.id = c.customer_id WHERE u.email = 'sim-card@example.com' AND c.status = 'active'",
    );
    const balance = (await card(active.id)).balance;
    await h.sim.admin('PUT', '/callback-faults', { outOfOrder: true, times: 2 });
    const spent = await h.sim.admin('POST', `/cards/${active.provider_id}/spend`, { amount: 300, narrative: 'Late' });
    await h.sim.admin('POST', `/card-transactions/${spent.body.transaction.id}/reverse`);
    await flush();
    await h.sim.admin('GET', '/callbacks/idle');
    const row = await waitFor('the spend', async () =>
      (await kit.ledger(active.id)).find((r) => r.provider_id === spent.body.transaction.id),
    );
    const [reversal] = await h.db.query<{ outcome: string }>(
      "SELECT outcome FROM webhook_events WHERE event = 'virtualcard.transaction.reversed' AND provider_id = $1",
      [spent.body.transaction.id],
    );
    // The reversal came first: nothing to reverse yet, kept for the retry.
    expect(reversal.outcome).toBe('unmatched');
    expect(row.status).toBe('success');
    expect((await card(active.id)).balance).toBe(balance - 300);
    await h.app.get(WebhooksService).retryDue({ now: new Date(Date.now() + 24 * 3600_000) });
    await waitFor(
      'the reversal',
      async () => (await kit.ledger(active.id)).find((r) => r.id === row.id)?.status === 'reversed',
    );
    expect((await card(active.id)).balance).toBe(balance);
    await h.sim.admin('DELETE', '/callback-faults');
  });
});
