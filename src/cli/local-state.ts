import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Where `npm start` keeps what belongs to one checkout, beside its embedded PostgreSQL's data
 * (`<tmp>/wallet-gateway-pg-<tag>`): `<tmp>/wallet-gateway-<tag>/` with `database-url` (the
 * embedded database's URL while npm start runs, read by `npm run api-key` when DATABASE_URL is
 * unset), `gateway.log` and `simulator-state.json`. `<tag>` is a hash of the checkout's folder
 * (`cwd`, which npm sets to the package root).
 */
export function localStateDir(cwd = process.cwd()): string {
  const tag = createHash('sha1').update(cwd).digest('hex').slice(0, 8);
  return path.join(os.tmpdir(), `wallet-gateway-${tag}`);
}

/** The database URL `npm start` wrote for this checkout, if it is running (or was). */
export function readLocalDatabaseUrl(cwd = process.cwd()): string | undefined {
  try {
    return fs.readFileSync(path.join(localStateDir(cwd), 'database-url'), 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}
