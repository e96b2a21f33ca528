import { Injectable } from '@nestjs/common';
import { recordAuditedChange } from '../audit/audit-chain';
import { creatorId, ownerFilter } from '../audit/ownership';
import { afterCursor } from '../common/pagination';
import { PrismaService } from '../database/prisma.service';
import { ReadPool } from '../database/read-pool';
import { namedStatement } from '../database/sql';
import type { Beneficiary, Prisma } from '../generated/prisma/client';

/** Every column of `beneficiaries`, named as the Beneficiary type's fields (the read pool's reads). */
const BENEFICIARY_BY_ID = namedStatement(
  'beneficiary_by_id',
  `SELECT b.id, b.provider_id AS "providerId", b.customer_id AS "customerId", b.country, b.currency, b.type,
     b.destination, b.status, b.reference, b.created_by AS "createdBy", b.created_at AS "createdAt",
     b.updated_at AS "updatedAt"
   FROM beneficiaries b WHERE b.id = $1::uuid`,
);

/** Database access for beneficiaries: through Prisma, but the read by id (hot) as typed SQL on the read pool. */
@Injectable()
export class BeneficiariesRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly reads: ReadPool,
  ) {}

  /** Creates the beneficiary (created_by = the request's client) with its audit event, in one transaction. */
  create(data: Prisma.BeneficiaryUncheckedCreateInput): Promise<Beneficiary> {
    return this.prisma.$transaction(async (tx) => {
      const row = await tx.beneficiary.create({ data: { ...data, createdBy: creatorId() } });
      await recordAuditedChange(tx, row.id);
      return row;
    });
  }

  /** The beneficiary `id` (its destination as stored JSON), or null. */
  async findById(id: string): Promise<Beneficiary | null> {
    return (await this.reads.one<Beneficiary>(BENEFICIARY_BY_ID(id))) ?? null;
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
