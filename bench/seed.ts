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
