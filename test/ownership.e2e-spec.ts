import { randomUUID } from 'node:crypto';
import { createApiClient } from '../src/auth/api-clients.repository';
import { type Scope, SCOPES } from '../src/auth/scopes';
import { PrismaService } from '../src/database/prisma.service';
import { cardKit } from './support/cards';
import { customerWithBeneficiary } from './support/fixtures';
import { startHarness } from './support/harness';

type Auth = Record<string, string>;

/**
 * Keys A and B (two API clients) on one gateway; A creates a customer, a beneficiary and a payout,
 * a card holder and an active card with a top-up, a collection, a virtual account and a swap
 * quote. A's collection's ledger row is put in `needs_review` (for the resolve route).
 */
async function setUp(ownership: 'all' | 'client') {
  // Payouts of USD 100,000.00 and more wait for a second client's approval (maker-checker).
  const h = await startHarness({ env: { OWNERSHIP: ownership, PAYOUT_APPROVAL_THRESHOLDS: 'USD:10000000' } });
  const prisma = h.app.get(PrismaService);
  const client = async (name: string, scopes: Scope[]) => {
    const { client, key } = await createApiClient(prisma, name, scopes);
    return { id: client.id, auth: { Authorization: `Bearer ${key}` } as Auth };
  };
  // The apps' keys: every scope but the checker's (payouts:approve exempts a key from the rule).
  const appScopes = SCOPES.filter((scope) => scope !== 'payouts:approve');
  const a = await client('client-a', appScopes);
  const b = await client('client-b', appScopes);
  const checker = await client('finance-checker', ['payouts:approve', 'payouts:read', 'transactions:read']);
  const idem = () => ({ 'Idempotency-Key': randomUUID() });

  const to = await customerWithBeneficiary(h, a.auth, `owner-${ownership}@example.com`);
  const payout = await h
    .http()
    .post('/v1/payouts')
    .set(a.auth)
    .set(idem())
    .send({ ...to, amount: 150000, description: 'owned payout' });
  expect(payout.status).toBe(201);

  const kit = cardKit(h, () => a.auth);
  const cardCustomerId = await kit.customer(`card-owner-${ownership}@example.com`);
  const holder = await kit.holder(cardCustomerId);
  const card = (await kit.createCard(cardCustomerId, 5000)).body as {
    id: string;
    providerId: string;
    reference: string;
  };
  await kit.activate(card);
  const topUp = await h.http().post(`/v1/cards/${card.id}/top-ups`).set(a.auth).set(idem()).send({ amount: 1000 });
  expect(topUp.status).toBe(201);

  const collection = await h
    .http()
    .post('/v1/collections')
    .set(a.auth)
    .set(idem())
    .send({
      customerId: to.customerId,
      country: 'NG',
      currency: 'NGN',
      amount: 6_500_000,
      description: 'owned collection',
      payer: { type: 'wema', accountName: 'Ada Obi' },
    });
  expect(collection.status).toBe(201);
  await h.db.query("UPDATE transactions SET status = 'needs_review' WHERE id = $1", [collection.body.transactionId]);

  const account = await h
    .http()
    .post('/v1/virtual-accounts')
    .set(a.auth)
    .send({ customerId: to.customerId, bank: 'safehaven', bvn: '22123456789', phoneNumber: '08012345678' });
  expect(account.status).toBe(201);

  const quote = await h
    .http()
    .post('/v1/swap-quotes')
    .set(a.auth)
    .send({ sourceCurrency: 'USD', targetCurrency: 'NGN', amount: 10_000 });
  expect(quote.status).toBe(201);

  return {
    h,
    a,
    b,
    checker,
    idem,
    to,
    payoutId: payout.body.id as string,
    holderId: holder.id as string,
    cardCustomerId,
    cardId: card.id,
    topUpId: topUp.body.id as string,
    collection: collection.body as { id: string; transactionId: string },
    accountId: account.body.id as string,
    quoteId: quote.body.id as string,
  };
}

type Setup = Awaited<ReturnType<typeof setUp>>;

/** The single reads of every resource A created (each answers 200 to whoever may see it). */
function reads(s: Setup): string[] {
  return [
    `/v1/payouts/${s.payoutId}`,
    `/v1/customers/${s.to.customerId}`,
    `/v1/beneficiaries/${s.to.beneficiaryId}`,
    `/v1/card-holders/${s.holderId}`,
    `/v1/cards/${s.cardId}`,
    `/v1/cards/${s.cardId}/transactions?refresh=false`,
    `/v1/collections/${s.collection.id}`,
    `/v1/virtual-accounts/${s.accountId}`,
    `/v1/transactions/${s.payoutId}`,
    `/v1/transactions/${s.topUpId}`,
    `/v1/transactions/${s.collection.transactionId}`,
  ];
}

