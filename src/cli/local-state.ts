import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Where `npm start` keeps what belongs to one checkout, beside its embedded PostgreSQL's data
 * (localDatabaseDir): `<tmp>/wallet-gateway-<tag>/` with `database-url` (the embedded database's
 * URL while npm start runs, read by `npm run api-key` when DATABASE_URL is unset), `gateway.log`,
 * `simulator.log` and `simulator-state.json`. `<tag>` is a hash of the checkout's folder (`cwd`,
 * which npm sets to the package root). LOCAL_STATE_DIR, when set, names the folder instead (tests
 * of npm start use their own).
 */
export function localStateDir(cwd = process.cwd()): string {
  if (process.env.LOCAL_STATE_DIR) return path.resolve(process.env.LOCAL_STATE_DIR);
  return path.join(os.tmpdir(), `wallet-gateway-${checkoutTag(cwd)}`);
}

/**
 * The data folder of `npm start`'s embedded PostgreSQL: `<tmp>/wallet-gateway-pg-<tag>`, or
 * `<LOCAL_STATE_DIR>-pg` (not inside the state folder: as root the server runs as the `postgres`
 * user, which cannot enter the state folder, mode 0700).
 */
export function localDatabaseDir(cwd = process.cwd()): string {
  if (process.env.LOCAL_STATE_DIR) return `${localStateDir(cwd)}-pg`;
  return path.join(os.tmpdir(), `wallet-gateway-pg-${checkoutTag(cwd)}`);
}

/** A short hash of the checkout's folder. */
function checkoutTag(cwd: string): string {
  return createHash('sha1').update(cwd).digest('hex').slice(0, 8);
}

/** The database URL `npm start` wrote for this checkout, if it is running (or was). */
export function readLocalDatabaseUrl(cwd = process.cwd()): string | undefined {
  try {
    return fs.readFileSync(path.join(localStateDir(cwd), 'database-url'), 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}
