/**
 * Standard Webhooks (https://www.standardwebhooks.com, spec "Signature scheme"): each delivery
 * carries `webhook-id` (the message id, stable across retries), `webhook-timestamp` (Unix
 * seconds of this attempt) and `webhook-signature` (`v1,` + base64 HMAC-SHA256 of
 * `${id}.${timestamp}.${body}`, keyed with the base64-decoded part of the secret after `whsec_`).
 * Signing is done by the `standardwebhooks` package (the spec's reference library), so any of the
 * spec's verifiers accepts our deliveries.
 */
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** Prefix of a Standard Webhooks signing secret. */
export const SECRET_PREFIX = 'whsec_';

/** Random bytes in a new secret (the spec asks for 24 to 64). */
export const SECRET_BYTES = 32;

/** A new signing secret: `whsec_` + base64 of 32 random bytes. */
export function generateSigningSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

/** The headers of one signed delivery. */
export interface StandardWebhookHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * Signs `body` (the exact bytes that will be sent) for message `id` at `timestamp`.
 * @throws Error for a secret that is not `whsec_` + non-empty base64.
 */
export function signStandardWebhook(secret: string, id: string, timestamp: Date, body: string): StandardWebhookHeaders {
  const seconds = Math.floor(timestamp.getTime() / 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(seconds),
    'webhook-signature': new Webhook(secret).sign(id, new Date(seconds * 1000), body),
  };
}
