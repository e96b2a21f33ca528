import { Injectable } from '@nestjs/common';
import { PrismaService } from '../database/prisma.service';

/** Database access of the reconciliation and expiry jobs (they sweep rows of several modules' tables). */
@Injectable()
export class ReconciliationRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Ledger ids of up to `limit` collections past `expiresAt` at `now` whose ledger row is still `processing`. */
  async lapsedCollectionTransactionIds(now: Date, limit: number): Promise<string[]> {
    const lapsed = await this.prisma.collection.findMany({
      where: { expiresAt: { lt: now }, transaction: { status: 'processing' } },
      select: { transactionId: true },
      take: limit,
    });
    return lapsed.map((row) => row.transactionId);
  }

  /** Marks `open` swap quotes past their expiry at `now` as `expired`; answers how many. */
  async expireOpenQuotes(now: Date): Promise<number> {
    const quotes = await this.prisma.swapQuote.updateMany({
      where: { status: 'open', expiresAt: { lt: now } },
      data: { status: 'expired' },
    });
    return quotes.count;
  }

  /** Deletes idempotency records past their expiry at `now`; answers how many. */
  async purgeExpiredIdempotencyRecords(now: Date): Promise<number> {
    const keys = await this.prisma.idempotencyRecord.deleteMany({ where: { expiresAt: { lt: now } } });
    return keys.count;
  }
}
