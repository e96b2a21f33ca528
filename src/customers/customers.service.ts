import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { ownedByCurrentClient } from '../audit/ownership';
import type { AppUser } from '../auth/access-token.verifier';
import { ConflictError, DomainError, ErrorCode, NotFoundError, ValidationError } from '../common/errors';
import { isoTime, Page, toPage } from '../common/pagination';
import { isUniqueViolation } from '../database/unique-violation';
import type { Customer } from '../generated/prisma/client';
import { ProviderClient, type ProviderCustomer } from '../provider';
import {
  CreateCustomerDto,
  CreateMyCustomerDto,
  CustomerDto,
  ListCustomersQueryDto,
  UpdateCustomerDto,
} from './customer.dto';
import { type CustomerRow, CustomersRepository } from './customers.repository';

/** How many customers' provider ids and owners an instance keeps (CustomersService `refs`): about 1 MB. */
export const CUSTOMER_REFS_CACHED = 10_000;

/** A stored customer's fields that never change: its provider id and its creator (the ownership rule's owner). */
interface CustomerRefs {
  providerId: string;
  createdBy: string | null;
}

/** Stores dialling codes in one form: with the leading plus. */
export function normaliseDialCode(code: string): string {
  return code.startsWith('+') ? code : `+${code}`;
}

/** The gateway's answer for a customer row (instants as Dates or `isoTime` text: CustomerRow). */
export function toCustomerDto(row: CustomerRow): CustomerDto {
  return {
    id: row.id,
    providerId: row.providerId,
    email: row.email,
    firstName: row.firstName,
    lastName: row.lastName,
    phone: row.phone,
    countryCode: row.countryCode,
    blacklisted: row.blacklisted,
    createdAt: isoTime(row.createdAt),
    updatedAt: isoTime(row.updatedAt),
  };
}

/**
 * Customers: created and updated at the provider first, then stored locally; read locally.
 * Source of the upstream rules: docs/provider.md#customers.
 */
@Injectable()
export class CustomersService {
  /**
   * What never changes about a customer once stored (its provider id and the API client that
   * created it; customers are never deleted), for the last CUSTOMER_REFS_CACHED customers refreshed
   * by this instance: a later refresh of one of them calls the provider at once, while its row is read.
   */
  private readonly refs = new LRUCache<string, CustomerRefs>({ max: CUSTOMER_REFS_CACHED });

  constructor(
    private readonly customers: CustomersRepository,
    private readonly provider: ProviderClient,
  ) {}

  /**
   * Creates the customer at the provider, then stores it.
   * @throws ConflictError (409) if the email is already known locally; the provider is not called.
   * @throws ProviderError (422/502/504) when the provider refuses or fails; nothing is stored.
   */
  async create(input: CreateCustomerDto): Promise<CustomerDto> {
    if (await this.customers.findByEmail(input.email)) {
      throw new ConflictError(`A customer with email ${input.email} already exists.`);
    }
    const countryCode = normaliseDialCode(input.countryCode);
    const upstream = await this.provider.createCustomer({ ...input, countryCode });
    const row = await this.customers.create({
      providerId: upstream.id,
      email: input.email,
      firstName: input.firstName,
      lastName: input.lastName,
      phone: input.phone,
      countryCode,
      blacklisted: upstream.blacklisted,
    });
    return toCustomerDto(row);
  }

  /**
   * The customer bound to the signed-in person (GET /v1/me).
   * @throws NotFoundError (404) when the person has none yet.
   */
  async getForUser(user: AppUser): Promise<CustomerDto> {
    const row = await this.customers.findByUser(user.issuer, user.subject);
    if (!row) throw new NotFoundError('Customer of the signed-in user', user.subject);
    return toCustomerDto(row);
  }

