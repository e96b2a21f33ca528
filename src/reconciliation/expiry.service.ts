import { Injectable } from '@nestjs/common';
import { LedgerService } from '../transactions/ledger.service';
import { ReconciliationRepository } from './reconciliation.repository';

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
    private readonly repository: ReconciliationRepository,
    private readonly ledger: LedgerService,
  ) {}

  async run(now = new Date(), limit = 500): Promise<ExpiryReport> {
    const lapsed = await this.repository.lapsedCollectionTransactionIds(now, limit);
    let collectionsExpired = 0;
    for (const transactionId of lapsed) {
      const { outcome } = await this.ledger.transition(transactionId, 'expired', 'reconciliation');
      if (outcome === 'applied') collectionsExpired += 1;
    }
    const quotesExpired = await this.repository.expireOpenQuotes(now);
    const idempotencyKeysPurged = await this.repository.purgeExpiredIdempotencyRecords(now);
    return { collectionsExpired, quotesExpired, idempotencyKeysPurged };
  }
}
