import type { Provider } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Test, type TestingModule } from '@nestjs/testing';
import { PrismaService } from '../../src/database/prisma.service';
import { ShutdownService } from '../../src/lifecycle/shutdown.service';
import { createTestDatabase, type TestDatabase } from './database';

/** A medium spec's world: real providers over the file's own migrated database, no HTTP. */
export interface MediumWorld {
  db: TestDatabase;
  moduleRef: TestingModule;
  prisma: PrismaService;
  close(): Promise<void>;
}

/**
 * Builds a Nest testing module with `providers` (the real classes), PrismaService on a fresh test
 * database, and a ConfigService holding DATABASE_URL plus `env` (the settings those providers read).
 */
export async function mediumWorld(providers: Provider[], env: Record<string, unknown> = {}): Promise<MediumWorld> {
  const db = await createTestDatabase();
  const moduleRef = await Test.createTestingModule({
    providers: [
      { provide: ConfigService, useValue: new ConfigService({ DATABASE_URL: db.url, ...env }) },
      ShutdownService,
      PrismaService,
      ...providers,
    ],
  }).compile();
  const prisma = moduleRef.get(PrismaService);
  return {
    db,
    moduleRef,
    prisma,
    close: async () => {
      await moduleRef.close();
      await db.drop();
    },
  };
}
