import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { type Env, parseDuration } from '../config/env';
import { LedgerService } from '../transactions/ledger.service';
import { ReconciliationRepository } from './reconciliation.repository';

/** Counts of one expiry pass. */
export interface ExpiryReport {
  collectionsExpired: number;
  quotesExpired: number;
  /** Payouts whose approval did not come within PAYOUT_APPROVAL_TTL. */
  approvalsExpired: number;
  idempotencyKeysPurged: number;
}

/**
 * Expiry: collections past `expiresAt` still waiting for payment move to `expired` (ledger,
 * source `reconciliation`); open swap quotes past their expiry are marked `expired`; idempotency
 * records past their 24 h are deleted; payouts still `awaiting_approval` PAYOUT_APPROVAL_TTL after their
 * creation move to `expired` (source `reconciliation`, no provider call: none was ever made), each
 * claimed as a maker-checker decision is (LedgerService.claimTransition: only from
 * `awaiting_approval`, so an approval or rejection that won first stays). Safe to run from several
 * instances at once: each move is a conditional update under the ledger's row lock.
 */
@Injectable()
export class ExpiryService {
  constructor(
    private readonly repository: ReconciliationRepository,
    private readonly ledger: LedgerService,
    private readonly config: ConfigService<Env, true>,
  ) {}

  async run(now = new Date(), limit = 500): Promise<ExpiryReport> {
    const lapsed = await this.repository.lapsedCollectionTransactionIds(now, limit);
    let collectionsExpired = 0;
    for (const transactionId of lapsed) {
      const { outcome } = await this.ledger.transition(transactionId, 'expired', 'reconciliation');
      if (outcome === 'applied') collectionsExpired += 1;
    }
    const approvalTtlMs = parseDuration(this.config.get('PAYOUT_APPROVAL_TTL', { infer: true }));
    let approvalsExpired = 0;
    const lapsedBefore = new Date(now.getTime() - approvalTtlMs);
    for (const id of await this.repository.lapsedApprovalIds(lapsedBefore, limit)) {
      // Claimed as a decision: only from `awaiting_approval`, so that an approval or rejection that
      // won since the read stays (a plain move to `expired` would also take an approved `initiated` payout).
      const expired = await this.ledger.expireLapsedApproval(id, lapsedBefore);
      if (expired) approvalsExpired += 1;
    }
    const quotesExpired = await this.repository.expireOpenQuotes(now);
    const idempotencyKeysPurged = await this.repository.purgeExpiredIdempotencyRecords(now);
    return { collectionsExpired, quotesExpired, approvalsExpired, idempotencyKeysPurged };
  }
}
