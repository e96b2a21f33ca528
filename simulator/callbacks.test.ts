import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { signCallback } from './callbacks';
import { cardUserBody, type TestSim, testSimulator } from './testing';

const SECRET = 'whsec-callback-test';

/** One request the receiver got: parsed body, headers, and whether the signature is right. */
interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  raw: string;
  body: { event: string; data: Record<string, any> };
  signed: boolean;
  validSignature: boolean;
}

/**
 * A tiny webhook receiver on a loopback port: records every POST and verifies `x-brails-signature`
 * against the raw body. Answers 200, or the next status queued in `respond`.
 */
class Receiver {
  received: Received[] = [];
  respond: number[] = [];
  private server!: Server;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      let raw = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (raw += chunk));
      req.on('end', () => {
        const signature = req.headers['x-brails-signature'];
        this.received.push({
          path: req.url ?? '',
          headers: req.headers,
          raw,
          body: JSON.parse(raw),
          signed: signature !== undefined,
          validSignature: signature === signCallback(raw, SECRET),
        });
        res.statusCode = this.respond.shift() ?? 200;
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
    return this;
  }

  /** Events received so far, in order. */
  events(): string[] {
    return this.received.map((r) => r.body.event);
  }

  /** Polls until `n` requests arrived (deadline `ms`); answers them. */
  async waitFor(n: number, ms = 5000): Promise<Received[]> {
    const deadline = Date.now() + ms;
    while (this.received.length < n) {
      if (Date.now() > deadline) throw new Error(`expected ${n} callbacks, got ${this.received.length}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    return this.received;
  }

  reset(): void {
    this.received = [];
    this.respond = [];
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const NG_BANK = {
  type: 'BANK',
  bankCode: '058',
  bankName: 'GTBank',
  accountName: 'Ada Obi',
  accountNumber: '0123456789',
};

describe('simulator callbacks', () => {
  let receiver: Receiver;
  let sim: TestSim;
  let email: string;
  let n = 0;
  const ref = (prefix: string) => `${prefix}-${++n}`;

  beforeAll(async () => {
    receiver = await new Receiver().start();
  });
  afterAll(() => receiver.close());
  beforeEach(async () => {
    receiver.reset();
    sim = await testSimulator({ webhookSecret: SECRET, webhookUrl: `${receiver.url}/account-hook` });
    email = (await sim.customer()).email;
  });
  afterEach(() => sim.app.close());

  const callbackLog = async (event?: string) =>
    (await sim.admin('GET', `/callbacks${event ? `?event=${event}` : ''}`)).body.callbacks;

  // ---- payouts -------------------------------------------------------------------------------

  const beneficiary = async (over: Record<string, unknown> = {}) =>
    (
      await sim.api('POST', '/beneficiaries', {
        currency: 'NGN',
        reference: ref('ben'),
        country: 'NG',
        destination: NG_BANK,
        customerEmail: email,
        ...over,
      })
    ).body.data;
  /** A finalized (`pending`) payout of `amount` USD cents. */
  const pendingPayout = async (amount: number, over: Record<string, unknown> = {}) => {
    const b = await beneficiary();
    const init = await sim.api('POST', '/wallets/payout/initialize', {
      amount,
      reference: ref('po'),
      customerEmail: email,
      description: 'test',
      beneficiaryId: b.id,
      ...over,
    });
    expect(init.status).toBe(200);
    const fin = await sim.api('POST', '/wallets/payout/finalize', { transactionId: init.body.data.id });
    expect(fin.body.data.status).toBe('pending');
    return init.body.data;
  };

  describe('payout.transfer.*', () => {
    it('admin complete sends a signed payout.transfer.success to the payout callbackUrl', async () => {
      const payout = await pendingPayout(10_000, { callbackUrl: `${receiver.url}/payout-hook` });
      const done = await sim.admin('POST', `/payouts/${payout.id}/complete`, { status: 'success' });
      expect(done.body.callback).toMatchObject({
        event: 'payout.transfer.success',
        url: `${receiver.url}/payout-hook`,
        status: 'delivered',
        attempts: [200],
        faults: {},
      });
      const [got] = receiver.received;
      expect(got.path).toBe('/payout-hook');
      expect(got.validSignature).toBe(true);
      expect(got.headers['content-type']).toBe('application/json');
      expect(got.body).toEqual({
        event: 'payout.transfer.success',
        data: expect.objectContaining({
          id: payout.id,
          reference: payout.reference,
          status: 'success',
          amount: '100.00',
          fees: '1.00',
          action: 'ng_account_payout',
          channel: 'payout',
          type: 'debit',
          companyId: expect.any(String),
        }),
      });
    });

    it('goes to the account webhook URL when the payout took no callbackUrl', async () => {
      const payout = await pendingPayout(10_000);
      await sim.admin('POST', `/payouts/${payout.id}/complete`, { status: 'failed' });
      expect(receiver.received.map((r) => [r.path, r.body.event])).toEqual([
        ['/account-hook', 'payout.transfer.failed'],
      ]);
      expect(receiver.received[0].body.data).toMatchObject({ status: 'failed', reason: expect.any(String) });
    });

    it('without a status, admin complete fails a payout whose dollars end in 13 and refunds it', async () => {
      const ok = await pendingPayout(11_200);
      const bad = await pendingPayout(11_300);
      const before = sim.state.balance('USD');
      expect((await sim.admin('POST', `/payouts/${ok.id}/complete`)).body.transaction.status).toBe('SUCCESS');
      expect((await sim.admin('POST', `/payouts/${bad.id}/complete`)).body.transaction.status).toBe('FAILED');
      expect(sim.state.balance('USD') - before).toBe(11_300n + 113n); // amount + 1% fee back
      expect(receiver.events()).toEqual(['payout.transfer.success', 'payout.transfer.failed']);
    });

    it('admin complete finds a payout by its reference, or by the gateway id its reference carries', async () => {
      // The gateway's payout `wg-payout-<its id without dashes>`: completed by the gateway's id.
      const gatewayId = randomUUID();
      const byGatewayId = await pendingPayout(10_000, { reference: `wg-payout-${gatewayId.replace(/-/g, '')}` });
      const done = await sim.admin('POST', `/payouts/${gatewayId}/complete`, { status: 'success' });
      expect(done.status).toBe(200);
      expect(done.body.transaction).toMatchObject({ id: byGatewayId.id, status: 'SUCCESS' });
      const byReference = await pendingPayout(10_000);
      const failed = await sim.admin('POST', `/payouts/${encodeURIComponent(byReference.reference)}/complete`, {
        status: 'failed',
      });
      expect(failed.body.transaction).toMatchObject({ id: byReference.id, status: 'FAILED' });
      expect(receiver.events()).toEqual(['payout.transfer.success', 'payout.transfer.failed']);
      // An id that names no payout (a UUID of no gateway payout here, or anything else) is still 404.
      expect((await sim.admin('POST', `/payouts/${randomUUID()}/complete`)).status).toBe(404);
      expect((await sim.admin('POST', '/payouts/nope/complete')).status).toBe(404);
    });

    it('payoutCompleteDelayMs completes finalized payouts by themselves (13 → failed, refunded)', async () => {
      await sim.app.close();
      sim = await testSimulator({
        webhookSecret: SECRET,
        webhookUrl: `${receiver.url}/account-hook`,
        payoutCompleteDelayMs: 20,
      });
      email = (await sim.customer()).email;
      const start = sim.state.balance('USD');
      const ok = await pendingPayout(5_000);
      const bad = await pendingPayout(1_300);
      await receiver.waitFor(2);
      const byId = Object.fromEntries(receiver.received.map((r) => [r.body.data.id, r.body]));
      expect(byId[ok.id]).toMatchObject({ event: 'payout.transfer.success', data: { amount: '50.00' } });
      expect(byId[bad.id]).toMatchObject({ event: 'payout.transfer.failed', data: { amount: '13.00' } });
      expect(sim.state.payouts.get(ok.id)?.status).toBe('success');
      expect(sim.state.payouts.get(bad.id)?.status).toBe('failed');
      expect(start - sim.state.balance('USD')).toBe(5_000n + 100n);
      // Completed already: the admin route refuses it.
      expect((await sim.admin('POST', `/payouts/${ok.id}/complete`)).body.message).toBe('Payout is success');
    });

    it('flush completes payouts waiting for payoutCompleteDelayMs and waits for their callbacks', async () => {
      await sim.app.close();
      sim = await testSimulator({ webhookSecret: SECRET, webhookUrl: receiver.url, payoutCompleteDelayMs: 60_000 });
      email = (await sim.customer()).email;
      const payout = await pendingPayout(7_000);
      expect(receiver.received).toHaveLength(0);
      expect((await sim.admin('POST', '/flush')).body).toEqual({ ran: 1, callbacks: 1 });
      expect(receiver.events()).toEqual(['payout.transfer.success']);
      expect(sim.state.payouts.get(payout.id)?.status).toBe('success');
    });

    it('leaves payouts pending by default', async () => {
      const payout = await pendingPayout(5_000);
      expect((await sim.admin('POST', '/flush')).body.ran).toBe(0);
      expect(sim.state.payouts.get(payout.id)?.status).toBe('pending');
      expect(await callbackLog()).toEqual([]);
    });
  });

  // ---- collections and beneficiaries ---------------------------------------------------------

  it('transaction.deposit.success when a collection is paid (all fields strings)', async () => {
    const init = await sim.api('POST', '/wallets/collections/initialize', {
      country: 'NG',
      currency: 'ngn',
      customerEmail: email,
      amount: 6_500_000,
      reference: ref('col'),
      description: 'Top-up',
      payload: { type: 'Wema Bank', accountName: 'Ada Obi' },
    });
    const paid = await sim.admin('POST', `/collections/${init.body.data.id}/pay`);
    expect(paid.body.callback).toMatchObject({ attempts: [200], url: `${receiver.url}/account-hook` });
    const [got] = receiver.received;
    expect(got.validSignature).toBe(true);
    expect(got.body).toEqual({
      event: 'transaction.deposit.success',
      data: {
        id: init.body.data.id,
        reference: init.body.data.reference,
        status: 'success',
        amount: '65000.00',
        fees: '975.00',
        currency: 'ngn',
        action: 'deposit_ngn',
        channel: 'collection',
        senderName: 'Simulated Payer',
      },
    });
  });

  describe('beneficiary.status.success', () => {
    it('is not sent unless beneficiaryCallbackDelayMs is set', async () => {
      await beneficiary();
      expect((await sim.admin('GET', '/callbacks/idle')).body).toEqual({ idle: true, pending: 0 });
      expect(await callbackLog()).toEqual([]);
    });

    it('follows a new beneficiary after beneficiaryCallbackDelayMs, to its callbackUrl', async () => {
      await sim.app.close();
      sim = await testSimulator({ webhookSecret: SECRET, webhookUrl: receiver.url, beneficiaryCallbackDelayMs: 30 });
      email = (await sim.customer()).email;
      const b = await beneficiary({ callbackUrl: `${receiver.url}/ben-hook` });
      expect((await callbackLog())[0]).toMatchObject({ event: 'beneficiary.status.success', status: 'waiting' });
      const [got] = await receiver.waitFor(1);
      expect(got.path).toBe('/ben-hook');
      expect(got.validSignature).toBe(true);
      expect(got.body).toEqual({
        event: 'beneficiary.status.success',
        data: { id: b.id, reference: b.reference, status: 'success' },
      });
    });
  });

  // ---- cards ---------------------------------------------------------------------------------

  const register = (idNumber = 'A1234567') =>
    sim.api('POST', '/virtualcards/registercarduser', cardUserBody(email, { idNumber }));
  const createCard = (amount: number) =>
    sim.api('POST', '/virtualcards/create', {
      customerEmail: email,
      cardBrand: 'visa',
      cardType: 'virtual',
      reference: ref('card'),
      amount,
    });
  /** A registered user's card, created (flushed), with the receiver emptied. */
  const liveCard = async (amount = 10_000) => {
    await register();
    const card = (await createCard(amount)).body.data;
    await sim.admin('POST', '/flush');
    receiver.reset();
    await sim.admin('DELETE', '/callbacks');
    return card;
  };
  const cardMoney = async (kind: 'topup' | 'withdraw', cardId: string, amount: number) => {
    const res = await sim.api('POST', `/virtualcards/${kind}`, { amount, cardId, reference: ref('ct') });
    expect(res.status).toBe(200);
    return res.body.data;
  };

  describe('virtualcard.user.kyc.*', () => {
    it('success after registration (kycCallbackDelayMs)', async () => {
      const user = (await register()).body.data;
      expect(user).toMatchObject({ status: 'active', kycPassed: true });
      const [got] = await receiver.waitFor(1);
      expect(got.validSignature).toBe(true);
      expect(got.body).toEqual({
        event: 'virtualcard.user.kyc.success',
        data: { id: user.id, customerEmail: email, status: 'success' },
      });
    });

    it('failed when the id number ends in 13: pending, then failed; no card for that user', async () => {
      const user = (await register('A1234513')).body.data;
      expect(user).toMatchObject({ status: 'pending', kycPassed: false });
      const [got] = await receiver.waitFor(1);
      expect(got.body).toEqual({
        event: 'virtualcard.user.kyc.failed',
        data: { id: user.id, customerEmail: email, status: 'failed', reason: expect.any(String) },
      });
      expect((await createCard(1_000)).body).toMatchObject({ statusCode: 400, message: 'Card user KYC is failed' });
    });
  });

  describe('virtualcard.created.*', () => {
    it('success when creation completes: card fields, never the number or CVV', async () => {
      await register();
      await receiver.waitFor(1);
      receiver.reset();
      const card = (await createCard(2_500)).body.data;
      expect(receiver.received).toHaveLength(0);
      expect((await sim.admin('POST', '/flush')).body.ran).toBe(1);
      const [got] = receiver.received;
      const stored = sim.state.cards.get(card.id)!;
      expect(got.validSignature).toBe(true);
      expect(got.body).toEqual({
        event: 'virtualcard.created.success',
        data: {
          id: card.id,
          reference: card.reference,
          status: 'active',
          createdStatus: 'success',
          cardUserId: card.cardUserId,
          last4: stored.cardNumber.slice(-4),
          cardBrand: 'visa',
          valid: expect.stringMatching(/^\d{2}\/\d{4}$/),
        },
      });
      expect(got.raw).not.toContain(stored.cardNumber);
      expect(got.raw).not.toContain(`"${stored.cvv2}"`);
      expect(stored.balance).toBe(2_500n);
    });

    it('failed when the initial amount ends in 13 dollars: card failed, wallet refunded', async () => {
      await register();
      await receiver.waitFor(1);
      receiver.reset();
      const before = sim.state.balance('USD');
      const card = (await createCard(11_300)).body.data;
      expect(sim.state.balance('USD')).toBe(before - 11_300n);
      await sim.admin('POST', '/flush');
      expect(receiver.received.map((r) => r.body)).toEqual([
        {
          event: 'virtualcard.created.failed',
          data: { id: card.id, reference: card.reference, reason: expect.any(String) },
        },
      ]);
      expect(sim.state.cards.get(card.id)).toMatchObject({ status: 'failed', createdStatus: 'failed', balance: 0n });
      expect(sim.state.balance('USD')).toBe(before);
      expect((await sim.api('POST', '/virtualcards/freeze', { cardId: card.id })).body.message).toBe('Card is failed');
    });
  });

  describe('virtualcard.topup|withdrawal.*', () => {
    it('top-up success and failed (13 dollars: back to the wallet)', async () => {
      const card = await liveCard(10_000);
      const wallet = sim.state.balance('USD');
      const ok = await cardMoney('topup', card.id, 2_000);
      const bad = await cardMoney('topup', card.id, 1_300);
      expect(sim.state.balance('USD')).toBe(wallet - 3_300n);
      await sim.admin('POST', '/flush');
      expect(receiver.received.map((r) => r.body)).toEqual([
        {
          event: 'virtualcard.topup.success',
          data: {
            id: ok.id,
            cardId: card.id,
            amount: '20.00',
            currency: 'usd',
            narrative: null,
            status: 'success',
            reference: ok.reference,
          },
        },
        {
          event: 'virtualcard.topup.failed',
          data: {
            id: bad.id,
            cardId: card.id,
            amount: '13.00',
            currency: 'usd',
            narrative: null,
            status: 'failed',
            reference: bad.reference,
            reason: expect.any(String),
          },
        },
      ]);
      expect(sim.state.cards.get(card.id)?.balance).toBe(12_000n);
      expect(sim.state.balance('USD')).toBe(wallet - 2_000n);
    });

    it('withdrawal success and failed (13 dollars: back on the card)', async () => {
      const card = await liveCard(10_000);
      const wallet = sim.state.balance('USD');
      const ok = await cardMoney('withdraw', card.id, 500);
      const bad = await cardMoney('withdraw', card.id, 1_300);
      expect(sim.state.cards.get(card.id)?.balance).toBe(8_200n);
      await sim.admin('POST', '/flush');
      expect(receiver.events()).toEqual(['virtualcard.withdrawal.success', 'virtualcard.withdrawal.failed']);
      expect(receiver.received[0].body.data).toMatchObject({ id: ok.id, amount: '5.00', status: 'success' });
      expect(receiver.received[1].body.data).toMatchObject({ id: bad.id, amount: '13.00', status: 'failed' });
      expect(sim.state.cards.get(card.id)?.balance).toBe(9_500n);
      expect(sim.state.balance('USD')).toBe(wallet + 500n);
    });
  });

  describe('virtualcard.transaction.*', () => {
    it('spend → debit; decline → declined (no balance change); credit; reverse → reversed', async () => {
      const card = await liveCard(10_000);
      const spend = await sim.admin('POST', `/cards/${card.id}/spend`, { amount: 1_050, narrative: 'NETFLIX.COM' });
      expect(spend.body.callback).toMatchObject({ event: 'virtualcard.transaction.debit', attempts: [200] });
      const declined = await sim.admin('POST', `/cards/${card.id}/decline`, {
        amount: 99_999,
        narrative: 'APPLE.COM',
        reason: 'Insufficient funds',
      });
      expect(declined.body.transaction).toMatchObject({ status: 'declined', type: 'debit', centAmount: 99_999 });
      expect(sim.state.cards.get(card.id)?.balance).toBe(8_950n);
      const credit = await sim.admin('POST', `/cards/${card.id}/credit`, { amount: 300, narrative: 'AMAZON REFUND' });
      expect(credit.body.transaction).toMatchObject({ status: 'success', type: 'credit', method: 'credit' });
      expect(sim.state.cards.get(card.id)?.balance).toBe(9_250n);
      const reversed = await sim.admin('POST', `/card-transactions/${spend.body.transaction.id}/reverse`);
      expect(reversed.body.transaction).toMatchObject({ id: spend.body.transaction.id, status: 'reversed' });
      expect(sim.state.cards.get(card.id)?.balance).toBe(10_300n);

      expect(receiver.received.every((r) => r.validSignature)).toBe(true);
      expect(receiver.received.map((r) => r.body)).toEqual([
        {
          event: 'virtualcard.transaction.debit',
          data: {
            id: spend.body.transaction.id,
            cardId: card.id,
            amount: '10.50',
            currency: 'usd',
            narrative: 'NETFLIX.COM',
            status: 'success',
            reference: spend.body.transaction.reference,
          },
        },
        {
          event: 'virtualcard.transaction.declined',
          data: expect.objectContaining({
            id: declined.body.transaction.id,
            amount: '999.99',
            narrative: 'APPLE.COM',
            status: 'declined',
            reason: 'Insufficient funds',
          }),
        },
        {
          event: 'virtualcard.transaction.credit',
          data: expect.objectContaining({ id: credit.body.transaction.id, amount: '3.00', status: 'success' }),
        },
        {
          event: 'virtualcard.transaction.reversed',
          data: expect.objectContaining({
            id: spend.body.transaction.id,
            amount: '10.50',
            status: 'reversed',
            reason: expect.any(String),
          }),
        },
      ]);
      // Only a settled spend can be reversed, once.
      expect((await sim.admin('POST', `/card-transactions/${spend.body.transaction.id}/reverse`)).status).toBe(400);
      expect((await sim.admin('POST', `/card-transactions/${declined.body.transaction.id}/reverse`)).status).toBe(400);
      expect((await sim.admin('POST', '/card-transactions/nope/reverse')).status).toBe(404);
      expect((await sim.admin('POST', `/cards/${card.id}/decline`, { amount: 0 })).status).toBe(400);
      expect((await sim.admin('POST', '/cards/nope/credit', { amount: 100 })).status).toBe(404);
    });
  });

  // ---- fault switches ------------------------------------------------------------------------

  describe('callback fault switches', () => {
    /** Sends an arbitrary callback through the admin route. */
    const send = async (id: string, extra: Record<string, unknown> = {}) =>
      (await sim.admin('POST', '/callbacks/send', { event: 'test.event', data: { id, ...extra } })).body.callback;
    const setFaults = async (faults: Record<string, unknown>) => {
      const res = await sim.admin('PUT', '/callback-faults', faults);
      expect(res.status).toBe(200);
      return res.body.faults;
    };

    it('POST /callbacks/send signs and sends any callback to the account webhook URL', async () => {
      const callback = await send('late-1', { status: 'pending' });
      expect(callback).toMatchObject({
        seq: 1,
        event: 'test.event',
        data: { id: 'late-1', status: 'pending' },
        url: `${receiver.url}/account-hook`,
        attempts: [200],
        deliveries: [[200]],
        status: 'delivered',
        faults: {},
        at: '2026-01-01T00:00:00.000Z',
      });
      expect(receiver.received[0]).toMatchObject({ validSignature: true, body: { event: 'test.event' } });
      expect((await sim.admin('POST', '/callbacks/send', { data: {} })).status).toBe(400);
      expect((await sim.admin('POST', '/callbacks/send', { event: 'x', data: [1] })).status).toBe(400);
    });

    it('duplicate: n extra deliveries of each callback', async () => {
      expect(await setFaults({ duplicate: 2 })).toEqual({ duplicate: 2 });
      const callback = await send('dup-1');
      expect(callback).toMatchObject({
        faults: { duplicate: 2 },
        attempts: [200, 200, 200],
        deliveries: [[200], [200], [200]],
      });
      expect(receiver.received.map((r) => r.raw)).toEqual(Array(3).fill(receiver.received[0].raw));
      expect(receiver.received.every((r) => r.validSignature)).toBe(true);
    });

    it('outOfOrder: each callback waits for the next one, which is sent first', async () => {
      await setFaults({ outOfOrder: true });
      const first = await send('a');
      expect(first.status).toBe('held');
      expect(receiver.received).toHaveLength(0);
      const second = await send('b');
      expect(second.status).toBe('delivered');
      await receiver.waitFor(2);
      expect(receiver.received.map((r) => r.body.data.id)).toEqual(['b', 'a']);
      // The third is held again; flush sends it.
      expect((await send('c')).status).toBe('held');
      expect((await sim.admin('GET', '/callbacks/idle')).body).toEqual({ idle: true, pending: 1 });
      expect((await sim.admin('POST', '/flush')).body).toEqual({ ran: 0, callbacks: 1 });
      expect(receiver.received.map((r) => r.body.data.id)).toEqual(['b', 'a', 'c']);
      expect((await callbackLog()).map((c: { status: string }) => c.status)).toEqual([
        'delivered',
        'delivered',
        'delivered',
      ]);
    });

    it('outOfOrder with real events: a later payout callback arrives before the earlier one', async () => {
      const a = await pendingPayout(1_000);
      const b = await pendingPayout(2_000);
      await setFaults({ outOfOrder: true, times: 1 });
      const first = await sim.admin('POST', `/payouts/${a.id}/complete`, { status: 'success' });
      expect(first.body.callback).toMatchObject({ status: 'held', attempts: [] });
      await sim.admin('POST', `/payouts/${b.id}/complete`, { status: 'failed' });
      await receiver.waitFor(2);
      expect(receiver.received.map((r) => r.body.data.id)).toEqual([b.id, a.id]);
    });

    it('badSignature signs with a wrong secret; unsigned omits the header', async () => {
      await setFaults({ badSignature: true });
      await send('bad');
      expect(receiver.received[0]).toMatchObject({ signed: true, validSignature: false });
      expect(receiver.received[0].headers['x-brails-signature']).toMatch(/^[0-9a-f]{128}$/);
      await setFaults({ unsigned: true });
      const unsigned = await send('none');
      expect(unsigned.faults).toEqual({ unsigned: true });
      expect(receiver.received[1]).toMatchObject({ signed: false, validSignature: false });
    });

    it('delayMs: the callback waits, then arrives; flush cuts the wait short', async () => {
      await setFaults({ delayMs: 150 });
      const started = Date.now();
      const waiting = await send('slow');
      expect(waiting).toMatchObject({ status: 'waiting', attempts: [] });
      await receiver.waitFor(1);
      expect(Date.now() - started).toBeGreaterThanOrEqual(140);
      expect((await sim.admin('GET', '/callbacks/idle')).body).toEqual({ idle: true, pending: 0 });
      expect((await callbackLog())[0]).toMatchObject({ status: 'delivered', attempts: [200] });

      await setFaults({ delayMs: 600_000 });
      expect((await send('very-slow')).status).toBe('waiting');
      expect((await sim.admin('GET', '/callbacks/idle?timeoutMs=20')).body).toEqual({ idle: false, pending: 1 });
      expect((await sim.admin('POST', '/flush')).body.callbacks).toBe(1);
      expect(receiver.received.map((r) => r.body.data.id)).toEqual(['slow', 'very-slow']);
    });

    it('drop: the callback never comes (even on flush)', async () => {
      await setFaults({ drop: true });
      const payout = await pendingPayout(3_000);
      const done = await sim.admin('POST', `/payouts/${payout.id}/complete`, { status: 'success' });
      expect(done.body.callback).toMatchObject({ status: 'dropped', attempts: [], faults: { drop: true } });
      await sim.admin('POST', '/flush');
      expect(receiver.received).toHaveLength(0);
      expect(sim.state.payouts.get(payout.id)?.status).toBe('success');
    });

    it('times: the switches apply to the next n callbacks, then clear themselves', async () => {
      await setFaults({ unsigned: true, times: 2 });
      await send('1');
      await send('2');
      await send('3');
      expect(receiver.received.map((r) => r.signed)).toEqual([false, false, true]);
      expect((await sim.admin('GET', '/callback-faults')).body).toEqual({ faults: {} });
      expect((await callbackLog()).map((c: { faults: object }) => c.faults)).toEqual([
        { unsigned: true },
        { unsigned: true },
        {},
      ]);
    });

    it('are validated, cleared by DELETE and by reset; reset also empties the log', async () => {
      const bad = await sim.admin('PUT', '/callback-faults', { duplicate: -1, outOfOrder: 'yes', nope: 1, times: 0 });
      expect(bad.status).toBe(400);
      expect(bad.body.message).toBe(
        'duplicate must be a non-negative integer; outOfOrder must be a boolean; nope is not a callback fault; times must be at least 1',
      );
      expect((await sim.admin('PUT', '/callback-faults', [1])).status).toBe(400);
      await setFaults({ drop: true });
      expect((await sim.admin('DELETE', '/callback-faults')).status).toBe(200);
      expect((await sim.admin('GET', '/callback-faults')).body.faults).toEqual({});
      await setFaults({ drop: true });
      await send('x');
      expect(await callbackLog()).toHaveLength(1);
      await sim.admin('POST', '/reset');
      expect((await sim.admin('GET', '/callback-faults')).body.faults).toEqual({});
      expect(await callbackLog()).toEqual([]);
    });

    it('reset abandons held and waiting callbacks', async () => {
      await setFaults({ delayMs: 600_000 });
      await send('never');
      await setFaults({ outOfOrder: true });
      await send('held');
      await sim.admin('POST', '/reset');
      expect((await sim.admin('GET', '/callbacks/idle')).body).toEqual({ idle: true, pending: 0 });
      await sim.admin('POST', '/flush');
      expect(receiver.received).toHaveLength(0);
    });

    it('can be set at start with buildSimulator({callbackFaults})', async () => {
      await sim.app.close();
      sim = await testSimulator({ webhookSecret: SECRET, webhookUrl: receiver.url, callbackFaults: { duplicate: 1 } });
      expect((await sim.admin('GET', '/callback-faults')).body.faults).toEqual({ duplicate: 1 });
      await send('twice');
      expect(receiver.received).toHaveLength(2);
      await expect(
        testSimulator({ apiKey: 'k', callbackFaults: { duplicate: 'x' } as never }).then((s) => s.app.close()),
      ).rejects.toThrow('duplicate must be a non-negative integer');
    });

    it('retries a non-200 answer 3 more times, callbackRetryDelayMs apart', async () => {
      await sim.app.close();
      sim = await testSimulator({ webhookSecret: SECRET, webhookUrl: receiver.url, callbackRetryDelayMs: 5 });
      receiver.respond = [500, 503];
      expect((await send('retry')).attempts).toEqual([500, 503, 200]);
      receiver.respond = [500, 500, 500, 500];
      expect(await send('gives-up')).toMatchObject({ attempts: [500, 500, 500, 500], status: 'failed' });
      expect(receiver.received).toHaveLength(7);
    });

    it('GET /callbacks filters by event; DELETE /callbacks empties the log', async () => {
      await send('1');
      await sim.admin('POST', '/callbacks/send', { event: 'other.event', data: { id: '2' } });
      expect((await callbackLog('other.event')).map((c: { data: { id: string } }) => c.data.id)).toEqual(['2']);
      expect(await callbackLog()).toHaveLength(2);
      await sim.admin('DELETE', '/callbacks');
      expect(await callbackLog()).toEqual([]);
    });
  });

  it('logs callbacks as skipped when no URL or no secret is configured', async () => {
    await sim.app.close();
    sim = await testSimulator();
    email = (await sim.customer()).email;
    const payout = await pendingPayout(2_000, { callbackUrl: undefined });
    const done = await sim.admin('POST', `/payouts/${payout.id}/complete`, { status: 'success' });
    expect(done.body.callback).toMatchObject({ event: 'payout.transfer.success', url: null, status: 'skipped' });
    expect((await sim.admin('POST', '/callbacks/send', { event: 'x', data: {} })).body.message).toBe(
      'No webhook URL is configured; pass url',
    );
  });

  // ---- admin reads ---------------------------------------------------------------------------

  it('GET /__admin/cards/secrets lists every card number and CVV', async () => {
    const card = await liveCard(1_000);
    const stored = sim.state.cards.get(card.id)!;
    expect((await sim.admin('GET', '/cards/secrets')).body).toEqual([
      { id: card.id, cardNumber: stored.cardNumber, cvv2: stored.cvv2 },
    ]);
  });

  it('GET /__admin/records lists every money movement in minor units', async () => {
    const payout = await pendingPayout(4_200);
    const quote = (
      await sim.api('POST', '/wallets/initialize-swap', { sourceCurrency: 'USD', targetCurrency: 'NGN', amount: 10 })
    ).body.data;
    const swap = (await sim.api('POST', '/wallets/finalize-swap', { quoteId: quote.id })).body.data;
    const collection = (
      await sim.api('POST', '/wallets/collections/initialize', {
        country: 'KE',
        currency: 'KES',
        customerEmail: email,
        amount: 500_000,
        reference: ref('col'),
        description: 'deposit',
        payload: { type: 'Equity', accountName: 'Ada Obi' },
      })
    ).body.data;
    const card = await liveCard(3_000);
    const topup = await cardMoney('topup', card.id, 700);
    const records = (await sim.admin('GET', '/records')).body.records;
    expect(records).toEqual([
      expect.objectContaining({
        id: payout.id,
        kind: 'payout',
        reference: payout.reference,
        status: 'pending',
        amount: '4200',
        currency: 'USD',
        fee: '100',
      }),
      expect.objectContaining({
        id: swap.id,
        kind: 'swap',
        reference: swap.reference,
        status: 'success',
        amount: '1000',
        currency: 'USD',
        fee: '5',
      }),
      expect.objectContaining({
        id: collection.id,
        kind: 'collection',
        status: 'processing',
        amount: '500000',
        currency: 'KES',
        fee: '7500',
      }),
      expect.objectContaining({
        id: card.id,
        kind: 'card',
        reference: card.reference,
        status: 'success',
        amount: '3000',
        currency: 'USD',
      }),
      expect.objectContaining({
        id: topup.id,
        kind: 'card_transaction',
        reference: topup.reference,
        status: 'pending',
        amount: '700',
        currency: 'USD',
        method: 'topup',
        cardId: card.id,
      }),
    ]);
  });
});
