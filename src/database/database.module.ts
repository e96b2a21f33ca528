import { Global, Module } from '@nestjs/common';
import { PrismaService } from './prisma.service';
import { ReadPool } from './read-pool';

/** Provides PrismaService (writes, most reads) and the ReadPool (hot and finance reads) to every module. */
@Global()
@Module({ providers: [PrismaService, ReadPool], exports: [PrismaService, ReadPool] })
export class DatabaseModule {}
