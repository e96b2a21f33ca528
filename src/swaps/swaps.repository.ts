import { Injectable } from '@nestjs/common';
import { recordAuditedChange } from '../audit/audit-chain';
import { PrismaService } from '../database/prisma.service';
import type { Prisma, SwapQuote, Transaction } from '../generated/prisma/client';

type Tx = Prisma.TransactionClient;

/** Database access for swap quotes and the swaps (ledger rows of kind `swap`) they executed. */
@Injectable()
export class SwapsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Runs `work` in one database transaction; the repository methods given its `tx` take part in it. */
  withTransaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(work);
  }

  /** Stores a quote with the request's audit event (`swap_quote.create`), in one transaction. */
  createQuote(data: Prisma.SwapQuoteUncheckedCreateInput): Promise<SwapQuote> {
    return this.prisma.$transaction(async (tx) => {
      const row = await tx.swapQuote.create({ data });
      await recordAuditedChange(tx, row.id);
      return row;
    });
  }

  findQuote(id: string): Promise<SwapQuote | null> {
    return this.prisma.swapQuote.findUnique({ where: { id } });
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
