import { Injectable } from '@nestjs/common';
import { recordAuditedChange } from '../audit/audit-chain';
import { creatorId, ownerRestriction } from '../audit/ownership';
import { decodeCursor, type IsoInstants, isoTimeSql } from '../common/pagination';
import { PrismaService } from '../database/prisma.service';
import { ReadPool } from '../database/read-pool';
import { binder, namedStatement, sqlStatement } from '../database/sql';
import type { Customer, Prisma } from '../generated/prisma/client';

/**
 * A customer as its readers get it: the Customer model, whose instants are Dates where the row is
 * read by id or written (Prisma), and `isoTime` text in the customers page's rows
 * (CUSTOMER_PAGE_COLUMNS: 21 rows × 2 instants parsed into Dates and written out again were work
 * the page's JSON did not need). `toCustomerDto` maps either.
 */
export type CustomerRow = IsoInstants<Customer, 'createdAt' | 'updatedAt'>;

/** Every column of `customers` but its instants, named as the Customer type's fields, for a table aliased `c`. */
const CUSTOMER_FIELDS = `c.id, c.provider_id AS "providerId", c.email, c.first_name AS "firstName",
  c.last_name AS "lastName", c.phone, c.country_code AS "countryCode", c.blacklisted, c.created_by AS "createdBy"`;

/** Every column of `customers`, named as the Customer type's fields (the read by id). */
const CUSTOMER_COLUMNS = `${CUSTOMER_FIELDS}, c.created_at AS "createdAt", c.updated_at AS "updatedAt"`;

/** CUSTOMER_COLUMNS with the instants as `isoTime` text (the page). */
const CUSTOMER_PAGE_COLUMNS = `${CUSTOMER_FIELDS}, ${isoTimeSql('c.created_at', 'createdAt')}, ${isoTimeSql('c.updated_at', 'updatedAt')}`;

const CUSTOMER_BY_ID = namedStatement(
  'customer_by_id',
  `SELECT ${CUSTOMER_COLUMNS} FROM customers c WHERE c.id = $1::uuid`,
);

/**
 * Database access for customers: writes and the email lookups through Prisma, the hot reads (by
 * id, the list) as typed SQL on the read pool (src/database/read-pool.ts).
 */
@Injectable()
export class CustomersRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly reads: ReadPool,
  ) {}

  /** The customer `id`, or null. */
  async findById(id: string): Promise<Customer | null> {
    return (await this.reads.one<Customer>(CUSTOMER_BY_ID(id))) ?? null;
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

  /** The customer bound to the person `issuer` + `subject`, or null. */
  async findByUser(issuer: string, subject: string): Promise<Customer | null> {
    const binding = await this.prisma.userCustomer.findUnique({
      where: { issuer_subject: { issuer, subject } },
      include: { customer: true },
    });
    return binding?.customer ?? null;
  }

  /**
   * Creates the customer bound to the person `issuer` + `subject`, with its audit event, in one
   * transaction: the binding's keys (one customer per person, one person per customer) refuse a second.
   * @throws Prisma P2002 when the person already has a customer (or the email is taken): nothing is written.
   */
  createForUser(data: Prisma.CustomerCreateInput, issuer: string, subject: string): Promise<Customer> {
    return this.prisma.$transaction(async (tx) => {
      const row = await tx.customer.create({ data: { ...data, createdBy: null } });
      await tx.userCustomer.create({ data: { issuer, subject, customerId: row.id } });
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

  /**
   * `limit + 1` rows after the cursor (only the client's own under OWNERSHIP=client), newest first
   * (created_at DESC, id DESC: the (created_at, id) index read backwards), so the caller can tell
   * if a next page exists. Instants come as `isoTime` text (CustomerRow).
   * @throws ValidationError (400) on a malformed cursor.
   */
  async list(filter: { email?: string }, cursor: string | undefined, limit: number): Promise<CustomerRow[]> {
    const values: unknown[] = [];
    const bind = binder(values);
    const where: string[] = [];
    if (filter.email) where.push(`c.email = ${bind(filter.email)}`);
    const owner = ownerRestriction();
    if (owner !== undefined) where.push(`c.created_by = ${bind(owner, '::uuid')}`);
    if (cursor) {
      const after = decodeCursor(cursor);
      where.push(`(c.created_at, c.id) < (${bind(after.createdAt, '::timestamptz')}, ${bind(after.id, '::uuid')})`);
    }
    const text = `SELECT ${CUSTOMER_PAGE_COLUMNS} FROM customers c ${where.length ? `WHERE ${where.join(' AND ')} ` : ''}ORDER BY c.created_at DESC, c.id DESC LIMIT ${bind(limit + 1)}`;
    return this.reads.rows<CustomerRow>(sqlStatement('customers_page', text, values));
  }
}
