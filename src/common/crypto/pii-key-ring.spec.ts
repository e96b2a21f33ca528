import { piiKeyRingFrom } from './pii-cipher';
import { PII_PREFIX, PiiDecryptError, PiiKeyError, PiiKeyRing } from './pii-key-ring';

const key = (fill: string) => Buffer.alloc(32, fill).toString('base64');
const K1 = `k1:${key('1')}`;
const K2 = `k2:${key('2')}`;

describe(PiiKeyRing.name, () => {
  describe('parse', () => {
    it('takes `<id>:<base64 32 bytes>` entries; the first is current', () => {
      const ring = PiiKeyRing.parse(` ${K2} , ${K1} `);
      expect(ring.currentKeyId).toBe('k2');
      expect(ring.currentPrefix).toBe('pii:v1:k2:');
    });

    it('refuses an empty ring, a missing id, a bad id, a repeated id and a key that is not 32 bytes', () => {
      expect(() => PiiKeyRing.parse(' , ')).toThrow(PiiKeyError);
      expect(() => PiiKeyRing.parse(key('1'))).toThrow(/<id>:<base64 32 bytes>/);
      expect(() => PiiKeyRing.parse(`k 1:${key('1')}`)).toThrow(/key ids/);
      expect(() => PiiKeyRing.parse(`${K1},${K1}`)).toThrow(/k1 appears twice/);
      expect(() => PiiKeyRing.parse(`k1:${Buffer.alloc(16).toString('base64')}`)).toThrow(/key k1 must be base64/);
      expect(() => PiiKeyRing.parse('k1:not base64!')).toThrow(PiiKeyError);
    });

    it('never puts a key into its messages', () => {
      const bad = `k1:${key('1')}x`;
      expect(() => PiiKeyRing.parse(bad)).toThrow(PiiKeyError);
      try {
        PiiKeyRing.parse(bad);
      } catch (error) {
        expect((error as Error).message).not.toContain(key('1').slice(0, 20));
      }
    });

    it('generateEntry makes an entry parse accepts', () => {
      const entry = PiiKeyRing.generateEntry('k9');
      expect(PiiKeyRing.parse(entry).currentKeyId).toBe('k9');
      expect(entry).not.toBe(PiiKeyRing.generateEntry('k9'));
    });
  });

  describe('encrypt / decrypt', () => {
    const ring = PiiKeyRing.parse(`${K2},${K1}`);

    it('round-trips, with the key id in the value and a fresh IV each time', () => {
      const a = ring.encrypt('22222222222', 'card_holders.bvn');
      const b = ring.encrypt('22222222222', 'card_holders.bvn');
      expect(a.startsWith(`${PII_PREFIX}k2:`)).toBe(true);
      expect(a).not.toContain('22222222222');
      expect(a).not.toBe(b);
      expect(ring.decrypt(a, 'card_holders.bvn')).toBe('22222222222');
      expect(ring.decrypt(b, 'card_holders.bvn')).toBe('22222222222');
      expect(PiiKeyRing.keyIdOf(a)).toBe('k2');
      expect(ring.isCurrent(a)).toBe(true);
    });

    it('decrypts values of an older key of the ring, which are not current', () => {
      const old = PiiKeyRing.parse(K1).encrypt('A12345678', 'card_holders.id_number');
      expect(ring.decrypt(old, 'card_holders.id_number')).toBe('A12345678');
      expect(ring.isCurrent(old)).toBe(false);
    });

    it('refuses a tampered value: ciphertext, tag or IV changed, or cut', () => {
      const value = ring.encrypt('+2348012345678', 'card_holders.phone');
      const parts = value.split(':');
      const flip = (text: string) => {
        const bytes = Buffer.from(text, 'base64url');
        bytes[0] ^= 1;
        return bytes.toString('base64url');
      };
      for (const index of [3, 4, 5]) {
        const changed = [...parts];
        changed[index] = flip(changed[index]);
        expect(() => ring.decrypt(changed.join(':'), 'card_holders.phone')).toThrow(PiiDecryptError);
      }
      expect(() => ring.decrypt(parts.slice(0, 5).join(':'), 'card_holders.phone')).toThrow(PiiDecryptError);
      expect(() => ring.decrypt('22222222222', 'card_holders.phone')).toThrow(/not an encrypted value/);
    });

    it('refuses a value whose key id is not in the ring', () => {
      const foreign = PiiKeyRing.parse(`k3:${key('3')}`).encrypt('x', 'card_holders.bvn');
      expect(() => ring.decrypt(foreign, 'card_holders.bvn')).toThrow(/key id k3/);
      // The same id with another key does not authenticate either.
      const impostor = PiiKeyRing.parse(`k2:${key('9')}`).encrypt('x', 'card_holders.bvn');
      expect(() => ring.decrypt(impostor, 'card_holders.bvn')).toThrow(PiiDecryptError);
    });

    it('refuses a value moved to another column (AAD mismatch)', () => {
      const bvn = ring.encrypt('22222222222', 'card_holders.bvn');
      expect(() => ring.decrypt(bvn, 'card_holders.id_number')).toThrow(/does not authenticate/);
    });
  });

  describe('lookup hashes', () => {
    it('are keyed, per column, stable for one key; derived hashes offer one candidate per ring key', () => {
      const ring = PiiKeyRing.parse(`${K2},${K1}`);
      const h = ring.hash('22222222222', 'card_holders.bvn#hash');
      expect(h).toMatch(/^[0-9a-f]{64}$/);
      expect(ring.hash('22222222222', 'card_holders.bvn#hash')).toBe(h);
      expect(ring.hash('22222222222', 'card_holders.id_number#hash')).not.toBe(h);
      const old = PiiKeyRing.parse(K1).hash('22222222222', 'card_holders.bvn#hash');
      expect(ring.hashCandidates('22222222222', 'card_holders.bvn#hash')).toEqual([h, old]);
    });

    it('with PII_HMAC_KEY, one hash that does not change with the keys', () => {
      const a = PiiKeyRing.parse(K1, key('h'));
      const b = PiiKeyRing.parse(`${K2},${K1}`, key('h'));
      expect(b.hashCandidates('x', 'c')).toEqual([a.hash('x', 'c')]);
    });
  });
});

describe('piiKeyRingFrom', () => {
  it('refuses production without PII_ENCRYPTION_KEYS, naming the variable', () => {
    expect(() => piiKeyRingFrom({ NODE_ENV: 'production' })).toThrow(/PII_ENCRYPTION_KEYS is required/);
  });

  it('falls back to the development key elsewhere, and uses the setting when given', () => {
    expect(piiKeyRingFrom({ NODE_ENV: 'development' })).toMatchObject({ usesDevelopmentKey: true });
    const { ring, usesDevelopmentKey } = piiKeyRingFrom({ NODE_ENV: 'production', PII_ENCRYPTION_KEYS: K1 });
    expect(usesDevelopmentKey).toBe(false);
    expect(ring.currentKeyId).toBe('k1');
  });
});
