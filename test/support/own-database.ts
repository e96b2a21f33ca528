import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { type RestartableDatabase, startRestartableDatabase, withDatabase } from '../../scripts/lib/embedded-db';
import { migrateDatabase } from '../../scripts/lib/migrate';
import { createApiClient } from '../../src/auth/api-clients.repository';
import { SCOPES } from '../../src/auth/scopes';
import { createPgAdapter } from '../../src/database/prisma.service';
import { PrismaClient } from '../../src/generated/prisma/client';
import { type ChildGateway, startChildGateway } from './child-gateway';
import {
  type Harness,
  SIMULATOR_API_KEY,
  startSimulator,
  TEST_PII_KEYS,
  type TestSimulator,
  WEBHOOK_SECRET,
} from './harness';

/**
 * A PostgreSQL server of one test file's own (an embedded one on a free loopback port, never the
 * shared server), migrated, with a gateway child process and a simulator on it: for tests that stop
 * and restart the database under the gateway.
 */
export interface OwnDatabaseWorld {
  server: RestartableDatabase;
  /** The gateway's database URL on that server. */
  databaseUrl: string;
  sim: TestSimulator;
  gateway: ChildGateway;
  /** Authorization header of an API key with every scope. */
  auth: Record<string, string>;
  /** Runs SQL on the database (a connection opened for the call, so that it survives restarts). */
  query<T extends Record<string, unknown> = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

/**
 * Starts the server, migrates a database on it, creates an API key, starts a simulator and a
 * gateway child process (src/main.ts) with `env` on top of the tests' usual settings.
 */
export async function startOwnDatabaseWorld(env: Record<string, string> = {}): Promise<OwnDatabaseWorld> {
  const server = await startRestartableDatabase();
  let sim: TestSimulator | undefined;
  try {
    const databaseUrl = withDatabase(server.url, 'gateway');
    migrateDatabase(databaseUrl);
    const prisma = new PrismaClient({ adapter: createPgAdapter(databaseUrl, 1) });
    const { key } = await createApiClient(prisma, `outage-${randomUUID()}`, [...SCOPES]);
    await prisma.$disconnect();
    sim = await startSimulator();
    const gateway = await startChildGateway({ db: { url: databaseUrl }, sim } as unknown as Harness, {
      NODE_ENV: 'test',
      PROVIDER_API_KEY: SIMULATOR_API_KEY,
      PROVIDER_WEBHOOK_SECRET: WEBHOOK_SECRET,
      PROVIDER_TIMEOUT_MS: '10000',
      PII_ENCRYPTION_KEYS: TEST_PII_KEYS,
      RATE_LIMIT_PER_MINUTE: '100000',
      WEBHOOK_APPLY: 'inline',
      OUTBOUND_ALLOW_PRIVATE: 'true',
      ...env,
    });
    const started = sim;
    return {
      server,
      databaseUrl,
      sim,
      gateway,
      auth: { Authorization: `Bearer ${key}` },
      query: async (sql, params) => {
        const client = new Client({ connectionString: databaseUrl });
        await client.connect();
        try {
          return (await client.query(sql, params)).rows;
        } finally {
          await client.end();
        }
      },
      close: async () => {
        await gateway.kill();
        await started.close();
        await server.destroy();
      },
    };
  } catch (error) {
    await sim?.close();
    await server.destroy();
    throw error;
  }
}