/** Ids listed by every list route, by route. */
async function listed(s: Setup, as: Auth): Promise<Record<string, string[]>> {
  const ids = async (path: string) => {
    const res = await s.h.http().get(path).set(as);
    expect(res.status).toBe(200);
    return (res.body.data as Array<{ id: string }>).map((row) => row.id);
  };
  return {
    customers: await ids('/v1/customers'),
    beneficiaries: await ids('/v1/beneficiaries'),
    cards: await ids('/v1/cards'),
    collections: await ids('/v1/collections'),
    virtualAccounts: await ids('/v1/virtual-accounts'),
    transactions: await ids('/v1/transactions?limit=200'),
  };
}

/** The ledger totals a key sees (summary) and the ids in its CSV export. */
async function financeView(s: Setup, as: Auth): Promise<{ count: number; exported: string[] }> {
  const summary = await s.h.http().get('/v1/transactions/summary').set(as);
  expect(summary.status).toBe(200);
  const exported = await s.h.http().get('/v1/transactions/export').set(as).buffer(true);
  expect(exported.status).toBe(200);
  const lines = exported.text.trim().split('\n').slice(1);
  return {
    count: (summary.body.totals as Array<{ count: number }>).reduce((n, t) => n + t.count, 0),
    exported: lines.map((line) => line.split(',')[0]),
  };
}

