import { Injectable } from '@nestjs/common';
import { PrismaService } from '../database/prisma.service';
import { LedgerService } from '../transactions/ledger.service';

/** Counts of one expiry pass. */
export interface ExpiryReport {
  collectionsExpired: number;
  quotesExpired: number;
  idempotencyKeysPurged: number;
}

/**
 * Expiry: collections past `expiresAt` still waiting for payment move to `expired` (ledger,
 * source `reconciliation`); open swap quotes past their expiry are marked `expired`; idempotency
 * records past their 24 h are deleted. Safe to run from several instances at once: each move is
 * a conditional update under the ledger's row lock.
 */
@Injectable()
export class ExpiryService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly ledger: LedgerService,
  ) {}

  async run(now = new Date(), limit = 500): Promise<ExpiryReport> {
    const lapsed = await this.prisma.collection.findMany({
      where: { expiresAt: { lt: now }, transaction: { status: 'processing' } },
      select: { transactionId: true },
      take: limit,
    });
    let collectionsExpired = 0;
    for (const { transactionId } of lapsed) {
      const { outcome } = await this.ledger.transition(transactionId, 'expired', 'reconciliation');
      if (outcome === 'applied') collectionsExpired += 1;
    }
    const quotes = await this.prisma.swapQuote.updateMany({
      where: { status: 'open', expiresAt: { lt: now } },
      data: { status: 'expired' },
    });
    const keys = await this.prisma.idempotencyRecord.deleteMany({ where: { expiresAt: { lt: now } } });
    return { collectionsExpired, quotesExpired: quotes.count, idempotencyKeysPurged: keys.count };
  }
}
