import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { BeneficiariesService } from '../beneficiaries/beneficiaries.service';
import { providerCallbackUrl } from '../common/callback-url';
import { InvalidStateTransitionError, NotFoundError, providerDidNotAct, ValidationError } from '../common/errors';
import { currencyExponent, minorToNumber, parseRate } from '../common/money';
import { newReference } from '../common/reference';
import type { Env } from '../config/env';
import { CustomersService } from '../customers/customers.service';
import type { Prisma, Transaction } from '../generated/prisma/client';
import { ProviderClient } from '../provider';
import { LedgerService } from '../transactions/ledger.service';
import { CreatePayoutDto, PayoutDto } from './payout.dto';
import { PayoutsRepository } from './payouts.repository';

/** The provider's rate window between payout initialize and finalize (provider-webhooks.md: ~4 minutes). */
export const PAYOUT_RATE_WINDOW_MS = 4 * 60 * 1000;

export function toPayoutDto(row: Transaction): PayoutDto {
  return {
    id: row.id,
    status: row.status,
    customerId: row.customerId as string,
    beneficiaryId: row.beneficiaryId as string,
    amount: minorToNumber(row.amount),
    currency: row.currency,
    fee: minorToNumber(row.fee),
    rate: row.exchangeRate ? parseRate(row.exchangeRate.toString()) : null,
    quoteExpiresAt: row.providerId ? new Date(row.createdAt.getTime() + PAYOUT_RATE_WINDOW_MS).toISOString() : null,
    payoutAmount: row.counterAmount === null ? null : minorToNumber(row.counterAmount),
    payoutCurrency: row.counterCurrency,
    reference: row.reference,
    providerId: row.providerId,
    description: row.description,
    failureReason: row.failureReason,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    completedAt: row.completedAt?.toISOString() ?? null,
  };
}

/**
 * Payouts in two steps (provider-api.md "Beneficiaries and payouts"): initialize (`initiated`,
 * with fee and rate), then confirm (provider finalize, `pending`). Write-ahead: the ledger row
 * exists (status `created`) before the provider is called and holds its answer after. A provider
 * refusal marks it `failed`; a timeout or 5xx marks it `unknown` for reconciliation; it is never
 * deleted and never retried into a second payout.
 */
@Injectable()
export class PayoutsService {
  constructor(
    private readonly repository: PayoutsRepository,
    private readonly ledger: LedgerService,
    private readonly provider: ProviderClient,
    private readonly customers: CustomersService,
    private readonly beneficiaries: BeneficiariesService,
    private readonly config: ConfigService<Env, true>,
  ) {}

  /**
   * Initializes a payout of `amount` minor units of `sourceCurrency` (default USD).
   * @throws NotFoundError (404) customer or beneficiary; ValidationError (400) beneficiary of another
   * customer or unknown currency; ProviderError (422/502/504) with the ledger row kept (`failed`/`unknown`);
   * ProviderAmountMismatchError (502 `provider_amount_mismatch`) when the initialize answer states
   * another amount or wallet currency: the row goes to `needs_review` (never confirmable: 409).
   */
  async create(input: CreatePayoutDto): Promise<PayoutDto> {
    const currency = input.sourceCurrency ?? 'USD';
    currencyExponent(currency);
    const customer = await this.customers.requireRow(input.customerId);
    const beneficiary = await this.beneficiaries.requireRow(input.beneficiaryId);
    if (beneficiary.customerId !== customer.id || !beneficiary.providerId) {
      throw new ValidationError([
        { field: 'beneficiaryId', message: 'beneficiaryId must be a registered beneficiary of this customer' },
      ]);
    }
    const row = await this.ledger.record({
      kind: 'payout',
      direction: 'debit',
      amount: BigInt(input.amount),
      currency,
      customerId: customer.id,
      beneficiaryId: beneficiary.id,
      counterCurrency: beneficiary.currency,
      reference: newReference('payout'),
      description: input.description,
    });
    try {
      const upstream = await this.provider.initializePayout({
        amountMinor: BigInt(input.amount),
        sourceCurrency: currency,
        reference: row.reference,
        customerEmail: customer.email,
        description: input.description,
        beneficiaryId: beneficiary.providerId,
        callbackUrl: providerCallbackUrl(this.config),
      });
      const { transaction } = await this.ledger.transition(row.id, 'initiated', 'api', {
        patch: {
          providerId: upstream.id,
          fee: upstream.feeMinor,
          exchangeRate: upstream.exchangeRate ?? upstream.spotPrice,
          providerPayload: upstream.raw as Prisma.InputJsonValue,
        },
      });
      return toPayoutDto(transaction);
    } catch (error) {
      await this.ledger.recordProviderFailure(row.id, error);
      throw error;
    }
  }

  /**
   * Confirms (finalizes) an `initiated` payout at the provider → `pending`, with the payout amount
   * and currency. Only one request sends the finalize, however many arrive.
   * @throws NotFoundError (404); InvalidStateTransitionError (409) unless `initiated` and not already
   * being confirmed (the provider is not called); ProviderError (422 leaves it `initiated`; 502/504 → `unknown`);
   * ProviderAmountMismatchError (502) when the finalize answer states another amount → `needs_review`.
   */
  async confirm(id: string): Promise<PayoutDto> {
    const row = await this.requirePayout(id);
    const claimed = await this.repository.claimConfirm(id);
    if (!claimed) {
      const current = await this.requirePayout(id);
      throw new InvalidStateTransitionError(
        'payout',
        current.confirmRequestedAt && current.status === 'initiated' ? 'confirming' : current.status,
        'pending',
      );
    }
    try {
      const upstream = await this.provider.finalizePayout({
        transactionId: row.providerId as string,
        sourceCurrency: row.currency,
        amountMinor: row.amount,
      });
      const { transaction } = await this.ledger.transition(id, 'pending', 'api', {
        patch: {
          counterAmount: upstream.payoutAmountMinor,
          counterCurrency: upstream.payoutCurrency ?? row.counterCurrency,
          exchangeRate: upstream.exchangeRate ?? row.exchangeRate,
          providerPayload: upstream.raw as Prisma.InputJsonValue,
        },
      });
      return toPayoutDto(transaction);
    } catch (error) {
      if (providerDidNotAct(error)) {
        // The provider said no, or the call was never sent (breaker, bulkhead, 429): nothing
        // happened, the payout may be confirmed again.
        await this.repository.releaseConfirm(id, error.message);
      } else {
        await this.ledger.recordProviderFailure(id, error);
      }
      throw error;
    }
  }

  /** @throws NotFoundError (404). */
  async get(id: string): Promise<PayoutDto> {
    return toPayoutDto(await this.requirePayout(id));
  }

  private async requirePayout(id: string): Promise<Transaction> {
    const row = await this.repository.findPayout(id);
    if (!row) throw new NotFoundError('Payout', id);
    return row;
  }
}
