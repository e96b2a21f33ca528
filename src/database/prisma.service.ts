import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { PrismaPg } from '@prisma/adapter-pg';
import { Pool } from 'pg';
import type { Env } from '../config/env';
import { PrismaClient } from '../generated/prisma/client';
import { ShutdownService } from '../lifecycle/shutdown.service';
import type { PoolStats } from './read-pool';
export { isUniqueViolation } from './unique-violation';

/**
 * The node-postgres pool Prisma runs on, for a connection string: at most `poolSize` connections;
 * `?schema=NAME` selects a PostgreSQL schema (the adapter needs it passed separately; Prisma 7 +
 * adapter-pg), returned apart.
 */
function prismaPool(connectionString: string, poolSize: number): { pool: Pool; schema?: string } {
  const url = new URL(connectionString);
  const schema = url.searchParams.get('schema') ?? undefined;
  url.searchParams.delete('schema');
  return { pool: new Pool({ connectionString: url.toString(), max: poolSize }), schema };
}

/** The adapter over `pool`, which it ends on `$disconnect()` (`disposeExternalPool`), as a pool of its own. */
function adapterOn(pool: Pool, schema: string | undefined): PrismaPg {
  return new PrismaPg(pool, { disposeExternalPool: true, ...(schema ? { schema } : {}) });
}

/** Builds the adapter for a connection string, over a pool of at most `poolSize` connections (see `prismaPool`). */
export function createPgAdapter(connectionString: string, poolSize = 10): PrismaPg {
  const { pool, schema } = prismaPool(connectionString, poolSize);
  return adapterOn(pool, schema);
}

/**
 * The generated Prisma client over node-postgres (@prisma/adapter-pg), with at most
 * DATABASE_POOL_SIZE connections: every write and the reads that are not hot (the hot ones go
 * through the ReadPool, read-pool.ts). Disconnected in the last shutdown stage (`pools`,
 * registered first so it closes after the pools registered later), after the HTTP server and the
 * workers have finished.
 */
@Injectable()
export class PrismaService extends PrismaClient {
  private readonly pool: Pool;

  constructor(config: ConfigService<Env, true>, shutdown: ShutdownService) {
    // The pool is built here rather than by the adapter, so that its use can be read (poolStats).
    const { pool, schema } = prismaPool(
      config.get('DATABASE_URL', { infer: true }),
      config.get('DATABASE_POOL_SIZE', { infer: true }) ?? 10,
    );
    super({ adapter: adapterOn(pool, schema) });
    this.pool = pool;
    shutdown.register('pools', 'prisma pool', () => this.$disconnect(), { last: true });
  }

  /** Connections of Prisma's pool now: open, idle, and queries waiting for one (for /metrics). */
  poolStats(): PoolStats {
    return { total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.pool.waitingCount };
  }
}
