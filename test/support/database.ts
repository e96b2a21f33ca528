import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { withDatabase } from '../../scripts/lib/embedded-db';

/** A database of one test file's own, cloned from the migrated template. */
export interface TestDatabase {
  url: string;
  /** Runs SQL against it (for assertions on what was stored). */
  query<T extends Record<string, unknown> = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  drop(): Promise<void>;
}

function serverUrl(): string {
  const url = process.env.TEST_DB_SERVER_URL;
  if (!url || !process.env.TEST_DB_TEMPLATE)
    throw new Error('Run tests through jest (globalSetup prepares the database).');
  return url;
}

async function admin<T>(fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: withDatabase(serverUrl(), 'postgres') });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Creates a fresh, migrated database for the calling test file. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `wg_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  const template = process.env.TEST_DB_TEMPLATE as string;
  await admin(async (client) => {
    for (let attempt = 0; ; attempt++) {
      try {
        await client.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
        return;
      } catch (error) {
        // Two clones starting at the same instant can collide on the template; try again shortly.
        if (attempt >= 20 || !/being accessed by other users/.test((error as Error).message)) throw error;
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
      }
    }
  });
  const url = withDatabase(serverUrl(), name);
  const client = new Client({ connectionString: url });
  await client.connect();
  return {
    url,
    query: async (sql, params) => (await client.query(sql, params)).rows,
    drop: async () => {
      await client.end();
      await admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}
