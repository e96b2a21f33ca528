import { randomUUID } from 'node:crypto';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import { ProviderAmountMismatchError, ProviderClient } from '../src/provider';
import { signWebhook } from '../src/webhooks/signature';
import { cardKit } from './support/cards';
import { customerWithBeneficiary } from './support/fixtures';
import { type Harness, startHarness, startPeer, WEBHOOK_SECRET } from './support/harness';

/**
 * Answers checked against requests (issue "Money safety under every failure", item 2), end to end
 * against the simulator and PostgreSQL: swap amounts in either unit reading (gateway
 * SWAP_AMOUNT_UNIT × simulator swapAmountUnit), and payout, collection and card top-up answers
 * that state another amount (simulator fault `amountFactor`).
 */
describe('provider answers checked against requests (e2e)', () => {
  let h: Harness;
  /** A second gateway on the same database and simulator, with SWAP_AMOUNT_UNIT and CARD_EVENT_AMOUNT_UNIT minor. */
  let minorGateway: { app: NestFastifyApplication; close(): Promise<void> };
  let key: string;
  let customerId: string;
  let beneficiaryId: string;
  const auth = () => ({ Authorization: `Bearer ${key}` });

  beforeAll(async () => {
    h = await startHarness({ env: { SWAP_AMOUNT_UNIT: 'major' } });
    Object.assign(process.env, { SWAP_AMOUNT_UNIT: 'minor', CARD_EVENT_AMOUNT_UNIT: 'minor' });
    try {
      minorGateway = await startPeer(h);
    } finally {
      Object.assign(process.env, { SWAP_AMOUNT_UNIT: 'major', CARD_EVENT_AMOUNT_UNIT: 'major' });
    }
    key = await h.key();
    ({ customerId, beneficiaryId } = await customerWithBeneficiary(h, auth(), 'units@example.com'));
  });
  afterAll(async () => {
    await minorGateway?.close();
    await h?.close();
  });
  beforeEach(async () => {
    await h.sim.admin('DELETE', '/faults');
    await h.sim.admin('PUT', '/settings', { swapAmountUnit: 'major' });
  });

  const quoteRows = async () => Number((await h.db.query('SELECT count(*)::int AS n FROM swap_quotes'))[0].n);
  const mismatchMetric = async (gateway: 'major' | 'minor', operation: string) => {
    const http = gateway === 'major' ? h.http() : request(minorGateway.app.getHttpServer());
    const text = (await http.get('/metrics')).text;
    const line = text.split('\n').find((l) => l.startsWith(`provider_amount_mismatch_total{operation="${operation}"}`));
    return line ? Number(line.split(' ').at(-1)) : 0;
  };

  describe('swap amounts: gateway and simulator unit readings', () => {
    const gateways = () => ({ major: h.http(), minor: request(minorGateway.app.getHttpServer()) });
    const quote = (gateway: 'major' | 'minor', amount = 10_000) => {
      const http = gateways()[gateway];
      return http.post('/v1/swap-quotes').set(auth()).send({ sourceCurrency: 'USD', targetCurrency: 'NGN', amount });
    };

    it.each([['major'], ['minor']] as const)(
      'both read %s: the quote echoes the request, the swap executes, the simulator moved exactly that',
      async (unit) => {
        await h.sim.admin('PUT', '/settings', { swapAmountUnit: unit });
        const quoted = await quote(unit);
        expect(quoted.status).toBe(201);
        expect(quoted.body).toMatchObject({ status: 'open', sourceAmount: 10_000, targetAmount: 15_000_000, fee: 50 });
        const sent = (await h.sim.calls('initializeSwap')).at(-1);
        expect(sent?.body.amount).toBe(unit === 'major' ? 100 : 10_000);
        const gateway = gateways()[unit];
        const swap = await gateway
          .post('/v1/swaps')
          .set(auth())
          .set('Idempotency-Key', randomUUID())
          .send({ quoteId: quoted.body.id });
        expect(swap.status).toBe(201);
        expect(swap.body).toMatchObject({ status: 'success', sourceAmount: 10_000, targetAmount: 15_000_000 });
        const records = (await h.sim.admin('GET', '/records')).body.records;
        expect(records.find((r: { id: string }) => r.id === swap.body.providerId)).toMatchObject({
          kind: 'swap',
          amount: '10000',
          currency: 'USD',
        });
      },
    );

    // Gateway major sends 100 (100.00 USD); a simulator reading cents quotes 1.00. Gateway minor sends
    // 10000 (cents); a simulator reading dollars quotes 10,000.00 (the case).
    it.each([
      ['major', 'minor', 100, 100],
      ['minor', 'major', 10_000, 1_000_000],
    ] as const)(
      'gateway %s, simulator %s: the quote is refused (502, hint), nothing stored, no finalize-swap',
      async (gateway, simulator, sent, answeredMinor) => {
        await h.sim.admin('PUT', '/settings', { swapAmountUnit: simulator });
        const quotesBefore = await quoteRows();
        const finalizesBefore = (await h.sim.calls('finalizeSwap')).length;
        const metricBefore = await mismatchMetric(gateway, 'initializeSwap');
        const res = await quote(gateway);
        expect(res.status).toBe(502);
        expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
        expect(res.body).toMatchObject({
          code: 'provider_amount_mismatch',
          status: 502,
          operation: 'initializeSwap',
          asked: { amount: 10_000, currency: 'USD' },
          answered: { amount: answeredMinor, currency: 'USD' },
          hint: 'unit misconfigured?',
          detail: expect.stringContaining('unit misconfigured?'),
        });
        const call = (await h.sim.calls('initializeSwap')).at(-1);
        expect(call?.body.amount).toBe(sent);
        expect(await quoteRows()).toBe(quotesBefore);
        expect((await h.sim.calls('finalizeSwap')).length).toBe(finalizesBefore);
        expect(await mismatchMetric(gateway, 'initializeSwap')).toBe(metricBefore + 1);
      },
    );
  });

  describe('payout, collection and top-up answers stating another amount', () => {
    it('payout initialize answered ×100 → 502, needs_review, confirm refused (409), no finalize sent', async () => {
      await h.sim.setFault('initializePayout', { amountFactor: 100, times: 1 });
      const before = Number(
        (await h.db.query("SELECT count(*)::int AS n FROM transactions WHERE kind = 'payout'"))[0].n,
      );
      const res = await h
        .http()
        .post('/v1/payouts')
        .set(auth())
        .set('Idempotency-Key', randomUUID())
        .send({ customerId, beneficiaryId, amount: 2_500, description: 'rent' });
      expect(res.status).toBe(502);
      expect(res.body).toMatchObject({
        code: 'provider_amount_mismatch',
        operation: 'initializePayout',
        asked: { amount: 2_500, currency: 'USD' },
        answered: { amount: 250_000, currency: 'USD' },
        hint: 'unit misconfigured?',
      });
      const rows = await h.db.query<{ id: string; status: string; provider_id: string | null; failure_reason: string }>(
        "SELECT id, status, provider_id, failure_reason FROM transactions WHERE kind = 'payout' ORDER BY created_at DESC LIMIT 1",
      );
      expect(rows).toHaveLength(1);
      expect(Number((await h.db.query("SELECT count(*)::int AS n FROM transactions WHERE kind = 'payout'"))[0].n)).toBe(
        before + 1,
      );
      const [row] = rows;
      expect(row).toMatchObject({ status: 'needs_review', provider_id: expect.any(String) });
      expect(row.failure_reason).toContain('unit misconfigured?');
      const history = await h.db.query<{ from: string | null; to: string }>(
        'SELECT "from", "to" FROM transaction_status_changes WHERE transaction_id = $1 ORDER BY id',
        [row.id],
      );
      expect(history).toEqual([
        { from: null, to: 'created' },
        { from: 'created', to: 'needs_review' },
      ]);
      const got = await h.http().get(`/v1/payouts/${row.id}`).set(auth());
      expect(got.body).toMatchObject({ status: 'needs_review', amount: 2_500 });
      const confirm = await h
        .http()
        .post(`/v1/payouts/${row.id}/confirm`)
        .set(auth())
        .set('Idempotency-Key', randomUUID());
      expect(confirm.status).toBe(409);
      expect(confirm.body.code).toBe('invalid_state_transition');
      expect(await h.sim.calls('finalizePayout')).toHaveLength(0);
    });

    it('collection whose answer echoes another amount → 502, needs_review, no account detail stored', async () => {
      await h.sim.setFault('initializeCollection', { amountFactor: 100, times: 1 });
      const res = await h
        .http()
        .post('/v1/collections')
        .set(auth())
        .set('Idempotency-Key', randomUUID())
        .send({
          customerId,
          country: 'NG',
          currency: 'NGN',
          amount: 1_000_000, // 10,000.00 NGN; read ×100 it is 1,000,000.00 NGN, still within the NG limit
          description: 'order',
          payer: { type: 'wema', accountName: 'Ada Obi' },
        });
      expect(res.status).toBe(502);
      expect(res.body).toMatchObject({
        code: 'provider_amount_mismatch',
        operation: 'initializeCollection',
        asked: { amount: 1_000_000, currency: 'NGN' },
        answered: { amount: 100_000_000, currency: 'NGN' },
        hint: 'unit misconfigured?',
      });
      const [row] = await h.db.query<{ status: string; account_number: string | null; expires_at: Date | null }>(
        `SELECT t.status, c.account_number, c.expires_at FROM collections c JOIN transactions t ON t.id = c.transaction_id
         ORDER BY c.created_at DESC LIMIT 1`,
      );
      expect(row).toEqual({ status: 'needs_review', account_number: null, expires_at: null });
    });

    it('card top-up answered with another amount → 502, needs_review, card balance unchanged', async () => {
      const kit = cardKit(h, auth);
      const card = await kit.activeCard('topup-units@example.com', 5_000);
      expect(card.balance).toBe(5_000);
      await h.sim.setFault('topUpCard', { amountFactor: 100, times: 1 });
      const res = await h
        .http()
        .post(`/v1/cards/${card.id}/top-ups`)
        .set(auth())
        .set('Idempotency-Key', randomUUID())
        .send({ amount: 700 });
      expect(res.status).toBe(502);
      expect(res.body).toMatchObject({
        code: 'provider_amount_mismatch',
        operation: 'topUpCard',
        asked: { amount: 700, currency: 'USD' },
        answered: { amount: 70_000, currency: 'USD' },
        hint: 'unit misconfigured?',
      });
      const topUp = (await kit.ledger(card.id)).filter((r) => r.kind === 'card_topup').at(-1);
      expect(topUp).toMatchObject({ status: 'needs_review', amount: '700' });
      expect(await kit.balance(card.id)).toBe(5_000);
    });
  });

  describe('card funding at creation', () => {
    it('a creation answer stating another funding → 502, card failed (a late success callback changes nothing), funding needs_review', async () => {
      // The documented creation answer carries no amount (the simulator's neither): the client is
      // made to meet one that states 100× the funding, as the provider layer would refuse it.
      const provider = h.app.get(ProviderClient);
      const original = provider.createCard.bind(provider);
      const spy = jest.spyOn(provider, 'createCard').mockImplementationOnce(async (input) => {
        const created = await original(input);
        throw new ProviderAmountMismatchError(
          'createCard',
          { amountMinor: input.amountMinor, currency: 'USD' },
          { amountMinor: input.amountMinor * 100n, currency: 'USD' },
          created.id,
          created.raw,
        );
      });
      try {
        const kit = cardKit(h, auth);
        const customer = await kit.customer('funding-units@example.com');
        await kit.holder(customer);
        const res = await kit.createCard(customer, 5_000);
        expect(res.status).toBe(502);
        expect(res.body).toMatchObject({ code: 'provider_amount_mismatch', hint: 'unit misconfigured?' });
        const [card] = await h.db.query<{ id: string; status: string; provider_id: string | null; reference: string }>(
          'SELECT id, status, provider_id, reference FROM cards WHERE customer_id = $1',
          [customer],
        );
        expect(card.status).toBe('failed');
        expect((await kit.ledger(card.id)).map((r) => [r.kind, r.status, r.amount])).toEqual([
          ['card_topup', 'needs_review', '5000'],
        ]);
        // The funding row keeps the provider's id for the reviewer.
        const [{ provider_id: providerId }] = await h.db.query<{ provider_id: string }>(
          'SELECT provider_id FROM transactions WHERE card_id = $1',
          [card.id],
        );
        expect(providerId).toEqual(expect.any(String));
        await kit.activate({ providerId, reference: card.reference });
        expect((await h.http().get(`/v1/cards/${card.id}`).set(auth())).body).toMatchObject({
          status: 'failed',
          balance: 0,
        });
        expect((await kit.ledger(card.id))[0].status).toBe('needs_review');
      } finally {
        spy.mockRestore();
      }
    });
  });

  describe('CARD_EVENT_AMOUNT_UNIT (card-event amounts: dollars or cents undocumented)', () => {
    it('each gateway reads a card event amount in its configured unit', async () => {
      const kit = cardKit(h, auth);
      const card = await kit.activeCard('event-units@example.com', 5_000);
      const spend = (http: ReturnType<Harness['http']>, id: string, amount: string | number) => {
        const body = JSON.stringify({
          event: 'virtualcard.transaction.debit',
          data: { id, cardId: card.providerId, amount, narrative: 'Bookshop', status: 'success' },
        });
        return http
          .post('/webhooks/provider')
          .set('content-type', 'application/json')
          .set('x-brails-signature', signWebhook(body, WEBHOOK_SECRET))
          .send(body);
      };
      expect((await spend(h.http(), 'spend_major', '2.50')).status).toBe(200); // major: 2.50 USD
      expect((await spend(request(minorGateway.app.getHttpServer()), 'spend_minor', 250)).status).toBe(200); // minor: 250 cents
      const spends = (await kit.ledger(card.id)).filter((r) => r.kind === 'card_spend');
      expect(spends.map((r) => [r.provider_id, r.amount]).sort()).toEqual([
        ['spend_major', '250'],
        ['spend_minor', '250'],
      ]);
      expect(await kit.balance(card.id)).toBe(4_500);
    });
  });
});
