import fs from 'node:fs';
import path from 'node:path';
import { PiiKeyRing } from '../../src/common/crypto/pii-key-ring';

/** Where `npm start` keeps its development key ring (git-ignored: `.data/`). */
export const DEV_PII_KEY_FILE = path.join(process.cwd(), '.data', 'pii-encryption-keys');

/**
 * The PII_ENCRYPTION_KEYS for `npm start`: the environment's when set; else the ring kept in
 * DEV_PII_KEY_FILE, made once with a random key (mode 0600) and reused on every start, so that the
 * data of the persistent embedded database stays readable. Returns the value and whether it was made now.
 * @throws PiiKeyError when the kept file holds a malformed ring.
 */
export function developmentPiiKeys(file = DEV_PII_KEY_FILE): { keys: string; created: boolean } {
  const fromEnv = process.env.PII_ENCRYPTION_KEYS?.trim();
  if (fromEnv) return { keys: fromEnv, created: false };
  if (fs.existsSync(file)) {
    const kept = fs.readFileSync(file, 'utf8').trim();
    PiiKeyRing.parse(kept);
    return { keys: kept, created: false };
  }
  const keys = PiiKeyRing.generateEntry('local1');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${keys}\n`, { mode: 0o600 });
  return { keys, created: true };
}
