import { createHmac, timingSafeEqual } from 'node:crypto';

/** Headers the provider signs with, newer brand first (docs/provider.md#callback-delivery). */
export const SIGNATURE_HEADERS = ['x-brails-signature', 'x-bitnob-signature'] as const;

/** Lower-case hex HMAC-SHA512 of `body` keyed with `secret`. */
export function signWebhook(body: string | Buffer, secret: string): string {
  return createHmac('sha512', secret).update(body).digest('hex');
}

function sameHex(expected: string, given: string): boolean {
  const a = Buffer.from(expected, 'utf8');
  const b = Buffer.from(given.trim().toLowerCase(), 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Verifies a callback's signature in constant time: first against the raw bytes (what the
 * provider's SDKs sign), then against the re-serialised JSON (what its docs' example signs).
 */
export function verifyWebhookSignature(rawBody: Buffer, parsed: unknown, signature: string, secret: string): boolean {
  if (!signature) return false;
  if (sameHex(signWebhook(rawBody, secret), signature)) return true;
  return parsed !== undefined && sameHex(signWebhook(JSON.stringify(parsed), secret), signature);
}
