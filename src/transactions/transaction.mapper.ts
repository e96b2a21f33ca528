/**
 * Ledger rows (as node-postgres returns them, transaction-query.ts) → the API's shapes. No Nest
 * here: the raw baseline of `npm run bench:finance` serves the same mapping.
 */
import { CURRENCY_EXPONENTS, formatMajor, minorToNumber, parseRate } from '../common/money';
import type { StatusChangeDto, TransactionDetailDto, TransactionDto } from './transaction.dto';
import type { TransactionRow } from './transaction-query';
import type { TransactionWithHistoryRow } from './transactions.repository';

/** Major-unit decimal string, or undefined for a currency without a known exponent. */
export function majorOf(minor: bigint, currency: string): string | undefined {
  return Object.prototype.hasOwnProperty.call(CURRENCY_EXPONENTS, currency) ? formatMajor(minor, currency) : undefined;
}

/** A ledger row as the API answers it: minor units as JSON numbers, timestamps ISO 8601 UTC. */
export function toTransactionDto(row: TransactionRow): TransactionDto {
  const amount = BigInt(row.amount);
  const amountDecimal = majorOf(amount, row.currency);
  return {
    id: row.id,
    kind: row.kind,
    direction: row.direction,
    status: row.status,
    amount: minorToNumber(amount),
    fee: minorToNumber(BigInt(row.fee)),
    currency: row.currency,
    ...(amountDecimal === undefined ? {} : { amountDecimal }),
    counterAmount: row.counter_amount === null ? null : minorToNumber(BigInt(row.counter_amount)),
    counterCurrency: row.counter_currency,
    exchangeRate: row.exchange_rate === null ? null : parseRate(row.exchange_rate),
    customerId: row.customer_id,
    beneficiaryId: row.beneficiary_id,
    cardId: row.card_id,
    providerId: row.provider_id,
    reference: row.reference,
    description: row.description,
    failureReason: row.failure_reason,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    completedAt: row.completed_at ? row.completed_at.toISOString() : null,
  };
}

/** A row of GET_WITH_HISTORY → the detail answer, history oldest first with ISO times. */
export function toTransactionDetailDto(row: TransactionWithHistoryRow): TransactionDetailDto {
  return {
    ...toTransactionDto(row),
    statusHistory: row.status_history.map((change): StatusChangeDto => ({
      from: change.from,
      to: change.to,
      source: change.source,
      at: new Date(change.at).toISOString(),
    })),
  };
}
