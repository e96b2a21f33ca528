import { Injectable } from '@nestjs/common';
import { afterCursor } from '../common/pagination';
import { PrismaService } from '../database/prisma.service';
import type { Customer, Prisma } from '../generated/prisma/client';

/** Database access for customers. */
@Injectable()
export class CustomersRepository {
  constructor(private readonly prisma: PrismaService) {}

  findById(id: string): Promise<Customer | null> {
    return this.prisma.customer.findUnique({ where: { id } });
  }

  findByEmail(email: string): Promise<Customer | null> {
    return this.prisma.customer.findUnique({ where: { email } });
  }

  create(data: Prisma.CustomerCreateInput): Promise<Customer> {
    return this.prisma.customer.create({ data });
  }

  update(id: string, data: Prisma.CustomerUpdateInput): Promise<Customer> {
    return this.prisma.customer.update({ where: { id }, data });
  }

  /** `limit + 1` rows after the cursor, newest first, so the caller can tell if a next page exists. */
  list(filter: { email?: string }, cursor: string | undefined, limit: number): Promise<Customer[]> {
    return this.prisma.customer.findMany({
      where: { ...(filter.email ? { email: filter.email } : {}), ...afterCursor(cursor) },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: limit + 1,
    });
  }
}
