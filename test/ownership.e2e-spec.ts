import { randomUUID } from 'node:crypto';
import { createApiClient } from '../src/auth/api-clients.repository';
import { SCOPES } from '../src/auth/scopes';
import { PrismaService } from '../src/database/prisma.service';
import { customerWithBeneficiary } from './support/fixtures';
import { startHarness } from './support/harness';

/** Keys A and B on one gateway; A creates a customer, a beneficiary and a payout. */
async function setUp(ownership: 'all' | 'client') {
  const h = await startHarness({ env: { OWNERSHIP: ownership } });
  const prisma = h.app.get(PrismaService);
  const auth = async (name: string) => ({
    Authorization: `Bearer ${(await createApiClient(prisma, name, [...SCOPES])).key}`,
  });
  const a = await auth('client-a');
  const b = await auth('client-b');
  const to = await customerWithBeneficiary(h, a, `owner-${ownership}@example.com`);
  const payout = await h
    .http()
    .post('/v1/payouts')
    .set(a)
    .set('Idempotency-Key', randomUUID())
    .send({ ...to, amount: 150000, description: 'owned payout' });
  expect(payout.status).toBe(201);
  return { h, a, b, to, payoutId: payout.body.id as string };
}

describe('ownership rule (e2e, OWNERSHIP)', () => {
  it('OWNERSHIP=client: key B neither sees nor confirms key A’s payout, customer or beneficiary (404); A does', async () => {
    const { h, a, b, to, payoutId } = await setUp('client');
    try {
      const get = await h.http().get(`/v1/payouts/${payoutId}`).set(b);
      expect([get.status, get.body.code]).toEqual([404, 'not_found']);
      const confirm = await h
        .http()
        .post(`/v1/payouts/${payoutId}/confirm`)
        .set(b)
        .set('Idempotency-Key', randomUUID());
      expect([confirm.status, confirm.body.code]).toEqual([404, 'not_found']);
      expect((await h.http().get(`/v1/customers/${to.customerId}`).set(b)).status).toBe(404);
      expect((await h.http().get(`/v1/beneficiaries/${to.beneficiaryId}`).set(b)).status).toBe(404);
      expect((await h.http().get('/v1/customers').set(b)).body.data).toEqual([]);
      expect((await h.http().get('/v1/beneficiaries').set(b)).body.data).toEqual([]);
      // B cannot pay out of A's customer either.
      const borrowed = await h
        .http()
        .post('/v1/payouts')
        .set(b)
        .set('Idempotency-Key', randomUUID())
        .send({ ...to, amount: 150000, description: 'not mine' });
      expect(borrowed.status).toBe(404);
      // Rows made outside any client (null created_by) are nobody's under the rule.
      await h.db.query('UPDATE customers SET created_by = NULL WHERE id = $1', [to.customerId]);
      expect((await h.http().get(`/v1/customers/${to.customerId}`).set(a)).status).toBe(404);
      await h.db.query(
        'UPDATE customers SET created_by = (SELECT created_by FROM transactions WHERE id = $1) WHERE id = $2',
        [payoutId, to.customerId],
      );

      expect((await h.http().get(`/v1/payouts/${payoutId}`).set(a)).status).toBe(200);
      const mine = await h.http().post(`/v1/payouts/${payoutId}/confirm`).set(a).set('Idempotency-Key', randomUUID());
      expect([mine.status, mine.body.status]).toEqual([201, 'pending']);
      expect((await h.http().get('/v1/customers').set(a)).body.data.map((c: any) => c.id)).toEqual([to.customerId]);
    } finally {
      await h.close();
    }
  }, 120_000);

  it('OWNERSHIP=all (default): key B sees and confirms key A’s payout', async () => {
    const { h, b, payoutId } = await setUp('all');
    try {
      expect((await h.http().get(`/v1/payouts/${payoutId}`).set(b)).status).toBe(200);
      const confirm = await h
        .http()
        .post(`/v1/payouts/${payoutId}/confirm`)
        .set(b)
        .set('Idempotency-Key', randomUUID());
      expect([confirm.status, confirm.body.status]).toEqual([201, 'pending']);
    } finally {
      await h.close();
    }
  }, 120_000);
});
