import { createHash } from 'node:crypto';
import { Global, Logger, Module, type Provider } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Env } from '../../config/env';
import { PiiKeyError, PiiKeyRing } from './pii-key-ring';

/**
 * The columns holding encrypted personal data, each the context its values are bound to (GCM
 * additional data): a value copied into another column does not decrypt. Keyed lookup hashes use
 * the same names with `#hash`.
 */
export const PII_COLUMNS = {
  cardHolderBvn: 'card_holders.bvn',
  cardHolderIdNumber: 'card_holders.id_number',
  cardHolderDateOfBirth: 'card_holders.date_of_birth',
  cardHolderPhone: 'card_holders.phone',
  cardHolderAddress: 'card_holders.address',
  webhookSubscriptionSecret: 'webhook_subscriptions.secret',
} as const;

export type PiiColumn = (typeof PII_COLUMNS)[keyof typeof PII_COLUMNS];

/**
 * Key id of the built-in development key used outside production when PII_ENCRYPTION_KEYS is not
 * set. Its key is derived from a public string: it keeps data out of plain sight in a dump, not
 * secret. `npm start` writes a random key instead (scripts/start.ts); production refuses to start.
 */
export const DEV_KEY_ID = 'dev';
const DEV_KEY = createHash('sha256').update('wallet-gateway development PII key (not secret)').digest('base64');

/**
 * The key ring the settings describe (PII_ENCRYPTION_KEYS, PII_HMAC_KEY). Without
 * PII_ENCRYPTION_KEYS: the development key outside production (`usesDevelopmentKey`).
 * @throws PiiKeyError when NODE_ENV=production and no key is set, or a setting is malformed.
 */
export function piiKeyRingFrom(settings: { NODE_ENV?: string; PII_ENCRYPTION_KEYS?: string; PII_HMAC_KEY?: string }): {
  ring: PiiKeyRing;
  usesDevelopmentKey: boolean;
} {
  const spec = settings.PII_ENCRYPTION_KEYS?.trim();
  if (spec) return { ring: PiiKeyRing.parse(spec, settings.PII_HMAC_KEY || undefined), usesDevelopmentKey: false };
  if (settings.NODE_ENV === 'production')
    throw new PiiKeyError(
      'PII_ENCRYPTION_KEYS is required when NODE_ENV=production: personal data is stored encrypted. ' +
        'Set it to <id>:<base64 of 32 random bytes>, e.g. k1:$(openssl rand -base64 32) (docs/operations.md "Personal data encryption").',
    );
  return {
    ring: PiiKeyRing.parse(`${DEV_KEY_ID}:${DEV_KEY}`, settings.PII_HMAC_KEY || undefined),
    usesDevelopmentKey: true,
  };
}

/**
 * Encrypts and decrypts personal data for the repositories that store it (the only callers: the
 * rest of the code sees plaintext domain values). Values read back without the encrypted prefix
 * are legacy plaintext rows, returned as they are until `npm run pii -- rotate` encrypts them.
 */
export class PiiCipher {
  constructor(private readonly ring: PiiKeyRing) {}

  /**
   * The cipher the settings describe (see `piiKeyRingFrom`); warns when it falls back to the
   * development key.
   * @throws PiiKeyError as `piiKeyRingFrom`.
   */
  static fromConfig(config: ConfigService<Env, true>): PiiCipher {
    const { ring, usesDevelopmentKey } = piiKeyRingFrom({
      NODE_ENV: config.get('NODE_ENV', { infer: true }),
      PII_ENCRYPTION_KEYS: config.get('PII_ENCRYPTION_KEYS', { infer: true }),
      PII_HMAC_KEY: config.get('PII_HMAC_KEY', { infer: true }),
    });
    if (usesDevelopmentKey)
      new Logger(PiiCipher.name).warn(
        'PII_ENCRYPTION_KEYS is not set: personal data is encrypted with the built-in development key (never in production).',
      );
    return new PiiCipher(ring);
  }

  /** Id of the key new values are encrypted with. */
  get currentKeyId(): string {
    return this.ring.currentKeyId;
  }

  /** `pii:v1:<current key id>:`: values starting so need no rotation (for SQL `LIKE` filters). */
  get currentPrefix(): string {
    return this.ring.currentPrefix;
  }

  /** `plaintext` encrypted for `column` with the current key. */
  seal(plaintext: string, column: PiiColumn): string {
    return this.ring.encrypt(plaintext, column);
  }

  /** `seal` of a value that may be absent (null stays null). */
  sealOptional(plaintext: string | null | undefined, column: PiiColumn): string | null {
    return plaintext === null || plaintext === undefined ? null : this.seal(plaintext, column);
  }

  /**
   * The plaintext of a stored value: decrypted, or as it is for a legacy plaintext (no prefix).
   * @throws PiiDecryptError for a value that is encrypted but does not decrypt (see PiiKeyRing.decrypt).
   */
  open(stored: string, column: PiiColumn): string {
    return PiiKeyRing.isEncrypted(stored) ? this.ring.decrypt(stored, column) : stored;
  }

  /** `open` of a value that may be absent (null stays null). */
  openOptional(stored: string | null, column: PiiColumn): string | null {
    return stored === null ? null : this.open(stored, column);
  }

  /** Whether a stored value is a legacy plaintext or under an older key (rotation rewrites it). */
  needsRotation(stored: string | null): boolean {
    return stored !== null && !this.ring.isCurrent(stored);
  }

  /** Keyed lookup hash (HMAC-SHA256, hex) of `value` for `column`, as written with a new value. */
  hash(value: string, column: PiiColumn): string {
    return this.ring.hash(value, `${column}#hash`);
  }

  /** Every hash a stored row may hold for `value` (see PiiKeyRing.hashCandidates): look up with `IN`. */
  hashCandidates(value: string, column: PiiColumn): string[] {
    return this.ring.hashCandidates(value, `${column}#hash`);
  }
}

/** Provides PiiCipher to every module (the repositories that store personal data). */
/** The Nest provider of PiiCipher, built from the ConfigService. */
export const PII_CIPHER_PROVIDER: Provider = {
  provide: PiiCipher,
  useFactory: (config: ConfigService<Env, true>) => PiiCipher.fromConfig(config),
  inject: [ConfigService],
};

@Global()
@Module({ providers: [PII_CIPHER_PROVIDER], exports: [PiiCipher] })
export class PiiModule {}
