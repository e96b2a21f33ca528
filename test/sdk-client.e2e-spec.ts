/**
 * A whole payout through the generated client (clients/typescript, `npm run sdk`) against a
 * gateway listening on an ephemeral port, with the simulator behind it: create a customer, a
 * beneficiary, a payout under an Idempotency-Key, confirm it, read it; then typed problem+json
 * errors (400 validation, 404) read through the client's error types. Any drift between the
 * server and openapi.json (paths, bodies, headers, status codes, media types) fails here.
 */
import { randomUUID } from 'node:crypto';
import {
  beneficiariesCreate,
  customersCreate,
  payoutsConfirm,
  payoutsCreate,
  payoutsGet,
  type PayoutDto,
  type ProblemDto,
} from '../clients/typescript/src';
import { type Client, createClient, createConfig } from '../clients/typescript/src/client';
import { type Harness, startHarness } from './support/harness';

describe('typed client (e2e: generated client → gateway on a port → simulator)', () => {
  let h: Harness;
  let client: Client;

  beforeAll(async () => {
    h = await startHarness({ listen: true });
    const key = await h.key();
    client = createClient(
      createConfig({ baseUrl: process.env.PUBLIC_BASE_URL, headers: { Authorization: `Bearer ${key}` } }),
    );
  });
  afterAll(() => h.close());

  it('creates a customer, a beneficiary and a payout, confirms it and reads it back', async () => {
    const customer = await customersCreate({
      client,
      body: { email: 'sdk@example.com', firstName: 'Ada', lastName: 'Obi', phone: '712345678', countryCode: '254' },
    });
    expect(customer.response?.status).toBe(201);
    const customerId = customer.data!.id;

    const beneficiary = await beneficiariesCreate({
      client,
      body: {
        customerId,
        country: 'KE',
        currency: 'KES',
        destination: { type: 'MOBILEMONEY', network: 'MPESA', accountNumber: '254712345678' },
      },
    });
    expect(beneficiary.response?.status).toBe(201);
    const beneficiaryId = beneficiary.data!.id;

    const idempotencyKey = `sdk-${randomUUID()}`;
    const body = { customerId, beneficiaryId, amount: 150000, description: 'Invoice 42 (typed client)' };
    const created = await payoutsCreate({ client, body, headers: { 'Idempotency-Key': idempotencyKey } });
    expect(created.response?.status).toBe(201);
    const payout: PayoutDto = created.data!;
    expect(payout).toMatchObject({ customerId, beneficiaryId, amount: 150000, currency: 'USD', status: 'initiated' });

    // The same key and body replay the first answer: one payout, not two.
    const replay = await payoutsCreate({ client, body, headers: { 'Idempotency-Key': idempotencyKey } });
    expect(replay.data?.id).toBe(payout.id);
    const rows = await h.db.query("SELECT count(*)::int AS n FROM transactions WHERE kind = 'payout'");
    expect(rows[0].n).toBe(1);

    const confirmed = await payoutsConfirm({
      client,
      path: { id: payout.id },
      headers: { 'Idempotency-Key': `sdk-${randomUUID()}` },
    });
    expect(confirmed.response?.status).toBe(201);
    expect(confirmed.data?.status).toBe('pending');

    const read = await payoutsGet({ client, path: { id: payout.id } });
    expect(read.error).toBeUndefined();
    expect(read.data).toMatchObject({ id: payout.id, status: 'pending', amount: 150000, fee: payout.fee });
  });

  it('reads a 400 validation problem through the typed error', async () => {
    const res = await payoutsCreate({
      client,
      body: { customerId: 'not-a-uuid', beneficiaryId: randomUUID(), amount: -5, description: 'x' },
      headers: { 'Idempotency-Key': `sdk-${randomUUID()}` },
    });
    expect(res.response?.status).toBe(400);
    expect(res.response?.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.data).toBeUndefined();
    const problem: ProblemDto | undefined = res.error;
    expect(problem).toMatchObject({ status: 400, code: 'validation_failed' });
    expect(problem?.errors?.map((e) => e.field)).toEqual(expect.arrayContaining(['customerId', 'amount']));
  });

  it('reads a 404 problem through the typed error, and throws it with throwOnError', async () => {
    const id = randomUUID();
    const res = await payoutsGet({ client, path: { id } });
    expect(res.response?.status).toBe(404);
    expect(res.error).toMatchObject({ status: 404, code: 'not_found', instance: `/v1/payouts/${id}` });

    await expect(payoutsGet({ client, path: { id }, throwOnError: true })).rejects.toMatchObject({
      code: 'not_found',
    });
  });
});
