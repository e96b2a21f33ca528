import { pipeline, Readable } from 'node:stream';
import { Injectable } from '@nestjs/common';
import { recordAuditedChange } from '../audit/audit-chain';
import { ownerRestriction } from '../audit/ownership';
import { NotFoundError, ValidationError } from '../common/errors';
import { tryFormatMajor } from '../common/money';
import { decodeCursor, toPage } from '../common/pagination';
import { ReconciliationService } from '../reconciliation/reconciliation.service';
import { LedgerService } from './ledger.service';
import type { SortOrder, TransactionFilter } from './transaction-query';
import {
  DEFAULT_TRANSACTION_PAGE,
  ExportTransactionsQueryDto,
  ListTransactionsQueryDto,
  ResolveTransactionDto,
  TransactionDetailDto,
  TransactionFilterDto,
  TransactionPageDto,
  TransactionSummaryDto,
  TransactionSummaryQueryDto,
} from './transaction.dto';
import { toTransactionDetailDto, toTransactionDto } from './transaction.mapper';
import { coalesce, csvWriter, toCsvRecords } from './transactions-csv';
import { TransactionsRepository } from './transactions.repository';

/** The validated query → the repository's typed filter (ISO strings → Date, minor-unit digits → bigint). */
export function toFilter(query: TransactionFilterDto): TransactionFilter {
  const instant = (value: string | undefined, field: string): Date | undefined => {
    if (value === undefined) return undefined;
    const date = new Date(value);
    if (Number.isNaN(date.getTime()))
      throw new ValidationError([{ field, message: `${field} must be a valid ISO 8601 date` }]);
    return date;
  };
  return {
    kind: query.kind,
    status: query.status,
    direction: query.direction,
    currency: query.currency,
    customerId: query.customerId,
    cardId: query.cardId,
    beneficiaryId: query.beneficiaryId,
    reference: query.reference,
    from: instant(query.from, 'from'),
    to: instant(query.to, 'to'),
    amountMin: query.amountMin === undefined ? undefined : BigInt(query.amountMin),
    amountMax: query.amountMax === undefined ? undefined : BigInt(query.amountMax),
  };
}

/**
 * `toFilter(query)` limited, under the ownership rule (OWNERSHIP=client, audit/ownership.ts), to the
 * rows the current request's client created (`created_by`); as is otherwise.
 */
function ownFilter(query: TransactionFilterDto): TransactionFilter {
  const createdBy = ownerRestriction();
  return createdBy === undefined ? toFilter(query) : { ...toFilter(query), createdBy };
}

/**
 * The finance view of the ledger (scope `transactions:read`): filtered keyset lists, one
 * transaction with its status history (optionally reconciled with the provider first), totals
 * per currency × kind × status, and a streamed CSV export. It reads only; the writes it can cause
 * are `refresh`, which goes through ReconciliationService → LedgerService, and `resolve`.
 * Under OWNERSHIP=client every read and `resolve` see only the rows the key's client created
 * (another client's row is a 404, as if absent; lists, totals and exports leave it out).
 */
@Injectable()
export class TransactionsService {
  constructor(
    private readonly repository: TransactionsRepository,
    private readonly reconciliation: ReconciliationService,
    private readonly ledger: LedgerService,
  ) {}

  /**
   * One page of the ledger, newest first unless `order=asc`, `limit` (1..200, default 50) rows.
   * @throws ValidationError (400) for a bad cursor.
   */
  async list(query: ListTransactionsQueryDto): Promise<TransactionPageDto> {
    const limit = query.limit ?? DEFAULT_TRANSACTION_PAGE;
    const order: SortOrder = query.order ?? 'desc';
    const rows = await this.repository.list(
      ownFilter(query),
      order,
      query.cursor === undefined ? undefined : decodeCursor(query.cursor),
      limit,
    );
    return toPage(rows, limit, toTransactionDto);
  }

  /**
   * The local record with its status history. With `refresh`, the provider is asked first
   * (GET /transactions/{id}, docs/provider.md#transaction-lookup) and a forward move is applied with
   * source `reconciliation`; a row without a provider id (its call was never answered) is settled
   * when past SETTLEMENT_DEADLINE (ReconciliationService.settleUnanswered), else shown as it is.
   * @throws NotFoundError (404, also another client's row under OWNERSHIP=client); ProviderError
   * (502/504) when `refresh` cannot reach the provider.
   */
  async get(id: string, refresh = false): Promise<TransactionDetailDto> {
    let row = await this.repository.getWithHistory(id, ownerRestriction());
    if (!row) throw new NotFoundError('Transaction', id);
    if (refresh) {
      const outcome = await this.reconciliation.reconcileTransaction({
        id: row.id,
        kind: row.kind,
        providerId: row.providerId,
        status: row.status,
        cardId: row.cardId,
        createdAt: row.createdAt,
        approvedAt: row.approvedAt,
        reference: row.reference,
        amount: row.amount,
        currency: row.currency,
      });
      if (outcome === 'applied') row = (await this.repository.getWithHistory(id)) ?? row;
    }
    return toTransactionDetailDto(row);
  }

