import fs from 'node:fs';
import { Client } from 'pg';
import { withDatabase } from '../../scripts/lib/embedded-db';
import type { EmbeddedDatabase } from '../../scripts/lib/embedded-db';

/**
 * Drops the template database and stops the embedded server, if one was started; removes the run's
 * folder for test files (TEST_TMP_DIR), and fails the run if a test left a file in it.
 */
export default async function globalTeardown(): Promise<void> {
  const serverUrl = process.env.TEST_DB_SERVER_URL;
  const template = process.env.TEST_DB_TEMPLATE;
  if (serverUrl && template) {
    const admin = new Client({ connectionString: withDatabase(serverUrl, 'postgres') });
    await admin.connect();
    try {
      await admin.query(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
    } finally {
      await admin.end();
    }
  }
  const embedded = (globalThis as Record<string, unknown>).__EMBEDDED_DB__ as EmbeddedDatabase | undefined;
  if (embedded) await embedded.stop();
  const tmp = process.env.TEST_TMP_DIR;
  if (tmp) {
    const left = fs.existsSync(tmp) ? fs.readdirSync(tmp) : [];
    fs.rmSync(tmp, { recursive: true, force: true });
    if (left.length) throw new Error(`tests left files behind in ${tmp}: ${left.join(', ')}`);
  }
}
