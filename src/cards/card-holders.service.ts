import { Injectable } from '@nestjs/common';
import { ConflictError, FieldError, NotFoundError, ValidationError } from '../common/errors';
import { CustomersService } from '../customers/customers.service';
import { isUniqueViolation, PrismaService } from '../database/prisma.service';
import type { CardHolder, Prisma } from '../generated/prisma/client';
import { ProviderClient } from '../provider';
import { CardHolderAddressDto, CardHolderDto, CreateCardHolderDto } from './card-holder.dto';
import { cardHolderProblems } from './card-rules';
import { CardsRepository } from './cards.repository';

export function toCardHolderDto(row: CardHolder): CardHolderDto {
  return {
    id: row.id,
    customerId: row.customerId,
    providerUserId: row.providerUserId,
    status: row.status,
    idType: row.idType,
    idNumberLast4: row.idNumber.slice(-4),
    firstName: row.firstName,
    lastName: row.lastName,
    phone: row.phone,
    address: row.address as unknown as CardHolderAddressDto,
    failureReason: row.failureReason,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** Provider statuses of a card user that mean KYC was refused at once. */
const REFUSED_USER_STATUSES = ['failed', 'rejected', 'declined'];

/**
 * Card holders: customers onboarded as card users at the provider (provider-api.md
 * "registercarduser": "must precede card issuing for that customer"). Registered at the provider
 * first, then stored with the KYC fields later calls need; the photo and ID image go to the
 * provider only. A holder is `pending` until `virtualcard.user.kyc.success|failed` decides
 * (CardEventsHandler); one holder per customer, registered again only after KYC failed.
 */
@Injectable()
export class CardHoldersService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly provider: ProviderClient,
    private readonly customers: CustomersService,
    private readonly cards: CardsRepository,
  ) {}

  /**
   * Registers a customer as a card holder (status `pending`, or `failed` if the provider refuses
   * KYC in its answer). Names and phone default to the customer's.
   * @throws ValidationError (400): `bvn` missing for NG, `dateOfBirth` missing for GH, malformed
   * `bvn`/`dateOfBirth`, or no name/phone anywhere — the provider is not called.
   * NotFoundError (404) unknown customer; ConflictError (409) the customer already has a holder
   * whose KYC did not fail; ProviderError (422/502/504): nothing stored.
   */
  async register(input: CreateCardHolderDto): Promise<CardHolderDto> {
    const problems = cardHolderProblems({
      country: input.address.country,
      bvn: input.bvn,
      dateOfBirth: input.dateOfBirth,
    });
    if (problems.length) throw new ValidationError(problems);
    const customer = await this.customers.requireRow(input.customerId);
    const firstName = input.firstName ?? customer.firstName;
    const lastName = input.lastName ?? customer.lastName;
    const phone = input.phone ?? customer.phone;
    const missing: FieldError[] = [];
    if (!firstName) missing.push({ field: 'firstName', message: 'firstName is required: the customer has none' });
    if (!lastName) missing.push({ field: 'lastName', message: 'lastName is required: the customer has none' });
    if (!phone) missing.push({ field: 'phone', message: 'phone is required: the customer has none' });
    if (missing.length) throw new ValidationError(missing);

    const existing = await this.cards.holderOf(customer.id);
    if (existing && existing.status !== 'failed') throw this.alreadyRegistered(existing);

    const { address } = input;
    const upstream = await this.provider.registerCardUser({
      customerEmail: customer.email,
      idNumber: input.idNumber,
      idType: input.idType,
      firstName: firstName as string,
      lastName: lastName as string,
      phoneNumber: phone as string,
      city: address.city,
      state: address.state,
      zipCode: address.zipCode,
      line1: address.line1,
      houseName: address.houseName,
      country: address.country,
      bvn: input.bvn,
      dateOfBirth: input.dateOfBirth,
      userPhoto: input.userPhoto,
      idImage: input.idImage,
    });
    const refused = REFUSED_USER_STATUSES.includes(upstream.status ?? '');
    const data = {
      providerUserId: upstream.id,
      idType: input.idType,
      idNumber: input.idNumber,
      firstName: firstName as string,
      lastName: lastName as string,
      phone: phone as string,
      bvn: input.bvn ?? null,
      dateOfBirth: input.dateOfBirth ?? null,
      address: { ...address } as unknown as Prisma.InputJsonValue,
      failureReason: refused ? `The provider refused KYC (${upstream.status}).` : null,
      providerPayload: upstream.raw as Prisma.InputJsonValue,
    };
    try {
      if (existing) {
        // Registering again after failed KYC: the holder's `register` move (failed → pending).
        const outcome = await this.cards.moveHolder(existing, 'register', data);
        if (outcome !== 'applied') throw this.alreadyRegistered(existing);
        const row = await this.prisma.cardHolder.findUniqueOrThrow({ where: { id: existing.id } });
        if (refused) await this.cards.moveHolder(row, 'kycFailed');
        return toCardHolderDto(await this.prisma.cardHolder.findUniqueOrThrow({ where: { id: existing.id } }));
      }
      const row = await this.prisma.cardHolder.create({
        data: { ...data, customerId: customer.id, status: refused ? 'failed' : 'pending' },
      });
      return toCardHolderDto(row);
    } catch (error) {
      if (isUniqueViolation(error)) {
        const other = await this.cards.holderOf(customer.id);
        if (other) throw this.alreadyRegistered(other);
        throw new ConflictError('The provider answered with a card user id another holder already has.');
      }
      throw error;
    }
  }

  /** @throws NotFoundError (404). */
  async get(id: string): Promise<CardHolderDto> {
    const row = await this.prisma.cardHolder.findUnique({ where: { id } });
    if (!row) throw new NotFoundError('Card holder', id);
    return toCardHolderDto(row);
  }

  private alreadyRegistered(holder: CardHolder): ConflictError {
    return new ConflictError(`Customer ${holder.customerId} already has a card holder (${holder.status}).`, undefined, {
      cardHolderId: holder.id,
    });
  }
}
