/**
 * Seeding through the gateway's own API, shared by the benchmarks: one call helper and one
 * Kenyan customer with a mobile-money beneficiary and an active card.
 */
import { randomUUID } from 'node:crypto';

/** One API call with the key (and a fresh Idempotency-Key); throws on any answer ≥ 300. */
export async function api<T>(origin: string, key: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${origin}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

/** A KES mobile-money (MPESA) beneficiary of `customerId`. */
export function kenyanBeneficiary(origin: string, key: string, customerId: string): Promise<{ id: string }> {
  return api<{ id: string }>(origin, key, 'POST', '/v1/beneficiaries', {
    customerId,
    country: 'KE',
    currency: 'KES',
    destination: { type: 'MOBILEMONEY', network: 'MPESA', accountNumber: '254712345678' },
  });
}

/**
 * Registers `customerId` (Kenyan) as a card holder, creates a visa card funded with 1000 minor units
 * (10.00 USD) and waits (≤ 30 s) for its creation callback to make it active.
 */
export async function activeCard(origin: string, key: string, customerId: string): Promise<{ id: string }> {
  await api(origin, key, 'POST', '/v1/card-holders', {
    customerId,
    idType: 'PASSPORT',
    idNumber: 'A1234567',
    address: {
      line1: '1 Bench Road',
      houseName: 'Bench House',
      city: 'Nairobi',
      state: 'Nairobi',
      zipCode: '00100',
      country: 'KE',
    },
    userPhoto: 'https://example.com/photo.jpg',
  });
  const card = await api<{ id: string }>(origin, key, 'POST', '/v1/cards', { customerId, brand: 'visa', amount: 1000 });
  const deadline = Date.now() + 30_000;
  while ((await api<{ status: string }>(origin, key, 'GET', `/v1/cards/${card.id}`)).status !== 'active') {
    if (Date.now() > deadline) throw new Error('the card never became active (no created callback?)');
    await new Promise((r) => setTimeout(r, 100));
  }
  return card;
}

/** What `seedHotReads` made: the last customer, its beneficiary, a payout of it and its active card. */
export interface HotReadsSeed {
  customer: { id: string };
  beneficiary: { id: string };
  payout: { id: string };
  card: { id: string };
}

/**
 * The data every hot read benchmark reads: `customers` Kenyan customers (`<prefix>-<n>@example.com`),
 * the last one with a beneficiary, a payout of 1500 minor units (15.00 USD), an active card and 10
 * top-ups of 300–309 minor units on it.
 */
export async function seedHotReads(
  origin: string,
  key: string,
  prefix: string,
  customers: number,
): Promise<HotReadsSeed> {
  let customer = { id: '' };
  for (let i = 0; i < customers; i++)
    customer = await api<{ id: string }>(origin, key, 'POST', '/v1/customers', {
      email: `${prefix}-${i}@example.com`,
      firstName: 'Read',
      lastName: `Bench${i}`,
      phone: `7123456${String(i).padStart(2, '0')}`,
      countryCode: '+254',
    });
  const beneficiary = await kenyanBeneficiary(origin, key, customer.id);
  const payout = await api<{ id: string }>(origin, key, 'POST', '/v1/payouts', {
    customerId: customer.id,
    beneficiaryId: beneficiary.id,
    amount: 1500,
    description: prefix,
  });
  const card = await activeCard(origin, key, customer.id);
  for (let i = 0; i < 10; i++) await api(origin, key, 'POST', `/v1/cards/${card.id}/top-ups`, { amount: 300 + i });
  return { customer, beneficiary, payout, card };
}
