import { Injectable } from '@nestjs/common';
import { ownerFilter } from '../audit/ownership';
import { afterCursor } from '../common/pagination';
import { PrismaService } from '../database/prisma.service';
import type { Collection, Prisma, Transaction, TransactionStatus } from '../generated/prisma/client';

type Tx = Prisma.TransactionClient;

/** A collection row with its ledger row (amount, currency, fee and status live on the ledger). */
export type CollectionWithTransaction = Collection & { transaction: Transaction };

/** Database access for collections (each with its ledger row of kind `collection`). */
@Injectable()
export class CollectionsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Runs `work` in one database transaction; the repository methods given its `tx` take part in it. */
  withTransaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(work);
  }

  /** The collection row for ledger row `transactionId` (no provider answer yet). */
  create(
    tx: Tx,
    data: { id?: string; customerId: string; transactionId: string; country: string },
  ): Promise<Collection> {
    return tx.collection.create({ data });
  }

  /** Stores the provider's answer (its id and the account detail to pay into) on collection `id`. */
  recordAccountDetail(
    tx: Tx,
    id: string,
    detail: Pick<
      Prisma.CollectionUpdateInput,
      'providerId' | 'accountNumber' | 'accountName' | 'bankName' | 'expiresAt'
    >,
  ): Promise<Collection> {
    return tx.collection.update({ where: { id }, data: detail });
  }

  findWithTransaction(id: string): Promise<CollectionWithTransaction | null> {
    return this.prisma.collection.findUnique({ where: { id }, include: { transaction: true } });
  }

  /** The ledger row id of the collection the provider knows as `providerId`, or null. */
  async findTransactionIdByProviderId(providerId: string): Promise<string | null> {
    const row = await this.prisma.collection.findUnique({ where: { providerId }, select: { transactionId: true } });
    return row?.transactionId ?? null;
  }

  findByTransactionId(transactionId: string): Promise<CollectionWithTransaction | null> {
    return this.prisma.collection.findUnique({ where: { transactionId }, include: { transaction: true } });
  }

  /**
   * `limit + 1` rows after the cursor, newest first, so the caller can tell if a next page exists;
   * under OWNERSHIP=client only those whose ledger row the request's client created.
   */
  list(
    filter: { customerId?: string; status?: TransactionStatus },
    cursor: string | undefined,
    limit: number,
  ): Promise<CollectionWithTransaction[]> {
    const onLedger = { ...(filter.status ? { status: filter.status } : {}), ...ownerFilter() };
    return this.prisma.collection.findMany({
      where: {
        ...(filter.customerId ? { customerId: filter.customerId } : {}),
        ...(Object.keys(onLedger).length ? { transaction: onLedger } : {}),
        ...afterCursor(cursor),
      },
      include: { transaction: true },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: limit + 1,
    });
  }
}
