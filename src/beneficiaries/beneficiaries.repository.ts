import { Injectable } from '@nestjs/common';
import { recordAuditedChange } from '../audit/audit-chain';
import { creatorId, ownerFilter } from '../audit/ownership';
import { afterCursor } from '../common/pagination';
import { PrismaService } from '../database/prisma.service';
import type { Beneficiary, Prisma } from '../generated/prisma/client';

/** Database access for beneficiaries. */
@Injectable()
export class BeneficiariesRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Creates the beneficiary (created_by = the request's client) with its audit event, in one transaction. */
  create(data: Prisma.BeneficiaryUncheckedCreateInput): Promise<Beneficiary> {
    return this.prisma.$transaction(async (tx) => {
      const row = await tx.beneficiary.create({ data: { ...data, createdBy: creatorId() } });
      await recordAuditedChange(tx, row.id);
      return row;
    });
  }

  findById(id: string): Promise<Beneficiary | null> {
    return this.prisma.beneficiary.findUnique({ where: { id } });
  }

  /** The beneficiary with provider id `providerId`, else the one with our `reference`; null without either. */
  findByProviderIdOrReference(providerId: string | null, reference: string | null): Promise<Beneficiary | null> {
    const match = [...(providerId ? [{ providerId }] : []), ...(reference ? [{ reference }] : [])];
    if (match.length === 0) return Promise.resolve(null);
    return this.prisma.beneficiary.findFirst({ where: { OR: match } });
  }

  /** Sets `status` on beneficiary `id` only while its status is one of `replaceable`; true when it moved. */
  async moveStatus(id: string, replaceable: string[], status: string): Promise<boolean> {
    const moved = await this.prisma.beneficiary.updateMany({
      where: { id, status: { in: replaceable } },
      data: { status },
    });
    return moved.count === 1;
  }

  /** `limit + 1` rows after the cursor (only the client's own under OWNERSHIP=client), newest first, so the caller can tell if a next page exists. */
  list(filter: { customerId?: string }, cursor: string | undefined, limit: number): Promise<Beneficiary[]> {
    return this.prisma.beneficiary.findMany({
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
