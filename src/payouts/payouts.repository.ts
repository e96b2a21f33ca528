import { Injectable } from '@nestjs/common';
import { noteIdempotentResource } from '../common/idempotency/idempotency-context';
import { PrismaService } from '../database/prisma.service';
import { ReadPool } from '../database/read-pool';
import { namedStatement, READ_POOL_TYPES } from '../database/sql';
import { Prisma, type Transaction } from '../generated/prisma/client';
import { LEDGER_ROW_COLUMNS, type LedgerRow } from '../transactions/ledger-row';

/** Every column of `transactions`, named as the Transaction type's fields (for raw RETURNING). */
const PAYOUT_COLUMNS = Prisma.raw(`${LEDGER_ROW_COLUMNS}, t.provider_payload AS "providerPayload"`);

/**
 * The condition, inside claimConfirm's statement, that the payout can be claimed (its CTE `cur`
 * locked it, `initiated` and not being confirmed): the Idempotency-Key's note of the payout runs only then.
 */
export const CONFIRM_CLAIMABLE = Prisma.sql`EXISTS (SELECT 1 FROM cur)`;

/**
 * The condition, inside claimConfirm's statement, that the confirm claim was won (its CTE `won`
 * returned the row): the request's audit event is written only then.
 */
export const CONFIRM_WON = Prisma.sql`EXISTS (SELECT 1 FROM won)`;

const PAYOUT_BY_ID = namedStatement(
  'payout_by_id',
  `SELECT ${LEDGER_ROW_COLUMNS} FROM transactions t WHERE t.id = $1::uuid AND t.kind = 'payout'`,
);

/**
 * Database access for payouts (ledger rows of kind `payout`): the confirm claim and its release as
 * node-postgres statements on Prisma's pool (PrismaService.sql), the read by id (hot) as typed SQL
 * on the read pool (the ledger's one row view).
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
   * Claims the right to confirm payout `id`, in ONE statement sent through node-postgres (it commits
   * alone): locks the row (FOR UPDATE) if it is a payout `initiated`, not already being confirmed,
   * and created by `owner` when given (OWNERSHIP=client: `ownerRestriction()`); then runs `note` (the
   * Idempotency-Key's note of the payout as its resource, an `UPDATE … RETURNING 1` made with
   * `idempotentResourceNote(…, onlyIf = CONFIRM_CLAIMABLE)`); then, only if the note found the claim
   * still ours (or there is none), sets `confirmRequestedAt` (and `updatedAt`) and runs `audit` (the
   * request's audit event, `auditedChangeSql(…, CONFIRM_WON)`). The claim and the note are written
   * together or not at all (the row stays locked between them). Returns the claimed row as it is
   * now (typed as Prisma reads it) to the one caller that won the claim; `lost` when the payout
   * could be claimed but the Idempotency-Key claim was lost to a retry (nothing written: 409); null
   * otherwise (no such payout, another client's, or not confirmable: nothing written).
   */
  async claimConfirm(
    id: string,
    note: Prisma.Sql | null,
    audit: Prisma.Sql | null,
    owner: string | undefined,
  ): Promise<Transaction | 'lost' | null> {
    const now = new Date();
    const [result] = await this.prisma.sql<Transaction & { claimable: boolean }>(
      Prisma.sql`
      WITH cur AS (
        SELECT t.id FROM transactions t
        WHERE t.id = ${id}::uuid AND t.kind = 'payout' AND t.status = 'initiated' AND t.confirm_requested_at IS NULL
          AND (${owner ?? null}::uuid IS NULL OR t.created_by = ${owner ?? null}::uuid)
        FOR UPDATE),
      note AS (${note ?? Prisma.sql`SELECT 1 FROM cur`}),
      won AS (
        UPDATE transactions t SET confirm_requested_at = ${now}::timestamptz, updated_at = ${now}::timestamptz
        FROM cur
        WHERE t.id = cur.id AND EXISTS (SELECT 1 FROM note)
        RETURNING ${PAYOUT_COLUMNS}),
      audit AS (${audit ?? Prisma.sql`SELECT 1 WHERE false`})
      SELECT won.*, EXISTS (SELECT 1 FROM cur) AS claimable FROM (SELECT 1) AS one LEFT JOIN won ON true`,
      READ_POOL_TYPES,
    );
    if (!result?.id) return result?.claimable ? 'lost' : null;
    const { claimable: _claimable, ...row } = result;
    return row;
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
