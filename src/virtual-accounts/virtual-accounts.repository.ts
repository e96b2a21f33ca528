import { Injectable } from '@nestjs/common';
import { afterCursor } from '../common/pagination';
import { PrismaService } from '../database/prisma.service';
import type { Prisma, VirtualAccount } from '../generated/prisma/client';

/** Database access for virtual accounts. */
@Injectable()
export class VirtualAccountsRepository {
  constructor(private readonly prisma: PrismaService) {}

  create(data: Prisma.VirtualAccountUncheckedCreateInput): Promise<VirtualAccount> {
    return this.prisma.virtualAccount.create({ data });
  }

  findById(id: string): Promise<VirtualAccount | null> {
    return this.prisma.virtualAccount.findUnique({ where: { id } });
  }

  /** `limit + 1` rows after the cursor, newest first, so the caller can tell if a next page exists. */
  list(filter: { customerId?: string }, cursor: string | undefined, limit: number): Promise<VirtualAccount[]> {
    return this.prisma.virtualAccount.findMany({
      where: { ...(filter.customerId ? { customerId: filter.customerId } : {}), ...afterCursor(cursor) },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: limit + 1,
    });
  }
}
