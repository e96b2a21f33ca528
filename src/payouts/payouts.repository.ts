import { Injectable } from '@nestjs/common';
import { noteIdempotentResource } from '../common/idempotency/idempotency-context';
import { PrismaService, type SqlRunner } from '../database/prisma.service';
import { Prisma, type Transaction } from '../generated/prisma/client';
import { LEDGER_ROW_COLUMNS } from '../transactions/ledger-row';

/** Every column of `transactions`, named as the Transaction type's fields (for raw RETURNING). */
const PAYOUT_COLUMNS = Prisma.raw(`${LEDGER_ROW_COLUMNS}, t.provider_payload AS "providerPayload"`);

/**
 * The condition, inside claimConfirm's statement, that the confirm claim was won (its CTE `won`
 * returned the row): the Idempotency-Key's note of the payout runs only then.
 */
export const CONFIRM_WON = Prisma.sql`EXISTS (SELECT 1 FROM won)`;

/** Database access for payouts (ledger rows of kind `payout`). */
@Injectable()
export class PayoutsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** The payout row, or null when there is no ledger row `id` of kind `payout` (one raw statement). */
  async findPayout(id: string): Promise<Transaction | null> {
    const [row] = await this.prisma.$queryRaw<Transaction[]>`
      SELECT ${PAYOUT_COLUMNS} FROM transactions t WHERE t.id = ${id}::uuid AND t.kind = 'payout'`;
    return row ?? null;
  }

  /**
   * Claims the right to confirm payout `id` inside `tx` (a node-postgres transaction:
   * `inTransaction`), in ONE statement: sets `confirmRequestedAt` (and `updatedAt`) only if it is a
   * payout `initiated` and not already being confirmed, and then runs `note` (the Idempotency-Key's
   * note of the payout as its resource, an `UPDATE … RETURNING 1` made with
   * `idempotentResourceNote(…, onlyIf = CONFIRM_WON)`) and `audit` (the request's audit event,
   * `auditedChangeSql(…, CONFIRM_WON)`) in the same statement. Returns the claimed row, as it is
   * now (typed as Prisma reads it), with `noteKept` (whether the note found the claim still ours)
   * to the one caller that won the claim; null to the others (nothing changed).
   */
  async claimConfirm(
    tx: SqlRunner,
    id: string,
    note: Prisma.Sql | null,
    audit: Prisma.Sql | null,
  ): Promise<(Transaction & { noteKept: boolean }) | null> {
    const now = new Date();
    const [won] = await tx.sql<Transaction & { noteKept: boolean }>(Prisma.sql`
      WITH won AS (
        UPDATE transactions t SET confirm_requested_at = ${now}::timestamptz, updated_at = ${now}::timestamptz
        WHERE t.id = ${id}::uuid AND t.kind = 'payout' AND t.status = 'initiated' AND t.confirm_requested_at IS NULL
        RETURNING ${PAYOUT_COLUMNS}),
      note AS (${note ?? Prisma.sql`SELECT 1 WHERE false`}),
      audit AS (${audit ?? Prisma.sql`SELECT 1 WHERE false`})
      SELECT won.*, EXISTS (SELECT 1 FROM note) AS "noteKept" FROM won`);
    return won ?? null;
  }

  /** Runs `work` in one database transaction; the ledger calls given its `tx` take part in it. */
  withTransaction<T>(work: (tx: Prisma.TransactionClient) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(work);
  }

  /**
   * Runs `work` in one node-postgres transaction on one pooled connection (PrismaService.sqlTransaction:
   * committed when it resolves, rolled back when it throws), for the statements taking a SqlRunner.
   */
  inTransaction<T>(work: (tx: SqlRunner) => Promise<T>): Promise<T> {
    return this.prisma.sqlTransaction(work);
  }

  /**
   * Notes payout `id` as the current Idempotency-Key's resource inside `tx` (an approval or
   * rejection): a retry after a crash is answered from the payout as it is then, never decided twice.
   */
  noteDecisionResource(tx: Prisma.TransactionClient, id: string): Promise<void> {
    return noteIdempotentResource(tx, 'payout', id);
  }

  /**
   * Gives the confirm claim back after a provider refusal, keeping the refusal as `failureReason`
   * (one statement through node-postgres; `updatedAt` set as Prisma's @updatedAt would).
   */
  async releaseConfirm(id: string, failureReason: string): Promise<void> {
    await this.prisma.sql(Prisma.sql`
      UPDATE transactions SET confirm_requested_at = NULL, failure_reason = ${failureReason}::text,
        updated_at = ${new Date()}::timestamptz
      WHERE id = ${id}::uuid`);
  }
}
