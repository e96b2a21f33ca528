import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { ownedByCurrentClient } from '../audit/ownership';
import { providerCallbackUrl } from '../common/callback-url';
import { BusinessRuleError, ErrorCode, NotFoundError, ProviderError } from '../common/errors';
import { Page, toPage } from '../common/pagination';
import { newReference } from '../common/reference';
import type { Env } from '../config/env';
import { CustomersService } from '../customers/customers.service';
import type { Beneficiary } from '../generated/prisma/client';
import { ProviderClient, ProviderCountryRequirement } from '../provider';
import { BeneficiariesRepository } from './beneficiaries.repository';
import { BeneficiaryDto, CreateBeneficiaryDto, ListBeneficiariesQueryDto, PayoutCountryDto } from './beneficiary.dto';
import { validateDestination } from './destination-validator';

/** How long a country's destination requirements are reused before asking the provider again. */
export const COUNTRY_CACHE_TTL_MS = 10 * 60 * 1000;

export function toBeneficiaryDto(row: Beneficiary): BeneficiaryDto {
  return {
    id: row.id,
    providerId: row.providerId,
    customerId: row.customerId,
    country: row.country,
    currency: row.currency,
    type: row.type,
    destination: row.destination as Record<string, string>,
    status: row.status,
    reference: row.reference,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/**
 * Payout destinations. Source: docs/provider.md#beneficiaries.
 */
@Injectable()
export class BeneficiariesService {
  private readonly countries = new Map<string, { value: ProviderCountryRequirement; expiresAt: number }>();

  constructor(
    private readonly repository: BeneficiariesRepository,
    private readonly provider: ProviderClient,
    private readonly customers: CustomersService,
    private readonly config: ConfigService<Env, true>,
  ) {}

  /**
   * A country's destination types and fields, cached for COUNTRY_CACHE_TTL_MS per instance.
   * @throws NotFoundError (404) when the provider does not serve the country; ProviderError otherwise.
   */
  async getCountry(code: string): Promise<PayoutCountryDto> {
    const requirement = await this.requirement(code.toUpperCase());
    return {
      code: requirement.code,
      name: requirement.name,
      flag: requirement.flag,
      dialCode: requirement.dialCode,
      destinations: requirement.destinations,
    };
  }

  /**
   * Validates the destination against the country's descriptors (422 listing the failing fields,
   * provider not called), registers it at the provider, then stores it. The countries and their
   * destination fields are the provider's data (getSupportedCountry), not a table of the gateway, so
   * the API description cannot enumerate them: a refusal by them is a business rule (422), not bad input.
   * @throws BusinessRuleError (422 `business_rule_failed`: a country the provider does not serve, a
   * destination off its fields), NotFoundError (404: customer), ProviderError (422/502/504; nothing stored).
   */
  async create(input: CreateBeneficiaryDto): Promise<BeneficiaryDto> {
    const customer = await this.customers.requireRow(input.customerId);
    let requirement: ProviderCountryRequirement;
    try {
      requirement = await this.requirement(input.country);
    } catch (error) {
      if (error instanceof NotFoundError)
        throw new BusinessRuleError([{ field: 'country', message: `payouts to ${input.country} are not supported` }]);
      throw error;
    }
    const errors = validateDestination(input.destination, requirement.destinations);
    if (errors.length) throw new BusinessRuleError(errors);
    const destination = input.destination as Record<string, string> & { type: string };
    const reference = newReference('beneficiary');
    const upstream = await this.provider.createBeneficiary({
      currency: input.currency,
      country: input.country,
      reference,
      customerEmail: customer.email,
      callbackUrl: providerCallbackUrl(this.config),
      destination,
    });
    const row = await this.repository.create({
      providerId: upstream.id,
      customerId: customer.id,
      country: input.country,
      currency: input.currency,
      type: destination.type,
      destination,
      status: upstream.status,
      reference,
    });
    return toBeneficiaryDto(row);
  }

  /** @throws NotFoundError (404). */
  async get(id: string): Promise<BeneficiaryDto> {
    return toBeneficiaryDto(await this.requireRow(id));
  }

  /** The stored beneficiary row. @throws NotFoundError (404), also for another client's under OWNERSHIP=client. */
  async requireRow(id: string): Promise<Beneficiary> {
    const row = await this.repository.findById(id);
    if (!row || !ownedByCurrentClient(row)) throw new NotFoundError('Beneficiary', id);
    return row;
  }

  /** Newest first, keyset-paginated, optionally one customer's. */
  async list(query: ListBeneficiariesQueryDto): Promise<Page<BeneficiaryDto>> {
    const limit = query.limit ?? 20;
    const rows = await this.repository.list({ customerId: query.customerId }, query.cursor, limit);
    return toPage(rows, limit, toBeneficiaryDto);
  }

  private async requirement(code: string): Promise<ProviderCountryRequirement> {
    const cached = this.countries.get(code);
    if (cached && cached.expiresAt > Date.now()) return cached.value;
    try {
      const value = await this.provider.getSupportedCountry(code);
      this.countries.set(code, { value, expiresAt: Date.now() + COUNTRY_CACHE_TTL_MS });
      return value;
    } catch (error) {
      if (error instanceof ProviderError && error.code === ErrorCode.ProviderRejected && error.providerStatus === 404) {
        throw new NotFoundError('Payout country', code);
      }
      throw error;
    }
  }
}
