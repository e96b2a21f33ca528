import { Injectable } from '@nestjs/common';
import { noteIdempotentResource } from '../common/idempotency/idempotency-context';
import { PrismaService } from '../database/prisma.service';
import { ReadPool } from '../database/read-pool';
import { namedStatement } from '../database/sql';
import { Prisma, type Transaction } from '../generated/prisma/client';
import { LEDGER_ROW_COLUMNS, type LedgerRow } from '../transactions/ledger-row';

/** Every column of `transactions`, named as the Transaction type's fields (for raw RETURNING). */
const PAYOUT_COLUMNS = Prisma.raw(`${LEDGER_ROW_COLUMNS}, t.provider_payload AS "providerPayload"`);

/**
 * The condition, inside claimConfirm's statement, that the confirm claim was won (its CTE `won`
 * returned the row): the Idempotency-Key's note of the payout runs only then.
 */
export const CONFIRM_WON = Prisma.sql`EXISTS (SELECT 1 FROM won)`;

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
   * Claims the right to confirm payout `id` inside `tx`, in ONE statement: sets `confirmRequestedAt`
   * (and `updatedAt`) only if it is a payout `initiated` and not already being confirmed, and then
   * runs `note` (the Idempotency-Key's note of the payout as its resource, an `UPDATE … RETURNING 1`
   * made with `idempotentResourceNote(…, onlyIf = CONFIRM_WON)`) in the same statement. Returns the
   * claimed row, as it is now, with `noteKept` (whether the note found the claim still ours) to the
   * one caller that won the claim; null to the others (nothing changed).
   */
  async claimConfirm(
    tx: Prisma.TransactionClient,
    id: string,
    note: Prisma.Sql | null,
  ): Promise<(Transaction & { noteKept: boolean }) | null> {
    const now = new Date();
    const [won] = await tx.$queryRaw<Array<Transaction & { noteKept: boolean }>>`
      WITH won AS (
        UPDATE transactions t SET confirm_requested_at = ${now}, updated_at = ${now}
        WHERE t.id = ${id}::uuid AND t.kind = 'payout' AND t.status = 'initiated' AND t.confirm_requested_at IS NULL
        RETURNING ${PAYOUT_COLUMNS}),
      note AS (${note ?? Prisma.sql`SELECT 1 WHERE false`})
      SELECT won.*, EXISTS (SELECT 1 FROM note) AS "noteKept" FROM won`;
    return won ?? null;
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
