import { Injectable } from '@nestjs/common';
import { ownedOrNotFound } from '../audit/ownership';
import { ConflictError, FieldError, providerDidNotAct, ValidationError } from '../common/errors';
import { CustomersService } from '../customers/customers.service';
import { isUniqueViolation } from '../database/unique-violation';
import type { Prisma } from '../generated/prisma/client';
import { ProviderCardUser, ProviderClient } from '../provider';
import { CardHolderAddressDto, CardHolderDto, CreateCardHolderDto } from './card-holder.dto';
import { cardHolderProblems } from './card-rules';
import { type CardHolderPatch, type CardHolderRecord, CardsRepository, type NewCardHolder } from './cards.repository';

/**
 * The answer for a card holder. Personal data is never returned in full (issue 14): the id number
 * and phone by their last four characters, the address by its country only; BVN and date of birth
 * not at all.
 */
export function toCardHolderDto(row: CardHolderRecord): CardHolderDto {
  const address = row.address as Partial<Record<keyof CardHolderAddressDto, string>>;
  return {
    id: row.id,
    customerId: row.customerId,
    providerUserId: row.providerUserId,
    status: row.status,
    idType: row.idType,
    idNumberLast4: row.idNumber.slice(-4),
    firstName: row.firstName,
    lastName: row.lastName,
    phoneLast4: row.phone.slice(-4),
    country: address.country ?? null,
    failureReason: row.failureReason,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/**
 * Card holders: customers onboarded as card users at the provider (docs/provider.md#card-holders:
 * registration must precede card issuing for that customer). Written ahead like a payout:
 * the holder is stored `created` with the KYC fields later calls need before the provider is called,
 * then moved by the answer (accepted → `pending`; refused → `failed`; timeout or 5xx → `unknown`);
 * there is never a provider call without a local row. The photo and ID image go to the provider
 * only. A holder is `pending` until `virtualcard.user.kyc.success|failed` decides
 * (CardEventsHandler, which also settles `created` and `unknown` holders). One holder per
 * customer, registered again only after KYC failed or after a registration without a clear answer
 * (`unknown`: registration moves no money, so a retry is safe) — card-state.ts CARD_HOLDER_MOVES.
 */
@Injectable()
export class CardHoldersService {
  constructor(
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
   * that is not `failed` or `unknown` (a `created` one: a registration in flight), or the provider
   * answered with a card user id another holder has (this holder then `failed`);
   * ProviderError (422 → holder `failed`; 502/504 → holder `unknown`, retry allowed), the row kept.
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

    const { address } = input;
    const fields: NewCardHolder = {
      idType: input.idType,
      idNumber: input.idNumber,
      firstName: firstName as string,
      lastName: lastName as string,
      phone: phone as string,
      bvn: input.bvn ?? null,
      dateOfBirth: input.dateOfBirth ?? null,
      address: { ...address },
      failureReason: null,
    };
    const holder = await this.writeAhead(customer.id, fields);

    let upstream: ProviderCardUser;
    try {
      upstream = await this.provider.registerCardUser({
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
    } catch (error) {
      const refused = providerDidNotAct(error);
      await this.cards.moveHolder(holder, refused ? 'refuse' : 'lose', {
        failureReason: error instanceof Error ? error.message : String(error),
      });
      throw error;
    }

    const refused = upstream.kycRefused;
    const answer: CardHolderPatch = {
      providerPayload: upstream.raw as Prisma.InputJsonValue,
      ...(refused ? { failureReason: `The provider refused KYC (${upstream.status}).` } : {}),
    };
    try {
      const outcome = await this.cards.moveHolder(holder, refused ? 'refuse' : 'accept', {
        ...answer,
        providerUserId: upstream.id,
      });
      if (outcome === 'refused') {
        // Its KYC callback overtook this answer (matched by email): keep its status, add the id.
        if (upstream.id) await this.cards.attachProviderUserId(holder.id, upstream.id);
      }
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      const reason = 'The provider answered with a card user id another holder already has.';
      await this.cards.moveHolder(holder, 'refuse', { ...answer, failureReason: reason });
      throw new ConflictError(reason, undefined, { cardHolderId: holder.id });
    }
    return toCardHolderDto(await this.cards.requireHolder(holder.id));
  }

  /**
   * Stores the holder `created` before the provider is called: a new row, or an existing holder
   * registered again (failed, unknown, or a `created` one whose process died: CardsRepository
   * `reregisterHolder`). One per customer: a concurrent registration of the same customer finds the
   * row and answers 409.
   * @throws ConflictError (409) the customer has a holder that may not register again.
   */
  private async writeAhead(customerId: string, fields: NewCardHolder): Promise<CardHolderRecord> {
    const existing = await this.cards.holderOf(customerId);
    if (existing) {
      const again = await this.cards.reregisterHolder(existing, fields);
      if (!again) throw this.alreadyRegistered((await this.cards.holderOf(customerId)) ?? existing);
      return again;
    }
    try {
      return await this.cards.createHolder(customerId, fields);
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      const other = await this.cards.holderOf(customerId);
      throw other ? this.alreadyRegistered(other) : error;
    }
  }

  /** @throws NotFoundError (404), also for another client's holder under OWNERSHIP=client. */
  async get(id: string): Promise<CardHolderDto> {
    return toCardHolderDto(ownedOrNotFound(await this.cards.requireHolder(id), 'Card holder', id));
  }

  private alreadyRegistered(holder: CardHolderRecord): ConflictError {
    return new ConflictError(`Customer ${holder.customerId} already has a card holder (${holder.status}).`, undefined, {
      cardHolderId: holder.id,
    });
  }
}
