import { Injectable } from '@nestjs/common';
import { recordAuditedChange } from '../audit/audit-chain';
import { creatorId, ownerFilter } from '../audit/ownership';
import { afterCursor } from '../common/pagination';
import { PrismaService } from '../database/prisma.service';
import type { Prisma, VirtualAccount } from '../generated/prisma/client';

/** Database access for virtual accounts. */
@Injectable()
export class VirtualAccountsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Stores a virtual account (created_by = the request's client) with the request's audit event
   * (`virtual_account.create`), in one transaction.
   */
  create(data: Prisma.VirtualAccountUncheckedCreateInput): Promise<VirtualAccount> {
    return this.prisma.$transaction(async (tx) => {
      const row = await tx.virtualAccount.create({ data: { ...data, createdBy: creatorId() } });
      await recordAuditedChange(tx, row.id);
      return row;
    });
  }

  findById(id: string): Promise<VirtualAccount | null> {
    return this.prisma.virtualAccount.findUnique({ where: { id } });
  }

  /**
   * `limit + 1` rows after the cursor (only the client's own under OWNERSHIP=client), newest first,
   * so the caller can tell if a next page exists.
   */
  list(filter: { customerId?: string }, cursor: string | undefined, limit: number): Promise<VirtualAccount[]> {
    return this.prisma.virtualAccount.findMany({
      where: {
        ...(filter.customerId ? { customerId: filter.customerId } : {}),
        ...ownerFilter(),
        ...afterCursor(cursor),
      },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: limit + 1,
    });
  }
}
