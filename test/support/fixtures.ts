import { randomUUID } from 'node:crypto';
import { signWebhook } from '../../src/webhooks/signature';
import { type Harness, WEBHOOK_SECRET } from './harness';

/** A customer with a KE mobile-money beneficiary, created through the API. */
export async function customerWithBeneficiary(
  h: Harness,
  auth: Record<string, string>,
  email: string,
): Promise<{ customerId: string; beneficiaryId: string }> {
  const customer = await h.http().post('/v1/customers').set(auth).send({
    email,
    firstName: 'Ada',
    lastName: 'Obi',
    phone: '8012345678',
    countryCode: '+254',
  });
  if (customer.status !== 201) throw new Error(`customer: ${customer.status} ${JSON.stringify(customer.body)}`);
  const beneficiary = await h
    .http()
    .post('/v1/beneficiaries')
    .set(auth)
    .send({
      customerId: customer.body.id,
      country: 'KE',
      currency: 'KES',
      destination: {
        type: 'MOBILEMONEY',
        network: 'MPESA',
        accountNumber: '254712345678',
      },
    });
  if (beneficiary.status !== 201)
    throw new Error(`beneficiary: ${beneficiary.status} ${JSON.stringify(beneficiary.body)}`);
  return { customerId: customer.body.id, beneficiaryId: beneficiary.body.id };
}

/** A payout of `amount` USD minor units, initialized and confirmed (status `pending`). */
export async function confirmedPayout(
  h: Harness,
  auth: Record<string, string>,
  to: { customerId: string; beneficiaryId: string },
  amount: number,
): Promise<{ id: string; providerId: string; reference: string }> {
  const created = await h
    .http()
    .post('/v1/payouts')
    .set(auth)
    .set('Idempotency-Key', randomUUID())
    .send({ ...to, amount, description: 'fixture payout' });
  if (created.status !== 201) throw new Error(`payout: ${created.status} ${JSON.stringify(created.body)}`);
  const confirmed = await h
    .http()
    .post(`/v1/payouts/${created.body.id}/confirm`)
    .set(auth)
    .set('Idempotency-Key', randomUUID());
  if (confirmed.body.status !== 'pending')
    throw new Error(`confirm: ${confirmed.status} ${JSON.stringify(confirmed.body)}`);
  return created.body;
}

/** Signs `payload` as the provider does (HMAC-SHA512 of the body) and posts it to the gateway's callback route. */
export function postCallback(h: Harness, payload: unknown, header = 'x-brails-signature') {
  const body = JSON.stringify(payload);
  return h
    .http()
    .post('/webhooks/provider')
    .set('content-type', 'application/json')
    .set(header, signWebhook(body, WEBHOOK_SECRET))
    .send(body);
}
