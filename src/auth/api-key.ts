import { hash, randomBytes } from 'node:crypto';

/** Prefix of every gateway client key, so that leaked keys are easy to recognise and scan for. */
export const API_KEY_PREFIX = 'wgk_';

/** Characters of the key kept in clear (`keyPrefix`) to recognise a key in listings. */
export const KEY_PREFIX_LENGTH = 12;

/** A new random client key: `wgk_` + 32 random bytes in base64url (256 bits). Shown once. */
export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** SHA-256 hex of a key: what the database stores. A fast hash suffices for 256-bit random keys. */
export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

/** The part of a key stored and shown in clear. */
export function keyPrefixOf(key: string): string {
  return key.slice(0, KEY_PREFIX_LENGTH);
}
