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
    });
    shutdown.register('pools', 'prisma pool', () => this.$disconnect(), { last: true });
  }
}
