import { Injectable } from '@nestjs/common';
import { recordAuditedChange } from '../audit/audit-chain';
import { noteIdempotentResource } from '../common/idempotency/idempotency-context';
import { PrismaService } from '../database/prisma.service';
import { ReadPool } from '../database/read-pool';
import { namedStatement } from '../database/sql';
import type { Prisma, Transaction } from '../generated/prisma/client';
import { LEDGER_ROW_COLUMNS, type LedgerRow } from '../transactions/ledger-row';

const PAYOUT_BY_ID = namedStatement(
  'payout_by_id',
  `SELECT ${LEDGER_ROW_COLUMNS} FROM transactions t WHERE t.id = $1::uuid AND t.kind = 'payout'`,
);

/**
 * Database access for payouts (ledger rows of kind `payout`): the confirm claim and its release
 * through Prisma, the read by id (hot) as typed SQL on the read pool (the ledger's one row view).
 */
@Injectable()
export class PayoutsRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly reads: ReadPool,
  ) {}

  /** The payout row, or null when there is no ledger row `id` of kind `payout`. */
  async findPayout(id: string): Promise<LedgerRow | null> {
    return (await this.reads.one<LedgerRow>(PAYOUT_BY_ID(id))) ?? null;
  }

  /**
   * Claims the right to confirm payout `id`: sets `confirmRequestedAt` only if it is `initiated` and
   * not already being confirmed, and (in the same database transaction) notes the payout as the
   * Idempotency-Key's resource. Returns true to the one caller that won the claim.
   */
  claimConfirm(id: string): Promise<boolean> {
    return this.prisma.$transaction(async (tx) => {
      const won = await tx.transaction.updateMany({
        where: { id, kind: 'payout', status: 'initiated', confirmRequestedAt: null },
        data: { confirmRequestedAt: new Date() },
      });
      // Write-ahead for the Idempotency-Key: a retry after a crash is answered from this payout.
      if (won.count === 1) await noteIdempotentResource(tx, 'payout', id);
      if (won.count === 1) await recordAuditedChange(tx, id);
      return won.count === 1;
    });
  }

  /** Runs `work` in one database transaction; the ledger calls given its `tx` take part in it. */
  withTransaction<T>(work: (tx: Prisma.TransactionClient) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(work);
  }

  /**
   * Notes payout `id` as the current Idempotency-Key's resource inside `tx` (an approval or
   * rejection): a retry after a crash is answered from the payout as it is then, never decided twice.
   */
  noteDecisionResource(tx: Prisma.TransactionClient, id: string): Promise<void> {
    return noteIdempotentResource(tx, 'payout', id);
  }

  /** Gives the confirm claim back after a provider refusal, keeping the refusal as `failureReason`. */
  releaseConfirm(id: string, failureReason: string): Promise<Transaction> {
    return this.prisma.transaction.update({
      where: { id },
      data: { confirmRequestedAt: null, failureReason },
    });
  }
}
