import { Injectable } from '@nestjs/common';
import { PrismaService } from '../database/prisma.service';

/** The readiness probe's one query: whether the database answers. */
@Injectable()
export class HealthRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Runs `SELECT 1`; resolves when the database answers, rejects when it does not. */
  async ping(): Promise<void> {
    await this.prisma.$queryRaw`SELECT 1`;
  }
}
