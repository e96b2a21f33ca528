import { Injectable } from '@nestjs/common';
import { ownedByCurrentClient } from '../audit/ownership';
import { FieldError, NotFoundError, ValidationError } from '../common/errors';
import { Page, toPage } from '../common/pagination';
import { newReference } from '../common/reference';
import { CustomersService } from '../customers/customers.service';
import type { VirtualAccount } from '../generated/prisma/client';
import { ProviderClient } from '../provider';
import { virtualAccountProblems } from './virtual-account-rules';
import { CreateVirtualAccountDto, ListVirtualAccountsQueryDto, VirtualAccountDto } from './virtual-account.dto';
import { VirtualAccountsRepository } from './virtual-accounts.repository';

export function toVirtualAccountDto(row: VirtualAccount): VirtualAccountDto {
  return {
    id: row.id,
    providerId: row.providerId,
    customerId: row.customerId,
    bank: row.bank,
    bankName: row.bankName,
    accountName: row.accountName,
    accountNumber: row.accountNumber,
    currency: row.currency,
    status: row.status,
    reference: row.reference,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/**
 * Virtual bank accounts issued to customers (docs/provider.md#virtual-accounts,
 * #limits: bank `safehaven` or `providus`,
 * `dateOfBirth` required for providus). Created at the provider first, then stored; read locally.
 * No money moves here, so there is no ledger row. BVN and date of birth go to the provider only.
 */
@Injectable()
export class VirtualAccountsService {
  constructor(
    private readonly repository: VirtualAccountsRepository,
    private readonly provider: ProviderClient,
    private readonly customers: CustomersService,
  ) {}

  /**
   * Issues a virtual account to a customer and stores it (`active`). First and last name default
   * to the customer's.
   * @throws ValidationError (400): `dateOfBirth` missing for providus or not a past yyyy-mm-dd
   * date; `firstName`/`lastName` given nowhere — the provider is not called.
   * NotFoundError (404) unknown customer; ProviderError (422/502/504): nothing stored.
   */
  async create(input: CreateVirtualAccountDto): Promise<VirtualAccountDto> {
    const problems = virtualAccountProblems(input);
    if (problems.length) throw new ValidationError(problems);
    const customer = await this.customers.requireRow(input.customerId);
    const firstName = input.firstName ?? customer.firstName;
    const lastName = input.lastName ?? customer.lastName;
    const missing: FieldError[] = [];
    if (!firstName) missing.push({ field: 'firstName', message: 'firstName is required: the customer has none' });
    if (!lastName) missing.push({ field: 'lastName', message: 'lastName is required: the customer has none' });
    if (missing.length) throw new ValidationError(missing);

    const reference = newReference('virtual-account');
    const upstream = await this.provider.createVirtualAccount({
      firstName: firstName as string,
      lastName: lastName as string,
      bvn: input.bvn,
      dateOfBirth: input.dateOfBirth,
      customerEmail: customer.email,
      reference,
      bank: input.bank,
      phoneNumber: input.phoneNumber,
    });
    const row = await this.repository.create({
      providerId: upstream.id,
      customerId: customer.id,
      bank: upstream.bank,
      bankName: upstream.bankName ?? upstream.bank,
      accountName: upstream.accountName,
      accountNumber: upstream.accountNumber,
      currency: upstream.currency,
      status: upstream.status,
      reference,
    });
    return toVirtualAccountDto(row);
  }

  /** @throws NotFoundError (404), also for another client's under OWNERSHIP=client. */
  async get(id: string): Promise<VirtualAccountDto> {
    const row = await this.repository.findById(id);
    if (!row || !ownedByCurrentClient(row)) throw new NotFoundError('Virtual account', id);
    return toVirtualAccountDto(row);
  }

  /**
   * Newest first, keyset-paginated (`{ data, nextCursor }`, `limit` ≤ 100), optionally one customer's;
   * under OWNERSHIP=client only the client's own.
   * @throws ValidationError (400) for a cursor that is not one of ours.
   */
  async list(query: ListVirtualAccountsQueryDto): Promise<Page<VirtualAccountDto>> {
    const limit = query.limit ?? 20;
    const rows = await this.repository.list({ customerId: query.customerId }, query.cursor, limit);
    return toPage(rows, limit, toVirtualAccountDto);
  }
}
