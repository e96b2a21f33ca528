import { randomUUID } from 'node:crypto';
import { postCallback } from './fixtures';
import type { Harness } from './harness';

/** Helpers of the card e2e tests: customers, card holders and cards through the API, signed callbacks. */
export function cardKit(h: Harness, auth: () => Record<string, string>) {
  const kit = {
    /** A customer through the API (+254 by default: no BVN or date of birth needed). */
    async customer(email: string, countryCode = '+254'): Promise<string> {
      const res = await h.http().post('/v1/customers').set(auth()).send({
        email,
        firstName: 'Ada',
        lastName: 'Obi',
        phone: '712345678',
        countryCode,
      });
      if (res.status !== 201) throw new Error(`customer: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.id as string;
    },

    /** The body of POST /v1/card-holders for a Kenyan holder. */
    holderBody(customerId: string, overrides: Record<string, unknown> = {}) {
      return {
        customerId,
        idType: 'PASSPORT',
        idNumber: 'A12345678',
        address: {
          line1: '1 Moi Avenue',
          houseName: 'Block C',
          city: 'Nairobi',
          state: 'Nairobi',
          zipCode: '00100',
          country: 'KE',
        },
        userPhoto: 'https://cdn.example.com/kyc/photo.jpg',
        idImage: 'https://cdn.example.com/kyc/id.jpg',
        ...overrides,
      };
    },

    async holder(customerId: string, overrides: Record<string, unknown> = {}): Promise<any> {
      const res = await h.http().post('/v1/card-holders').set(auth()).send(kit.holderBody(customerId, overrides));
      if (res.status !== 201) throw new Error(`card holder: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    },

    /** POST /v1/cards with a fresh Idempotency-Key. */
    createCard(customerId: string, amount: number, extra: Record<string, unknown> = {}) {
      return h
        .http()
        .post('/v1/cards')
        .set(auth())
        .set('Idempotency-Key', randomUUID())
        .send({ customerId, brand: 'visa', amount, ...extra });
    },

    /** A customer with a card holder and a card (status pending) funded with `amount`. */
    async pendingCard(email: string, amount = 5000): Promise<any> {
      const customerId = await kit.customer(email);
      await kit.holder(customerId);
      const res = await kit.createCard(customerId, amount);
      if (res.status !== 201) throw new Error(`card: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    },

    /** Signs and posts a provider callback to the gateway. */
    callback(event: string, data: Record<string, unknown>) {
      return postCallback(h, { event, data });
    },

    /**
     * Makes a pending card active: the simulator's delayed creation runs now (`/__admin/flush`), and
     * the gateway gets `virtualcard.created.success` (posted here, signed) with last4 and expiry.
     */
    async activate(card: { providerId: string; reference: string }, last4 = '4242'): Promise<any> {
      await h.sim.admin('POST', '/flush');
      const res = await kit.callback('virtualcard.created.success', {
        id: card.providerId,
        reference: card.reference,
        status: 'active',
        createdStatus: 'success',
        last4,
        cardBrand: 'visa',
        valid: '11/2029',
      });
      if (res.status !== 200) throw new Error(`created callback: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    },

    /** An active card of a new customer, funded with `amount`. */
    async activeCard(email: string, amount = 5000): Promise<any> {
      const card = await kit.pendingCard(email, amount);
      await kit.activate(card);
      return (await h.http().get(`/v1/cards/${card.id}`).set(auth())).body;
    },

    /** Ledger rows of a card, oldest first. */
    ledger(cardId: string) {
      return h.db.query<{
        id: string;
        kind: string;
        direction: string;
        status: string;
        amount: string;
        provider_id: string | null;
        reference: string;
      }>(
        'SELECT id, kind, direction, status, amount::text AS amount, provider_id, reference FROM transactions WHERE card_id = $1 ORDER BY created_at, id',
        [cardId],
      );
    },

    /** Status history of a ledger row. */
    history(transactionId: string) {
      return h.db.query<{ from: string | null; to: string; source: string }>(
        'SELECT "from", "to", source FROM transaction_status_changes WHERE transaction_id = $1 ORDER BY id',
        [transactionId],
      );
    },

    async balance(cardId: string): Promise<number> {
      return (await h.http().get(`/v1/cards/${cardId}`).set(auth())).body.balance as number;
    },
  };
  return kit;
}

/** Polls `check` until it returns a truthy value or `timeoutMs` passes (then throws with `what`). */
export async function waitFor<T>(what: string, check: () => Promise<T | null | undefined | false>, timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