  /**
   * Creates the customer of the signed-in person (POST /v1/me/customer): the email is the token's
   * verified `email` claim; the person is bound to it (at most one customer per person).
   * @throws DomainError 403 `email_not_verified` when the token's `email_verified` is not true or it has no email.
   * @throws ConflictError (409) when the person already has a customer, or the email is another
   * customer's (the provider is not called); also when a concurrent request bound one first (the
   * customer made at the provider is then left unbound there, as a lost race of POST /v1/customers is).
   * @throws ProviderError (422/502/504) when the provider refuses or fails; nothing is stored.
   */
  async createForUser(user: AppUser, input: CreateMyCustomerDto): Promise<CustomerDto> {
    if (!user.emailVerified || !user.email) {
      throw new DomainError(
        ErrorCode.EmailNotVerified,
        'The access token carries no verified email (email_verified is not true); verify it at the sign-in provider.',
      );
    }
    const email = user.email.trim().toLowerCase();
    const existing = await this.customers.findByUser(user.issuer, user.subject);
    if (existing) {
      throw new ConflictError('The signed-in user already has a customer.', ErrorCode.Conflict, {
        customerId: existing.id,
      });
    }
    if (await this.customers.findByEmail(email)) {
      throw new ConflictError(`A customer with email ${email} already exists.`);
    }
    const countryCode = normaliseDialCode(input.countryCode);
    const upstream = await this.provider.createCustomer({ ...input, email, countryCode });
    try {
      const row = await this.customers.createForUser(
        {
          providerId: upstream.id,
          email,
          firstName: input.firstName,
          lastName: input.lastName,
          phone: input.phone,
          countryCode,
          blacklisted: upstream.blacklisted,
        },
        user.issuer,
        user.subject,
      );
      return toCustomerDto(row);
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new ConflictError('The signed-in user already has a customer, or the email is taken.');
      }
      throw error;
    }
  }

  /**
   * Updates the customer at the provider (PUT, which needs firstName and email: the stored values
   * fill what the request leaves out), then locally. A request whose every field equals the stored
   * value changes nothing: it is answered with the stored customer, without calling the provider.
   * @throws NotFoundError (404), ValidationError (400) for an empty body, ConflictError (409) for an
   * email another customer has, ProviderError (422/502/504) leaving the local row unchanged.
   */
  async update(id: string, input: UpdateCustomerDto): Promise<CustomerDto> {
    const current = await this.requireRow(id);
    if (Object.values(input).every((v) => v === undefined)) {
      throw new ValidationError([{ field: 'body', message: 'at least one field must be given' }]);
    }
    if (input.email && input.email !== current.email) {
      const other = await this.customers.findByEmail(input.email);
      if (other) throw new ConflictError(`A customer with email ${input.email} already exists.`);
    }
    const countryCode = input.countryCode === undefined ? undefined : normaliseDialCode(input.countryCode);
    // Nothing would change (every given field equals the stored one): answered from the row, the
    // provider is not called and updatedAt stays.
    const given = { ...input, countryCode };
    if (
      (Object.keys(given) as Array<keyof typeof given>).every((k) => given[k] === undefined || given[k] === current[k])
    )
      return toCustomerDto(current);
    const merged = {
      email: input.email ?? current.email,
      firstName: input.firstName ?? current.firstName ?? '',
      lastName: input.lastName ?? current.lastName ?? undefined,
      phone: input.phone ?? current.phone ?? undefined,
      countryCode: countryCode ?? current.countryCode ?? undefined,
    };
    const upstream = await this.provider.updateCustomer(current.providerId, merged);
    const row = await this.customers.update(id, { ...merged, blacklisted: upstream.blacklisted });
    return toCustomerDto(row);
  }

  /**
   * The stored customer. With `refresh`, the provider's record is fetched too (GET
   * /customers/{id}; for a customer this instance has refreshed before, while the row is read) and any
   * field that changed there (e.g. `blacklist`) is stored.
   * @throws NotFoundError (404); with refresh also ProviderError (422/502/504), leaving the row as it was.
   */
  async get(id: string, refresh = false): Promise<CustomerDto> {
    if (!refresh) return toCustomerDto(await this.requireRow(id));
    // A customer this instance has refreshed before (and the caller may see: the same ownership
    // rule as the row's) is asked of the provider while its row is read: the pass-through waits for
    // the longer of the two instead of both. Any other is read first, so that an unknown id or
    // another client's customer (404) never reaches the provider. Only refreshes fill `refs`: a
    // plain read (the hot one) does no cache work.
    const known = this.refs.get(id);
    let row: Customer;
    let upstream: ProviderCustomer;
    if (known && ownedByCurrentClient(known)) {
      [row, upstream] = await Promise.all([this.requireRow(id), this.provider.getCustomer(known.providerId)]);
    } else {
      row = await this.requireRow(id);
      this.refs.set(row.id, { providerId: row.providerId, createdBy: row.createdBy });
      upstream = await this.provider.getCustomer(row.providerId);
    }
    const fresh = {
      firstName: upstream.firstName,
      lastName: upstream.lastName,
      phone: upstream.phone,
      countryCode: upstream.countryCode ? normaliseDialCode(upstream.countryCode) : null,
      blacklisted: upstream.blacklisted,
    };
    const changed = (Object.keys(fresh) as Array<keyof typeof fresh>).some((k) => fresh[k] !== row[k]);
    return toCustomerDto(changed ? await this.customers.update(id, fresh) : row);
  }

  /** Newest first, keyset-paginated; optional exact email filter. */
  async list(query: ListCustomersQueryDto): Promise<Page<CustomerDto>> {
    const limit = query.limit ?? 20;
    const rows = await this.customers.list({ email: query.email }, query.cursor, limit);
    return toPage(rows, limit, toCustomerDto);
  }

  /** The stored customer row. @throws NotFoundError (404), also for another client's under OWNERSHIP=client. */
  async requireRow(id: string): Promise<Customer> {
    const row = await this.customers.findById(id);
    if (!row || !ownedByCurrentClient(row)) throw new NotFoundError('Customer', id);
    return row;
  }
}