  /**
   * Resolves a `needs_review` row by hand → `success` or `failed`, source `manual`, with `actorId`
   * (the API client) on the history entry and `evidence` in its payload; a `failed` row gets the
   * reason `resolved_failed`. The owning module follows in the same database transaction
   * (LedgerService.registerManualMoveEffect): a swap's quote becomes `executed` or `failed`, a card
   * movement resolved `success` changes the card's balance. Nothing is sent to the provider: the
   * decision records what the provider shows. The request's audit event (`transaction.resolve`) is
   * written in the same database transaction.
   * @throws NotFoundError (404, also another client's row under OWNERSHIP=client);
   * InvalidStateTransitionError (409) unless the row is `needs_review`.
   */
  async resolve(id: string, input: ResolveTransactionDto, actorId: string): Promise<TransactionDetailDto> {
    const owner = ownerRestriction();
    if (owner !== undefined && !(await this.repository.getWithHistory(id, owner))) {
      throw new NotFoundError('Transaction', id);
    }
    await this.ledger.withTransaction(async (tx) => {
      const { transaction } = await this.ledger.transition(id, input.status, 'manual', {
        tx,
        strict: true,
        actorId,
        payload: { evidence: input.evidence },
        patch: input.status === 'failed' ? { failureReason: 'resolved_failed' } : undefined,
      });
      // The owning module follows (a swap's quote, a card's balance), in this database transaction.
      await this.ledger.applyManualMoveEffect(tx, transaction, 'needs_review');
      await recordAuditedChange(tx, id, { status: input.status });
    });
    return this.get(id);
  }

  /**
   * Count, amount and fee sums per currency × kind × status (minor units as exact strings, plus major
   * units), and the net per currency of the succeeded rows: money in − money out − fees, a swap's
   * target amount counted as money in of its target currency (netStatement, transaction-query.ts).
   */
  async summary(query: TransactionSummaryQueryDto): Promise<TransactionSummaryDto> {
    const filter = ownFilter(query);
    const [rows, net] = await Promise.all([this.repository.summary(filter), this.repository.net(filter)]);
    const major = (minor: bigint, currency: string) => tryFormatMajor(minor, currency) ?? '';
    return {
      from: filter.from?.toISOString() ?? null,
      to: filter.to?.toISOString() ?? null,
      totals: rows.map((row) => ({
        currency: row.currency,
        kind: row.kind,
        status: row.status,
        count: row.count,
        amount: row.amount,
        amountDecimal: tryFormatMajor(BigInt(row.amount), row.currency) ?? '',
        fee: row.fee,
        feeDecimal: tryFormatMajor(BigInt(row.fee), row.currency) ?? '',
      })),
      net: net.map((row) => {
        const [moneyIn, moneyOut, fees] = [BigInt(row.moneyIn), BigInt(row.moneyOut), BigInt(row.fees)];
        const value = moneyIn - moneyOut - fees;
        return {
          currency: row.currency,
          moneyIn: row.moneyIn,
          moneyInDecimal: major(moneyIn, row.currency),
          moneyOut: row.moneyOut,
          moneyOutDecimal: major(moneyOut, row.currency),
          fees: row.fees,
          feesDecimal: major(fees, row.currency),
          net: value.toString(),
          netDecimal: major(value, row.currency),
        };
      }),
    };
  }

  /**
   * The CSV export: rows read through a database cursor → CSV records → text, joined with
   * `stream.pipeline` so that a slow client slows the cursor (backpressure) and an error or a
   * hang-up anywhere tears every stage down and returns the connection.
   */
  async export(query: ExportTransactionsQueryDto): Promise<{ filename: string; body: Readable }> {
    const rows = await this.repository.streamRows(ownFilter(query), query.order ?? 'desc');
    const body = pipeline(rows, toCsvRecords(), csvWriter(), coalesce(), () => {
      /* errors surface on `body` (the HTTP layer aborts the response); cleanup is the repository's */
    });
    return { filename: `transactions-${fileTimestamp(new Date())}.csv`, body };
  }
}

/**
 * `at` as an ISO 8601 basic-format UTC time to the second, for file names: `20261128T002416Z`.
 * The extended format (`2026-11-28T00:24:16.540Z`) has colons, which Windows refuses in a file name.
 */
export function fileTimestamp(at: Date): string {
  return at
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace(/[-:]/g, '');
}
