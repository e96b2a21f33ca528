import { Injectable, OnModuleDestroy } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { PrismaPg } from '@prisma/adapter-pg';
import type { Env } from '../config/env';
import { PrismaClient } from '../generated/prisma/client';
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

/** The one door to PostgreSQL: the generated Prisma client over node-postgres (@prisma/adapter-pg). */
@Injectable()
export class PrismaService extends PrismaClient implements OnModuleDestroy {
  constructor(config: ConfigService<Env, true>) {
    super({ adapter: createPgAdapter(config.get('DATABASE_URL', { infer: true })) });
  }

  async onModuleDestroy(): Promise<void> {
    await this.$disconnect();
  }
}
