import { Injectable } from '@nestjs/common';
import {
  claimedRow,
  idempotencyKeyCtes,
  KEY_HELD,
  type ResourceKeySql,
} from '../common/idempotency/idempotency-context';
import { PrismaService } from '../database/prisma.service';
import { ReadPool } from '../database/read-pool';
import { namedStatement, READ_POOL_TYPES } from '../database/sql';
import { Prisma, type SwapQuote, type Transaction } from '../generated/prisma/client';
import { ledgerInsertCtes, type StatusChangeEntry, type WriteAheadRow } from '../transactions/ledger.service';

type Tx = Prisma.TransactionClient;

/** Every column of `swap_quotes` (aliased `q`), named as the SwapQuote type's fields. */
const QUOTE_COLUMNS = `q.id, q.provider_id AS "providerId", q.client_id AS "clientId",
  q.source_currency AS "sourceCurrency", q.target_currency AS "targetCurrency", q.source_amount AS "sourceAmount",
  q.target_amount AS "targetAmount", q.fee, q.rate, q.status, q.expires_at AS "expiresAt",
  q.executed_at AS "executedAt", q.transaction_id AS "transactionId", q.provider_payload AS "providerPayload",
  q.created_at AS "createdAt"`;

const QUOTE_BY_ID = namedStatement(
  'swap_quote_by_id',
  `SELECT ${QUOTE_COLUMNS} FROM swap_quotes q WHERE q.id = $1::uuid`,
);

/** The condition, inside createQuote's statement, that the quote was inserted (for its `audit` statement). */
export const QUOTE_INSERTED = Prisma.sql`EXISTS (SELECT 1 FROM ins)`;

/**
 * The condition, inside claimAndRecord's statement, that the quote can be claimed (its CTE `cur`
 * locked it: the client's, `open`, not expired): the Idempotency-Key's note of the swap runs only then.
 */
export const QUOTE_CLAIMABLE = Prisma.sql`EXISTS (SELECT 1 FROM cur)`;

/**
 * Database access for swap quotes and the swaps (ledger rows of kind `swap`) they executed. The
 * hot path (a quote stored, read, claimed with the swap's write-ahead row, settled with the
 * provider's answer) is one node-postgres statement each (PrismaService.sql on Prisma's pool, the
 * read on the read pool), rows typed as Prisma reads them; the rest goes through Prisma.
 */
