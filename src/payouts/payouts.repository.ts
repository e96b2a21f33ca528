import { Injectable } from '@nestjs/common';
import {
  claimedRow,
  idempotencyKeyCtes,
  KEY_HELD,
  noteIdempotentResource,
  type ResourceKeySql,
} from '../common/idempotency/idempotency-context';
import { PrismaService } from '../database/prisma.service';
import { ReadPool } from '../database/read-pool';
import { namedStatement, READ_POOL_TYPES } from '../database/sql';
import { Prisma, type Transaction } from '../generated/prisma/client';
import { LEDGER_ROW_COLUMNS, type LedgerRow } from '../transactions/ledger-row';
import type { InsertGuard } from '../transactions/ledger.service';

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

/** What payoutRefsGuard reads of a payout's customer and beneficiary (null fields: not found). */
export interface PayoutRefs {
  refCustomerId: string | null;
  refCustomerEmail: string | null;
  refCustomerCreatedBy: string | null;
  refBeneficiaryId: string | null;
  refBeneficiaryCustomerId: string | null;
  refBeneficiaryProviderId: string | null;
  refBeneficiaryCurrency: string | null;
  refBeneficiaryCreatedBy: string | null;
}

const PAYOUT_REFS_FIELDS: ReadonlyArray<keyof PayoutRefs> = [
  'refCustomerId',
  'refCustomerEmail',
  'refCustomerCreatedBy',
  'refBeneficiaryId',
  'refBeneficiaryCustomerId',
  'refBeneficiaryProviderId',
  'refBeneficiaryCurrency',
  'refBeneficiaryCreatedBy',
];

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
   * alone; prepared once per connection): locks the row (FOR UPDATE) if it is a payout `initiated`, not already being confirmed,
   * and created by `owner` when given (OWNERSHIP=client: `ownerRestriction()`); then runs `key.claim` (a
   * deferred Idempotency-Key claim: the key's record inserted, noting the payout as its resource
   * where it was claimable, `idempotentClaimSql(…, onlyIf = CONFIRM_CLAIMABLE)`) or `key.note` (for a
   * claim already held: the key's note of the payout, an `UPDATE … RETURNING 1` made with
   * `idempotentResourceNote(…, onlyIf = CONFIRM_CLAIMABLE)`); both are null outside an idempotent
   * request (`idempotentWriteSql` gives the pair). Then, only if the key is the request's
   * (and, with a note, the note found it so), sets `confirmRequestedAt` (and `updatedAt`) and runs
   * `audit` (the request's audit event, `auditedChangeSql(…, CONFIRM_WON)`). The claim and the note
   * are written together or not at all (the row stays locked between them); the key's record is
   * inserted (as `key.claim` says) whether or not the payout was claimable. Returns the claimed row as it
   * is now (typed as Prisma reads it) to the one caller that won the claim as `row`; `lost` when the
   * payout could be claimed but the key's claim or note was not the request's (nothing written: 409); null
   * otherwise (no such payout, another client's, or not confirmable: nothing written but `key.claim`'s
   * record). `keyHeld` (KEY_HELD) is for `settled` of idempotentWriteSql, to be called before `row` is
   * read: false with `key.claim` means the Idempotency-Key was taken and nothing was written.
   */
  async claimConfirm(
    id: string,
    key: ResourceKeySql,
    audit: Prisma.Sql | null,
    owner: string | undefined,
  ): Promise<{ row: Transaction | 'lost' | null; keyHeld: boolean }> {
    const now = new Date();
    const [result] = await this.prisma.sql<Transaction & { claimable: boolean; keyHeld: boolean }>(
      Prisma.sql`
      WITH cur AS (
        SELECT t.id FROM transactions t
        WHERE t.id = ${id}::uuid AND t.kind = 'payout' AND t.status = 'initiated' AND t.confirm_requested_at IS NULL
          AND (${owner ?? null}::uuid IS NULL OR t.created_by = ${owner ?? null}::uuid)
        FOR UPDATE),
      ${idempotencyKeyCtes(key)},
      won AS (
        UPDATE transactions t SET confirm_requested_at = ${now}::timestamptz, updated_at = ${now}::timestamptz
        FROM cur
        WHERE t.id = cur.id AND EXISTS (SELECT 1 FROM note)
        RETURNING ${PAYOUT_COLUMNS}),
      audit AS (${audit ?? Prisma.sql`SELECT 1 WHERE false`})
      SELECT won.*, ${CONFIRM_CLAIMABLE} AS claimable, ${KEY_HELD}
      FROM (SELECT 1) AS one LEFT JOIN won ON true`,
      READ_POOL_TYPES,
      'payout_claim_confirm',
    );
    return claimedRow(result);
  }

  /**
   * The guard of a payout's write-ahead (LedgerService.recordGuarded: read in the row's own
   * statement): customer `customerId` and beneficiary `beneficiaryId` (CTE `refs`, one row, `null`
   * fields for what is absent). The row is written only if both exist, the beneficiary is the
   * customer's and registered with the provider (has a provider id), and, under OWNERSHIP=client
   * (`owner`: ownerRestriction()), both were created by `owner` — the checks CustomersService and
   * BeneficiariesService's requireRow and PayoutsService.create make. The row's `counterCurrency`
   * is the beneficiary's currency.
   */
  payoutRefsGuard(customerId: string, beneficiaryId: string, owner: string | undefined): InsertGuard<PayoutRefs> {
    const ownerId = owner ?? null;
    return {
      with: Prisma.sql`refs AS (
        SELECT c.id AS "refCustomerId", c.email AS "refCustomerEmail", c.created_by AS "refCustomerCreatedBy",
               b.id AS "refBeneficiaryId", b.customer_id AS "refBeneficiaryCustomerId",
               b.provider_id AS "refBeneficiaryProviderId", b.currency AS "refBeneficiaryCurrency",
               b.created_by AS "refBeneficiaryCreatedBy"
        FROM (SELECT 1) AS one
        LEFT JOIN customers c ON c.id = ${customerId}::uuid
        LEFT JOIN beneficiaries b ON b.id = ${beneficiaryId}::uuid)`,
      from: Prisma.sql`refs`,
      fields: PAYOUT_REFS_FIELDS,
      onlyIf: Prisma.sql`EXISTS (
        SELECT 1 FROM refs
        WHERE "refCustomerId" IS NOT NULL AND "refBeneficiaryCustomerId" = "refCustomerId"
          AND "refBeneficiaryProviderId" IS NOT NULL
          AND (${ownerId}::uuid IS NULL
               OR ("refCustomerCreatedBy" = ${ownerId}::uuid AND "refBeneficiaryCreatedBy" = ${ownerId}::uuid)))`,
      columns: { counterCurrency: Prisma.sql`SELECT "refBeneficiaryCurrency" FROM refs` },
    };
  }

  /**
   * The guard of a maker-checker decision's claim (LedgerService.claimTransition, an SQL condition
   * on the payout row aliased `t`): decided by API client `approverId`, who did not create it, while
   * its approval has not lapsed (created after `createdAfter`: now − PAYOUT_APPROVAL_TTL). Read in
   * the UPDATE that claims the decision, so that nothing decided between a read and the claim counts.
   */
  decisionGuard(approverId: string, createdAfter: Date): Prisma.Sql {
    return Prisma.sql`t.created_by IS DISTINCT FROM ${approverId}::uuid AND t.created_at > ${createdAfter}::timestamptz`;
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
