import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Field encryption of personal data at rest (docs/design.md#security-and-personal-data;
 * docs/operations.md#personal-data-encryption): AES-256-GCM with node:crypto, a key ring
 * whose first key encrypts and whose every key decrypts, the key id carried in each value, and the
 * value bound to its table and column (GCM additional authenticated data) so that a ciphertext
 * copied into another column does not decrypt.
 *
 * Stored value: `pii:v1:<key id>:<iv>:<tag>:<ciphertext>` (iv 12 bytes, tag 16 bytes, each
 * base64url without padding). A value without the `pii:v1:` prefix is a plaintext written before
 * encryption (legacy): read as is until `npm run pii -- rotate` encrypts it.
 */

/** Prefix of every encrypted value (format version 1). */
export const PII_PREFIX = 'pii:v1:';

/** A key id: 1–32 letters, digits, `_` or `-` (it is written inside every value). */
const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;

/** Bytes of an AES-256 key. */
const KEY_BYTES = 32;

/** Bytes of the GCM nonce (the size GCM is designed for) and of its tag. */
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** HKDF `info` of the key that keys the lookup hashes when PII_HMAC_KEY is not set. */
const HMAC_INFO = 'wallet-gateway pii lookup hash v1';

/** A key ring setting that cannot be used (the message names the problem, never a key). */
export class PiiKeyError extends Error {}

/** A stored value that does not decrypt: tampered, cut, moved from another column, or under a key id not in the ring. */
export class PiiDecryptError extends Error {}

function b64url(bytes: Buffer): string {
  return bytes.toString('base64url');
}

/** Decodes standard or url-safe base64 strictly (the re-encoding must give the same bytes back). */
function decodeKey(text: string, what: string): Buffer {
  const normalised = text.trim().replace(/-/g, '+').replace(/_/g, '/');
  const bytes = Buffer.from(normalised, 'base64');
  if (bytes.length !== KEY_BYTES || bytes.toString('base64').replace(/=+$/, '') !== normalised.replace(/=+$/, ''))
    throw new PiiKeyError(`${what} must be base64 of exactly ${KEY_BYTES} bytes`);
  return bytes;
}

/**
 * The keys personal data is encrypted with. Built from the PII_ENCRYPTION_KEYS format
 * `<id>:<base64 32 bytes>[,<id>:<base64 32 bytes>…]`, e.g. `k2:…,k1:…`: the first key encrypts,
 * every key decrypts. Lookup hashes (HMAC-SHA256) use `hmacKey` when given (PII_HMAC_KEY: stable
 * across rotations), else a key derived by HKDF-SHA256 from each ring key (then a value has one
 * candidate hash per key, and rotation rewrites the hashes with the first).
 */
export class PiiKeyRing {
  private readonly keys: ReadonlyMap<string, Buffer>;
  private readonly hmacKeys: ReadonlyArray<Buffer>;
  /** The id of the key new values are encrypted with (the first of the ring). */
  readonly currentKeyId: string;

  private constructor(keys: Array<[string, Buffer]>, hmacKey: Buffer | null) {
    this.keys = new Map(keys);
    this.currentKeyId = keys[0][0];
    this.hmacKeys = hmacKey
      ? [hmacKey]
      : keys.map(([, key]) => Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), HMAC_INFO, KEY_BYTES)));
  }

  /**
   * Parses the PII_ENCRYPTION_KEYS format (see the class comment); whitespace around entries is
   * ignored. `hmacKey`: PII_HMAC_KEY, base64 of 32 bytes, or empty/undefined.
   * @throws PiiKeyError for an empty ring, an entry without `id:`, a bad id, a repeated id, or a
   * key that is not base64 of 32 bytes (the message names the key id, never the key).
   */
  static parse(spec: string, hmacKey?: string): PiiKeyRing {
    const entries = spec
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean);
    if (entries.length === 0) throw new PiiKeyError('holds no key: expected <id>:<base64 32 bytes>[,<id>:<key>…]');
    const keys: Array<[string, Buffer]> = [];
    for (const entry of entries) {
      const colon = entry.indexOf(':');
      if (colon < 0) throw new PiiKeyError('each entry must be <id>:<base64 32 bytes>');
      const id = entry.slice(0, colon).trim();
      if (!KEY_ID.test(id)) throw new PiiKeyError('key ids are 1-32 letters, digits, _ or -');
      if (keys.some(([other]) => other === id)) throw new PiiKeyError(`key id ${id} appears twice`);
      keys.push([id, decodeKey(entry.slice(colon + 1), `key ${id}`)]);
    }
    return new PiiKeyRing(keys, hmacKey ? decodeKey(hmacKey, 'PII_HMAC_KEY') : null);
  }

  /** A new random key in the PII_ENCRYPTION_KEYS entry format, `<id>:<base64>`. */
  static generateEntry(id: string): string {
    if (!KEY_ID.test(id)) throw new PiiKeyError('key ids are 1-32 letters, digits, _ or -');
    return `${id}:${randomBytes(KEY_BYTES).toString('base64')}`;
  }

  /** Whether `value` is in the encrypted format (else it is a legacy plaintext). */
  static isEncrypted(value: string): boolean {
    return value.startsWith(PII_PREFIX);
  }

  /** The key id written in an encrypted value; null for a legacy plaintext. */
  static keyIdOf(value: string): string | null {
    if (!PiiKeyRing.isEncrypted(value)) return null;
    const end = value.indexOf(':', PII_PREFIX.length);
    return end < 0 ? null : value.slice(PII_PREFIX.length, end);
  }

  /** Whether `value` is encrypted with the current key (nothing for rotation to do). */
  isCurrent(value: string): boolean {
    return PiiKeyRing.keyIdOf(value) === this.currentKeyId;
  }

  /** The prefix of every value encrypted with the current key, `pii:v1:<id>:` (for SQL `LIKE`). */
  get currentPrefix(): string {
    return `${PII_PREFIX}${this.currentKeyId}:`;
  }

  /**
   * Encrypts `plaintext` with the current key, bound to `context` (e.g. `card_holders.bvn`): a
   * fresh random IV each time, so equal plaintexts give different values.
   */
  encrypt(plaintext: string, context: string): string {
    const key = this.keys.get(this.currentKeyId) as Buffer;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `${this.currentPrefix}${b64url(iv)}:${b64url(cipher.getAuthTag())}:${b64url(body)}`;
  }

  /**
   * Decrypts a value written by `encrypt` with the same `context`.
   * @throws PiiDecryptError when the value is not in the format, names a key id the ring does not
   * hold, was changed in any byte, or was encrypted for another context (column).
   */
  decrypt(value: string, context: string): string {
    if (!PiiKeyRing.isEncrypted(value)) throw new PiiDecryptError('not an encrypted value');
    const parts = value.slice(PII_PREFIX.length).split(':');
    if (parts.length !== 4) throw new PiiDecryptError('malformed encrypted value');
    const [id, ivText, tagText, bodyText] = parts;
    const key = this.keys.get(id);
    if (!key) throw new PiiDecryptError(`encrypted with key id ${id}, which PII_ENCRYPTION_KEYS does not hold`);
    const iv = Buffer.from(ivText, 'base64url');
    const tag = Buffer.from(tagText, 'base64url');
    if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new PiiDecryptError('malformed encrypted value');
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(Buffer.from(bodyText, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      throw new PiiDecryptError(`value of ${context} does not authenticate (changed, or from another column)`);
    }
  }

  /** Keyed lookup hash (HMAC-SHA256, hex) of `value` for `context` with the current hash key. */
  hash(value: string, context: string): string {
    return this.hmac(this.hmacKeys[0], value, context);
  }

  /**
   * Every hash `value` may be stored under: one per ring key when the hash key is derived from the
   * ring (rows not yet rotated keep an older key's hash), one with PII_HMAC_KEY.
   */
  hashCandidates(value: string, context: string): string[] {
    return this.hmacKeys.map((key) => this.hmac(key, value, context));
  }

  private hmac(key: Buffer, value: string, context: string): string {
    return createHmac('sha256', key).update(context).update('\u0000').update(value, 'utf8').digest('hex');
  }
}
