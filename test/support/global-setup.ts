import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { startEmbeddedDatabase, withDatabase } from '../../scripts/lib/embedded-db';
import { migrateDatabase } from '../../scripts/lib/migrate';

/**
 * Jest global setup: finds a PostgreSQL server (DATABASE_URL, else an embedded one), migrates a
 * template database once, and tells the workers (through the environment, which they inherit)
 * where it is. Each test file then clones its own database from the template
 * (test/support/database.ts), so files run in parallel and leave nothing behind. Also makes the
 * run's folder for the files tests write (TEST_TMP_DIR, test/support/tmp.ts).
 */
export default async function globalSetup(): Promise<void> {
  let serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    const embedded = await startEmbeddedDatabase({ persistent: false });
    (globalThis as Record<string, unknown>).__EMBEDDED_DB__ = embedded;
    serverUrl = embedded.url;
  }
  const template = `wg_test_tpl_${process.pid}`;
  const admin = new Client({ connectionString: withDatabase(serverUrl, 'postgres') });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${template}`);
  } finally {
    await admin.end();
  }
  migrateDatabase(withDatabase(serverUrl, template));
  process.env.TEST_TMP_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'wg-test-run-'));
  process.env.TEST_DB_SERVER_URL = serverUrl;
  process.env.TEST_DB_TEMPLATE = template;
}