@Injectable()
export class SwapsRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly reads: ReadPool,
  ) {}

  /** Runs `work` in one database transaction; the repository methods given its `tx` take part in it. */
  withTransaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(work);
  }

  /**
   * Stores a quote (`data.id` set by the caller; amounts in minor units) with `audit` (the request's audit event,
   * `auditedChangeSql(data.id)`, or null) in ONE statement through node-postgres (prepared once per
   * connection, PrismaService.sql): both or neither.
   * `createdAt` is now unless given. Returns the stored quote (the SwapQuote type, as Prisma reads it).
   */
  async createQuote(
    data: Omit<SwapQuote, 'createdAt' | 'executedAt' | 'transactionId' | 'providerPayload' | 'rate'> & {
      /** Exact decimal string. */
      rate: string;
      providerPayload: Prisma.InputJsonValue | null;
      createdAt?: Date;
    },
    audit: Prisma.Sql | null,
  ): Promise<SwapQuote> {
    const [row] = await this.prisma.sql<SwapQuote>(
      Prisma.sql`
      WITH ins AS (
        INSERT INTO swap_quotes AS q (id, provider_id, client_id, source_currency, target_currency, source_amount,
          target_amount, fee, rate, status, expires_at, provider_payload, created_at)
        VALUES (${data.id}::uuid, ${data.providerId}::text, ${data.clientId}::uuid, ${data.sourceCurrency}::text,
          ${data.targetCurrency}::text, ${data.sourceAmount}::bigint, ${data.targetAmount}::bigint, ${data.fee}::bigint,
          ${data.rate}::numeric, ${data.status}::text, ${data.expiresAt}::timestamptz,
          ${data.providerPayload === null ? null : JSON.stringify(data.providerPayload)}::jsonb,
          ${data.createdAt ?? new Date()}::timestamptz)
        RETURNING ${Prisma.raw(QUOTE_COLUMNS)}),
      audit AS (${audit ?? Prisma.sql`SELECT 1 WHERE false`})
      SELECT * FROM ins`,
      READ_POOL_TYPES,
      'swap_quote_insert',
    );
    return row;
  }

  /** Quote `id` (typed SQL on the read pool), or null. */
  async findQuote(id: string): Promise<SwapQuote | null> {
    return (await this.reads.one<SwapQuote>(QUOTE_BY_ID(id))) ?? null;
  }

  /**
   * Claims quote `quoteId` of `clientId` for execution and writes the swap's write-ahead ledger
   * row `row` (its id linked from the quote) in ONE statement through node-postgres (it commits
   * alone; prepared once per connection): locks the quote (FOR UPDATE) if it is the client's, `open`
   * and not expired at `now`;
   * runs `key.claim` (a deferred Idempotency-Key claim: the key's record inserted, noting the swap as
   * its resource where the quote was claimable, `idempotentClaimSql(…, QUOTE_CLAIMABLE)`) or `key.note`
   * (for a claim already held: the key's note of the swap, `idempotentResourceNote(…, QUOTE_CLAIMABLE)`;
   * both null outside an idempotent request: `idempotentWriteSql` gives the pair);
   * then, only if the key is the request's (and, with a note, the note found it so), moves the quote to
   * `executing` and inserts the row with its first history entry (`entry`) and `audit` (the
   * request's audit event, `auditedChangeSql(…, INSERTED)`). All of it or nothing: of any number of
   * concurrent requests for one quote, one gets the row. Returns the row (the Transaction type, as
   * Prisma reads it) as `row`; `lost` when the quote could be claimed but the key's claim or note was
   * not the request's (nothing written: 409, the provider must not be called); null when the quote
   * cannot be claimed (absent, another client's, not `open`, expired: nothing written but `key.claim`'s
   * record). `keyHeld` (KEY_HELD) is for `settled` of idempotentWriteSql, to be called before `row` is
   * read: false with `key.claim` means the Idempotency-Key was taken and nothing was written.
   */
  async claimAndRecord(
    quoteId: string,
    clientId: string,
    now: Date,
    row: WriteAheadRow,
    entry: StatusChangeEntry,
    key: ResourceKeySql,
    audit: Prisma.Sql | null,
  ): Promise<{ row: Transaction | 'lost' | null; keyHeld: boolean }> {
    const [result] = await this.prisma.sql<Transaction & { claimable: boolean; keyHeld: boolean }>(
      Prisma.sql`
      WITH cur AS (
        SELECT q.id FROM swap_quotes q
        WHERE q.id = ${quoteId}::uuid AND q.client_id = ${clientId}::uuid AND q.status = 'open'
          AND q.expires_at > ${now}::timestamptz
        FOR UPDATE),
      ${idempotencyKeyCtes(key)},
      claimed AS (
        UPDATE swap_quotes q SET status = 'executing', transaction_id = ${row.id}::uuid
        FROM cur
        WHERE q.id = cur.id AND q.status = 'open' AND EXISTS (SELECT 1 FROM note)
        RETURNING q.id),
      ${ledgerInsertCtes(row, entry, Prisma.sql`EXISTS (SELECT 1 FROM claimed)`)},
      audit AS (${audit ?? Prisma.sql`SELECT 1 WHERE false`})
      SELECT ins.*, ${QUOTE_CLAIMABLE} AS claimable, ${KEY_HELD}
      FROM (SELECT 1) AS one LEFT JOIN ins ON true`,
      READ_POOL_TYPES,
      'swap_claim_record',
    );
    return claimedRow(result);
  }

  /**
   * The statement moving quote `id` to `outcome` (`executedAt` = now when `executed`), as
   * settleQuote does, for the ledger's one-statement move of its swap (LedgerService.transitionAlone
   * `effects`): changes nothing unless `onlyIf` (MOVED: the swap's row moved).
   */
  settleQuoteSql(id: string, outcome: QuoteOutcome, onlyIf: Prisma.Sql): Prisma.Sql {
    return Prisma.sql`
      UPDATE swap_quotes SET status = ${outcome}::text,
        executed_at = COALESCE(${outcome === 'executed' ? new Date() : null}::timestamptz, executed_at)
      WHERE id = ${id}::uuid AND ${onlyIf}
      RETURNING 1`;
  }

  /** The swap's ledger row and the quote it executed, or null when `id` is not a swap with a quote. */
  async findSwap(id: string): Promise<{ row: Transaction; quote: SwapQuote } | null> {
    const row = await this.prisma.transaction.findUnique({ where: { id } });
    if (row?.kind !== 'swap') return null;
    const quote = await this.prisma.swapQuote.findUnique({ where: { transactionId: id } });
    return quote ? { row, quote } : null;
  }

  /**
   * Claims quote `id` of `clientId` for execution: `open` and not expired at `now` → `executing`,
   * linked to ledger row `transactionId`. Returns true to the one caller that won the claim.
   */
  async claimQuote(tx: Tx, id: string, clientId: string, transactionId: string, now: Date): Promise<boolean> {
    const claimed = await tx.swapQuote.updateMany({
      where: { id, clientId, status: 'open', expiresAt: { gt: now } },
      data: { status: 'executing', transactionId },
    });
    return claimed.count === 1;
  }

  /** Quote `id` → `executed` (with `executedAt`) or `failed`. */
  async settleQuote(tx: Tx, id: string, outcome: QuoteOutcome): Promise<void> {
    await tx.swapQuote.update({ where: { id }, data: quoteOutcome(outcome) });
  }

  /**
   * The quote executed by ledger row `transactionId` (if any), while still `executing` or
   * `needs_review`, follows its row: `executed`, `failed` or `needs_review`.
   */
  async settleQuoteOfSwap(tx: Tx, transactionId: string, outcome: QuoteOutcome): Promise<void> {
    await tx.swapQuote.updateMany({
      where: { transactionId, status: { in: ['executing', 'needs_review'] } },
      data: quoteOutcome(outcome),
    });
  }

  /** The quote executed by ledger row `transactionId`, if any. */
  findQuoteOfSwap(transactionId: string): Promise<SwapQuote | null> {
    return this.prisma.swapQuote.findUnique({ where: { transactionId } });
  }
}

/** Where a quote goes when its swap settles. */
export type QuoteOutcome = 'executed' | 'failed' | 'needs_review';

function quoteOutcome(outcome: QuoteOutcome): Prisma.SwapQuoteUpdateInput {
  return outcome === 'executed' ? { status: 'executed', executedAt: new Date() } : { status: outcome };
}
