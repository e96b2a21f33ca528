import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { freePort } from '../../scripts/lib/embedded-db';
import { buildSimulator, type SimulatorOptions } from '../../simulator/app';
import { createApp } from '../../src/app';
import { createApiClient } from '../../src/auth/api-clients.repository';
import { type Scope, SCOPES } from '../../src/auth/scopes';
import { PrismaService } from '../../src/database/prisma.service';
import { createTestDatabase, type TestDatabase } from './database';

export const SIMULATOR_API_KEY = 'sk.test0123456789abcdef.e2e';
export const WEBHOOK_SECRET = 'whsec-e2e-test';
/** The gateway's personal-data key ring in tests (PII_ENCRYPTION_KEYS): one key, id `t1`. */
export const TEST_PII_KEYS = `t1:${Buffer.alloc(32, 't1').toString('base64')}`;

/** A running simulator on a loopback port, with helpers for its admin API. */
export interface TestSimulator {
  /** Base URL including /api/v1. */
  baseUrl: string;
  origin: string;
  admin(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  /** Calls the simulator received for one operation (e.g. `createCustomer`). */
  calls(operation?: string): Promise<Array<{ operation: string; method: string; path: string; body: any }>>;
  setFault(operation: string, fault: Record<string, unknown>): Promise<void>;
  close(): Promise<void>;
}

/** A gateway app on its own database, talking to its own simulator. */
export interface Harness {
  app: NestFastifyApplication;
  db: TestDatabase;
  sim: TestSimulator;
  http: () => TestAgent;
  /** A new API key holding the given scopes (all by default). */
  key(scopes?: Scope[]): Promise<string>;
  close(): Promise<void>;
}

export async function startSimulator(options: Partial<SimulatorOptions> = {}): Promise<TestSimulator> {
  const { app } = await buildSimulator({
    apiKey: SIMULATOR_API_KEY,
    webhookSecret: WEBHOOK_SECRET,
    logger: false,
    ...options,
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address() as { port: number };
  const origin = `http://127.0.0.1:${address.port}`;
  const admin = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${origin}/__admin${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  return {
    baseUrl: `${origin}/api/v1`,
    origin,
    admin,
    calls: async (operation) =>
      (await admin('GET', `/calls${operation ? `?operation=${encodeURIComponent(operation)}` : ''}`)).body.calls,
    setFault: async (operation, fault) => {
      const res = await admin('PUT', '/faults', { [operation]: fault });
      if (res.status >= 300) throw new Error(`setFault failed: ${res.status}`);
    },
    close: async () => {
      await app.close();
    },
  };
}

/** Starts database + simulator + gateway. `env` overrides the gateway's environment. */
/**
 * Starts database + simulator + gateway. `env` overrides the gateway's environment. With `listen`,
 * the gateway also listens on a loopback port and PUBLIC_BASE_URL points there, so that the
 * simulator's callbacks reach it.
 */
export async function startHarness(
  opts: { env?: Record<string, string>; simulator?: Partial<SimulatorOptions>; listen?: boolean } = {},
): Promise<Harness> {
  const db = await createTestDatabase();
  const port = opts.listen ? await freePort() : undefined;
  let sim: TestSimulator | undefined;
  try {
    sim = await startSimulator({
      ...(port ? { webhookUrl: `http://127.0.0.1:${port}/webhooks/provider` } : {}),
      ...opts.simulator,
    });
    return await startGateway(db, sim, opts.env, port);
  } catch (error) {
    // Leave nothing behind when start-up fails half way.
    await sim?.close();
    await db.drop();
    throw error;
  }
}

async function startGateway(
  db: TestDatabase,
  sim: TestSimulator,
  env: Record<string, string> = {},
  port?: number,
): Promise<Harness> {
  // `env` holds this harness's own settings: put back as they were on close, so that a later
  // harness of the same test file does not inherit them (a LOG_FILE kept on would make the next
  // gateway write, and re-create, a log file its test had already removed).
  const overridden = Object.fromEntries(Object.keys(env).map((name) => [name, process.env[name]]));
  Object.assign(process.env, {
    NODE_ENV: 'test',
    DATABASE_URL: db.url,
    PROVIDER_BASE_URL: sim.baseUrl,
    PROVIDER_API_KEY: SIMULATOR_API_KEY,
    PROVIDER_WEBHOOK_SECRET: WEBHOOK_SECRET,
    PROVIDER_TIMEOUT_MS: '800',
    PUBLIC_BASE_URL: `http://127.0.0.1:${port ?? 3000}`,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    RATE_LIMIT_PER_MINUTE: '100000',
    JOBS_ENABLED: 'false',
    WEBHOOK_APPLY: 'inline',
    PII_ENCRYPTION_KEYS: TEST_PII_KEYS,
    // The tests' outbound receivers listen on loopback (test/ssrf.e2e-spec.ts turns this off).
    OUTBOUND_ALLOW_PRIVATE: 'true',
    ...env,
  });
  const app = await createApp({ bufferLogs: true });
  if (port) await app.listen({ port, host: '127.0.0.1' });
  const prisma = app.get(PrismaService);
  return {
    app,
    db,
    sim,
    http: () => request(app.getHttpServer()),
    key: async (scopes = [...SCOPES]) => (await createApiClient(prisma, 'test', scopes)).key,
    close: async () => {
      await app.close();
      await sim.close();
      await db.drop();
      for (const [name, value] of Object.entries(overridden)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    },
  };
}

/**
 * A second gateway instance on the same database and simulator as `h` (another process in
 * production): for tests of what several instances do at once, or of a restart.
 */
export async function startPeer(h: Harness): Promise<{ app: NestFastifyApplication; close(): Promise<void> }> {
  process.env.DATABASE_URL = h.db.url;
  process.env.PROVIDER_BASE_URL = h.sim.baseUrl;
  const app = await createApp({ bufferLogs: true });
  return { app, close: () => app.close() };
}
