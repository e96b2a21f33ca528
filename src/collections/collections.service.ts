import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { recordAuditedChange } from '../audit/audit-chain';
import { ownedByCurrentClient } from '../audit/ownership';
import { BusinessRuleError, NotFoundError } from '../common/errors';
import { minorToNumber } from '../common/money';
import { Page, toPage } from '../common/pagination';
import { newReference } from '../common/reference';
import { CustomersService } from '../customers/customers.service';
import type { Prisma, TransactionStatus } from '../generated/prisma/client';
import { ProviderClient } from '../provider';
import { LedgerService } from '../transactions/ledger.service';
import { collectionLimitProblems } from './collection-limits';
import { CollectionDto, CreateCollectionDto, ListCollectionsQueryDto } from './collection.dto';
import { CollectionsRepository, type CollectionWithTransaction } from './collections.repository';

export type { CollectionWithTransaction } from './collections.repository';

export function toCollectionDto(row: CollectionWithTransaction): CollectionDto {
  const { transaction } = row;
  return {
    id: row.id,
    transactionId: transaction.id,
    status: transaction.status,
    customerId: row.customerId,
    country: row.country,
    amount: minorToNumber(transaction.amount),
    currency: transaction.currency,
    fee: minorToNumber(transaction.fee),
    accountNumber: row.accountNumber,
    bankName: row.bankName,
    accountName: row.accountName,
    expiresAt: row.expiresAt?.toISOString() ?? null,
    description: transaction.description,
    reference: transaction.reference,
    providerId: row.providerId,
    failureReason: transaction.failureReason,
    createdAt: row.createdAt.toISOString(),
    updatedAt: (row.updatedAt > transaction.updatedAt ? row.updatedAt : transaction.updatedAt).toISOString(),
    completedAt: transaction.completedAt?.toISOString() ?? null,
  };
}

/**
 * Collections (pay-ins): the provider issues an account detail that the customer pays
 * `amount` into before `expiresAt` (docs/provider.md#collections, #limits;
 * docs/provider.md#units for the minor-unit amount).
 * Write-ahead: the ledger row (kind `collection`, direction `credit`, status `created`) and the
 * Collection row exist before the provider is called and hold its answer after. A refusal marks
 * the ledger row `failed`; a timeout or 5xx marks it `unknown` for reconciliation. Payment and
 * expiry arrive later (webhooks, expiry job), not through this service.
 */
@Injectable()
export class CollectionsService {
  constructor(
    private readonly repository: CollectionsRepository,
    private readonly ledger: LedgerService,
    private readonly provider: ProviderClient,
    private readonly customers: CustomersService,
  ) {}

  /**
   * Starts a collection of `amount` minor units of `currency` from a customer; answers the
   * account detail to pay into (`processing`, with `fee` in minor units and `expiresAt`).
   * The country limits are checked locally first (NG 100–2,000,000 NGN, KE 20–145,000 KES,
   * UG 500–4,000,000 UGX, compared in minor units).
   * @throws BusinessRuleError (422 `business_rule_failed`, field `amount` or `currency`) outside the
   * country's limits (a rule across country, currency and amount that the description states in
   * words only): nothing stored, provider not called;
   * NotFoundError (404) unknown customer; ProviderError (422/502/504) with the ledger row kept
   * (`failed` on 422, `unknown` on 502/504); ProviderAmountMismatchError (502 `provider_amount_mismatch`)
   * when the answer echoes another amount or currency: the ledger row goes to `needs_review` and no
   * account detail is stored or shown.
   */
  async create(input: CreateCollectionDto): Promise<CollectionDto> {
    const amount = BigInt(input.amount);
    const problems = collectionLimitProblems(input.country, input.currency, amount);
    if (problems.length) throw new BusinessRuleError(problems);
    const customer = await this.customers.requireRow(input.customerId);

    const reference = newReference('collection');
    const collectionId = randomUUID();
    const transactionId = randomUUID();
    const created = await this.repository.withTransaction(async (tx) => {
      // The request's event names the collection (its ledger row in details): written first, it
      // stands for the request, and the ledger's own (which would name the row) is then skipped.
      await recordAuditedChange(tx, collectionId, { transactionId });
      const transaction = await this.ledger.record(
        {
          id: transactionId,
          kind: 'collection',
          direction: 'credit',
          amount,
          currency: input.currency,
          customerId: customer.id,
          reference,
          description: input.description,
        },
        'api',
        tx,
      );
      const collection = await this.repository.create(tx, {
        id: collectionId,
        customerId: customer.id,
        transactionId: transaction.id,
        country: input.country,
      });
      return { ...collection, transaction };
    });

    try {
      const upstream = await this.provider.initializeCollection({
        country: input.country,
        currency: input.currency,
        customerEmail: customer.email,
        amountMinor: amount,
        reference,
        description: input.description,
        bank: input.payer.type,
        accountName: input.payer.accountName,
      });
      const row = await this.repository.withTransaction(async (tx) => {
        const { transaction } = await this.ledger.transition(created.transactionId, 'processing', 'api', {
          tx,
          patch: {
            providerId: upstream.id,
            fee: upstream.feeMinor,
            providerPayload: upstream.raw as Prisma.InputJsonValue,
          },
        });
        const collection = await this.repository.recordAccountDetail(tx, created.id, {
          providerId: upstream.id,
          accountNumber: upstream.accountNumber,
          accountName: upstream.accountName ?? input.payer.accountName,
          bankName: upstream.bankName ?? input.payer.type,
          expiresAt: upstream.expiresAt,
        });
        return { ...collection, transaction };
      });
      return toCollectionDto(row);
    } catch (error) {
      await this.ledger.recordProviderFailure(created.transactionId, error);
      throw error;
    }
  }

  /**
   * One collection with its current ledger status.
   * @throws NotFoundError (404), also under OWNERSHIP=client for a collection whose ledger row
   * another client created (a collection follows its ledger row's `created_by`).
   */
  async get(id: string): Promise<CollectionDto> {
    const row = await this.repository.findWithTransaction(id);
    if (!row || !ownedByCurrentClient(row.transaction)) throw new NotFoundError('Collection', id);
    return toCollectionDto(row);
  }

  /** The ledger row id of the collection the provider knows as `providerId` (a deposit callback's id), or null. */
  transactionIdOfProviderId(providerId: string): Promise<string | null> {
    return this.repository.findTransactionIdByProviderId(providerId);
  }

  /** The collection of ledger row `transactionId`. @throws NotFoundError (404). */
  async getByTransaction(transactionId: string): Promise<CollectionDto> {
    const row = await this.repository.findByTransactionId(transactionId);
    if (!row) throw new NotFoundError('Collection of transaction', transactionId);
    return toCollectionDto(row);
  }

  /**
   * Newest first, keyset-paginated (`{ data, nextCursor }`, `limit` ≤ 100); optionally one
   * customer's, optionally in one ledger status; under OWNERSHIP=client only the client's own.
   * @throws ValidationError (400) for a cursor that is not one of ours.
   */
  async list(query: ListCollectionsQueryDto): Promise<Page<CollectionDto>> {
    const limit = query.limit ?? 20;
    const rows = await this.repository.list(
      { customerId: query.customerId, status: query.status as TransactionStatus | undefined },
      query.cursor,
      limit,
    );
    return toPage(rows, limit, toCollectionDto);
  }
}
