import { Injectable } from '@nestjs/common';
import { recordAuditedChange } from '../audit/audit-chain';
import { creatorId, ownerFilter } from '../audit/ownership';
import { afterCursor } from '../common/pagination';
import { PRISMA_ROW_TYPES, PrismaService } from '../database/prisma.service';
import { type Customer, Prisma } from '../generated/prisma/client';

/** Every column of `customers`, named as the Customer type's fields, for a table aliased `c`. */
const CUSTOMER_COLUMNS = Prisma.raw(`c.id, c.provider_id AS "providerId", c.email, c.first_name AS "firstName",
  c.last_name AS "lastName", c.phone, c.country_code AS "countryCode", c.blacklisted, c.created_by AS "createdBy",
  c.created_at AS "createdAt", c.updated_at AS "updatedAt"`);

/** Database access for customers. */
@Injectable()
export class CustomersRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * The customer `id`, or null: one statement through node-postgres (PrismaService.sql; every payout
   * create reads it), typed as Prisma reads it.
   */
  async findById(id: string): Promise<Customer | null> {
    const [row] = await this.prisma.sql<Customer>(
      Prisma.sql`SELECT ${CUSTOMER_COLUMNS} FROM customers c WHERE c.id = ${id}::uuid`,
      PRISMA_ROW_TYPES,
    );
    return row ?? null;
  }

  findByEmail(email: string): Promise<Customer | null> {
    return this.prisma.customer.findUnique({ where: { email } });
  }

  /** Creates the customer (created_by = the request's client) with its audit event, in one transaction. */
  create(data: Prisma.CustomerCreateInput): Promise<Customer> {
    return this.prisma.$transaction(async (tx) => {
      const row = await tx.customer.create({ data: { ...data, createdBy: creatorId() } });
      await recordAuditedChange(tx, row.id);
      return row;
    });
  }

  /** Updates the customer with the request's audit event (if any), in one transaction. */
  update(id: string, data: Prisma.CustomerUpdateInput): Promise<Customer> {
    return this.prisma.$transaction(async (tx) => {
      const row = await tx.customer.update({ where: { id }, data });
      await recordAuditedChange(tx, id);
      return row;
    });
  }

  /** `limit + 1` rows after the cursor (only the client's own under OWNERSHIP=client), newest first, so the caller can tell if a next page exists. */
  list(filter: { email?: string }, cursor: string | undefined, limit: number): Promise<Customer[]> {
    return this.prisma.customer.findMany({
      where: { ...(filter.email ? { email: filter.email } : {}), ...ownerFilter(), ...afterCursor(cursor) },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: limit + 1,
    });
  }
}