describe('ownership rule (e2e, OWNERSHIP)', () => {
  it('OWNERSHIP=client: key B neither sees nor changes anything key A created (404, absent from lists); A does', async () => {
    const s = await setUp('client');
    const { h, a, b, idem, to, payoutId } = s;
    try {
      for (const path of reads(s)) {
        const res = await h.http().get(path).set(b.auth);
        expect([path, res.status, res.body.code]).toEqual([path, 404, 'not_found']);
        expect([path, (await h.http().get(path).set(a.auth)).status]).toEqual([path, 200]);
      }
      // Swap quotes and swaps are always their own client's (whatever OWNERSHIP says).
      expect((await h.http().get(`/v1/swap-quotes/${s.quoteId}`).set(b.auth)).status).toBe(404);
      // A's customer, refreshed by A (this instance then keeps its provider id and owner, and asks
      // the provider while it reads the row on the next refresh): A's reaches the provider once;
      // B's, after it, is still a 404 that never reaches the provider.
      const getCalls = (await h.sim.calls('getCustomer')).length;
      const refreshedByA = await h.http().get(`/v1/customers/${to.customerId}?refresh=true`).set(a.auth);
      expect([refreshedByA.status, refreshedByA.body.id]).toEqual([200, to.customerId]);
      expect(await h.sim.calls('getCustomer')).toHaveLength(getCalls + 1);
      const refreshedByB = await h.http().get(`/v1/customers/${to.customerId}?refresh=true`).set(b.auth);
      expect([refreshedByB.status, refreshedByB.body.code]).toEqual([404, 'not_found']);
      expect(await h.sim.calls('getCustomer')).toHaveLength(getCalls + 1);

      const mine = await listed(s, a.auth);
      expect(mine.customers.sort()).toEqual([to.customerId, s.cardCustomerId].sort());
      expect(mine.beneficiaries).toEqual([to.beneficiaryId]);
      expect(mine.cards).toEqual([s.cardId]);
      expect(mine.collections).toEqual([s.collection.id]);
      expect(mine.virtualAccounts).toEqual([s.accountId]);
      expect(mine.transactions).toEqual(expect.arrayContaining([payoutId, s.topUpId, s.collection.transactionId]));
      expect(await listed(s, b.auth)).toEqual({
        customers: [],
        beneficiaries: [],
        cards: [],
        collections: [],
        virtualAccounts: [],
        transactions: [],
      });
      expect(await financeView(s, b.auth)).toEqual({ count: 0, exported: [] });
      const aView = await financeView(s, a.auth);
      expect(aView.count).toBe(mine.transactions.length);
      expect(aView.exported.sort()).toEqual([...mine.transactions].sort());
      // Filters cannot reach another client's rows either.
      const byCustomer = await h.http().get(`/v1/transactions?customerId=${to.customerId}`).set(b.auth);
      expect(byCustomer.body.data).toEqual([]);

      // Changes: every one a 404, and nothing changed or called.
      const changes: Array<[string, () => Promise<{ status: number }>]> = [
        ['confirm payout', () => h.http().post(`/v1/payouts/${payoutId}/confirm`).set(b.auth).set(idem())],
        ['freeze card', () => h.http().post(`/v1/cards/${s.cardId}/freeze`).set(b.auth)],
        ['terminate card', () => h.http().post(`/v1/cards/${s.cardId}/terminate`).set(b.auth)],
        [
          'top up card',
          () => h.http().post(`/v1/cards/${s.cardId}/top-ups`).set(b.auth).set(idem()).send({ amount: 1000 }),
        ],
        [
          'withdraw from card',
          () => h.http().post(`/v1/cards/${s.cardId}/withdrawals`).set(b.auth).set(idem()).send({ amount: 100 }),
        ],
        [
          'card for A’s customer',
          () =>
            h
              .http()
              .post('/v1/cards')
              .set(b.auth)
              .set(idem())
              .send({ customerId: s.cardCustomerId, brand: 'visa', amount: 0 }),
        ],
        [
          'card holder for A’s customer',
          () =>
            h
              .http()
              .post('/v1/card-holders')
              .set(b.auth)
              .send(cardKit(h, () => b.auth).holderBody(to.customerId)),
        ],
        [
          'collection for A’s customer',
          () =>
            h
              .http()
              .post('/v1/collections')
              .set(b.auth)
              .set(idem())
              .send({
                customerId: to.customerId,
                country: 'NG',
                currency: 'NGN',
                amount: 6_500_000,
                description: 'not mine',
                payer: { type: 'wema', accountName: 'Ada Obi' },
              }),
        ],
        [
          'virtual account for A’s customer',
          () =>
            h.http().post('/v1/virtual-accounts').set(b.auth).send({
              customerId: to.customerId,
              bank: 'safehaven',
              bvn: '22123456789',
              phoneNumber: '08012345678',
            }),
        ],
        ['execute A’s quote', () => h.http().post('/v1/swaps').set(b.auth).set(idem()).send({ quoteId: s.quoteId })],
        [
          'resolve A’s row',
          () =>
            h
              .http()
              .post(`/v1/transactions/${s.collection.transactionId}/resolve`)
              .set(b.auth)
              .send({ status: 'failed', evidence: 'not mine' }),
        ],
      ];
      for (const [what, change] of changes) {
        const res = (await change()) as { status: number; body: { code: string } };
        expect([what, res.status, res.body.code]).toEqual([what, 404, 'not_found']);
      }
      const [card] = await h.db.query<{ status: string; transition: string | null; balance: string }>(
        'SELECT status, transition, balance::text FROM cards WHERE id = $1',
        [s.cardId],
      );
      expect(card).toEqual({ status: 'active', transition: null, balance: '5000' });
      expect(await h.sim.calls('freezeCard')).toHaveLength(0);
      const [counts] = await h.db.query<Record<string, string>>(
        `SELECT (SELECT count(*) FROM cards)::text AS cards, (SELECT count(*) FROM collections)::text AS collections,
                (SELECT count(*) FROM virtual_accounts)::text AS accounts, (SELECT count(*) FROM card_holders)::text AS holders,
                (SELECT status FROM transactions WHERE id = $1)::text AS resolved`,
        [s.collection.transactionId],
      );
      expect(counts).toEqual({ cards: '1', collections: '1', accounts: '1', holders: '1', resolved: 'needs_review' });

      // Rows made outside any client (null created_by) are nobody's under the rule.
      await h.db.query('UPDATE customers SET created_by = NULL WHERE id = $1', [to.customerId]);
      expect((await h.http().get(`/v1/customers/${to.customerId}`).set(a.auth)).status).toBe(404);
      await h.db.query('UPDATE customers SET created_by = $1 WHERE id = $2', [a.id, to.customerId]);

      // Sub-resources follow their parent: the card's funding and top-up rows are A's.
      const owners = await h.db.query<{ created_by: string }>(
        'SELECT DISTINCT created_by FROM transactions WHERE card_id = $1',
        [s.cardId],
      );
      expect(owners).toEqual([{ created_by: a.id }]);

      // A still changes all of it.
      const confirm = await h.http().post(`/v1/payouts/${payoutId}/confirm`).set(a.auth).set(idem());
      expect([confirm.status, confirm.body.status]).toEqual([201, 'pending']);
      const frozen = await h.http().post(`/v1/cards/${s.cardId}/freeze`).set(a.auth);
      expect([frozen.status, frozen.body.status]).toEqual([200, 'frozen']);
      const swap = await h.http().post('/v1/swaps').set(a.auth).set(idem()).send({ quoteId: s.quoteId });
      expect([swap.status, swap.body.status]).toEqual([201, 'success']);
      expect((await h.http().get(`/v1/swaps/${swap.body.id}`).set(b.auth)).status).toBe(404);
      expect((await h.http().get(`/v1/transactions/${swap.body.id}`).set(b.auth)).status).toBe(404);
      expect((await h.http().get(`/v1/transactions/${swap.body.id}`).set(a.auth)).status).toBe(200);
      const resolved = await h
        .http()
        .post(`/v1/transactions/${s.collection.transactionId}/resolve`)
        .set(a.auth)
        .send({ status: 'failed', evidence: 'provider shows it expired' });
      expect([resolved.status, resolved.body.status]).toEqual([200, 'failed']);

      // Maker-checker across clients: A's large payout waits for approval; B cannot see or decide
      // it, the checker's key (payouts:approve, not restricted) lists it among the ledger's
      // payouts awaiting approval and approves it.
      const large = await h
        .http()
        .post('/v1/payouts')
        .set(a.auth)
        .set(idem())
        .send({ ...to, amount: 20_000_000, description: 'needs a checker' });
      expect([large.status, large.body.status]).toEqual([201, 'awaiting_approval']);
      const byB = await h.http().post(`/v1/payouts/${large.body.id}/approve`).set(b.auth).set(idem()).send({});
      expect([byB.status, byB.body.code]).toEqual([403, 'forbidden']);
      expect((await h.http().get(`/v1/payouts/${large.body.id}`).set(b.auth)).status).toBe(404);
      const waiting = await h.http().get('/v1/transactions?status=awaiting_approval&kind=payout').set(s.checker.auth);
      expect(waiting.body.data.map((row: { id: string }) => row.id)).toEqual([large.body.id]);
      const approved = await h
        .http()
        .post(`/v1/payouts/${large.body.id}/approve`)
        .set(s.checker.auth)
        .set(idem())
        .send({ reason: 'checked' });
      expect([approved.status, approved.body.status]).toEqual([201, 'initiated']);
    } finally {
      await h.close();
    }
  }, 180_000);

  it('OWNERSHIP=all (default): key B sees and changes what key A created (swaps excepted: always per client)', async () => {
    const s = await setUp('all');
    const { h, a, b, idem, payoutId } = s;
    try {
      for (const path of reads(s)) {
        expect([path, (await h.http().get(path).set(b.auth)).status]).toEqual([path, 200]);
      }
      const theirs = await listed(s, b.auth);
      expect(theirs.cards).toEqual([s.cardId]);
      expect(theirs.collections).toEqual([s.collection.id]);
      expect(theirs.virtualAccounts).toEqual([s.accountId]);
      expect(theirs.transactions).toEqual(expect.arrayContaining([payoutId, s.topUpId, s.collection.transactionId]));
      expect((await financeView(s, b.auth)).exported).toEqual(expect.arrayContaining([payoutId, s.topUpId]));
      expect((await h.http().get(`/v1/swap-quotes/${s.quoteId}`).set(b.auth)).status).toBe(404);

      const confirm = await h.http().post(`/v1/payouts/${payoutId}/confirm`).set(b.auth).set(idem());
      expect([confirm.status, confirm.body.status]).toEqual([201, 'pending']);
      // B tops up A's card: the movement follows its card's owner (A), the audit trail names B.
      const topUp = await h.http().post(`/v1/cards/${s.cardId}/top-ups`).set(b.auth).set(idem()).send({ amount: 1000 });
      expect(topUp.status).toBe(201);
      const [row] = await h.db.query<{ created_by: string }>('SELECT created_by FROM transactions WHERE id = $1', [
        topUp.body.id,
      ]);
      expect(row.created_by).toBe(a.id);
      const frozen = await h.http().post(`/v1/cards/${s.cardId}/freeze`).set(b.auth);
      expect([frozen.status, frozen.body.status]).toEqual([200, 'frozen']);
      const resolved = await h
        .http()
        .post(`/v1/transactions/${s.collection.transactionId}/resolve`)
        .set(b.auth)
        .send({ status: 'failed', evidence: 'provider shows it expired' });
      expect(resolved.status).toBe(200);
    } finally {
      await h.close();
    }
  }, 180_000);
});
