import { Global, Module } from '@nestjs/common';
import { PendingWrites } from './pending-writes';
import { PrismaService } from './prisma.service';
import { ReadPool } from './read-pool';

/**
 * Provides PrismaService (writes, most reads), the ReadPool (hot and finance reads) and
 * PendingWrites (what a request cut by a database outage still has to write) to every module.
 */
@Global()
@Module({ providers: [PrismaService, ReadPool, PendingWrites], exports: [PrismaService, ReadPool, PendingWrites] })
export class DatabaseModule {}
