import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { PrismaPg } from '@prisma/adapter-pg';
import type { Env } from '../config/env';
import { PrismaClient } from '../generated/prisma/client';
import { ShutdownService } from '../lifecycle/shutdown.service';
export { isUniqueViolation } from './unique-violation';

/**
 * Builds the adapter for a connection string. `?schema=NAME` selects a PostgreSQL schema (the
 * adapter needs it passed separately; Prisma 7 + adapter-pg).
 */
export function createPgAdapter(connectionString: string, poolSize = 10): PrismaPg {
  const url = new URL(connectionString);
  const schema = url.searchParams.get('schema') ?? undefined;
  url.searchParams.delete('schema');
  return new PrismaPg({ connectionString: url.toString(), max: poolSize }, schema ? { schema } : undefined);
}

/** Longest wait of an interactive transaction for a connection of Prisma's pool, ms. */
export const TRANSACTION_MAX_WAIT_MS = 10_000;
/** Longest run of an interactive transaction before Prisma rolls it back, ms (it holds row locks meanwhile). */
export const TRANSACTION_TIMEOUT_MS = 15_000;

/**
 * The one door to PostgreSQL: the generated Prisma client over node-postgres (@prisma/adapter-pg),
 * with at most DATABASE_POOL_SIZE connections. Disconnected in the last shutdown stage (`pools`,
 * registered first so it closes after the pools registered later), after the HTTP server and the
 * workers have finished.
 */
@Injectable()
export class PrismaService extends PrismaClient {
  constructor(config: ConfigService<Env, true>, shutdown: ShutdownService) {
    super({
      adapter: createPgAdapter(
        config.get('DATABASE_URL', { infer: true }),
        config.get('DATABASE_POOL_SIZE', { infer: true }) ?? 10,
      ),
      // Prisma's defaults (2 s to get a pool connection, 5 s to run) made a busy instance answer 500
      // `internal_error` ("Unable to start a transaction in the given time", "expired transaction"),
      // an answer the idempotency record keeps: seen in bench:cluster while one instance of three
      // restarts and the other two take its share on a saturated machine.
      transactionOptions: { maxWait: TRANSACTION_MAX_WAIT_MS, timeout: TRANSACTION_TIMEOUT_MS },
    });
    shutdown.register('pools', 'prisma pool', () => this.$disconnect(), { last: true });
  }
}
