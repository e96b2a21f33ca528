import { Client } from 'pg';
import { startEmbeddedDatabase, withDatabase } from '../../scripts/lib/embedded-db';
import { migrateDatabase } from '../../scripts/lib/migrate';

/**
 * Jest global setup: finds a PostgreSQL server (DATABASE_URL, else an embedded one), migrates a
 * template database once, and tells the workers (through the environment, which they inherit)
 * where it is. Each test file then clones its own database from the template
 * (test/support/database.ts), so files run in parallel and leave nothing behind.
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
  process.env.TEST_DB_SERVER_URL = serverUrl;
  process.env.TEST_DB_TEMPLATE = template;
}
