/**
 * Ledger rows (as node-postgres returns them, transaction-query.ts) → the API's shapes. No Nest
 * here: the raw baseline of `npm run bench:finance` serves the same mapping.
 */
import { minorToJson, parseRate, tryFormatMajor } from '../common/money';
import type { TransactionRow } from './transaction-query';
import type { StatusChangeDto, TransactionDetailDto, TransactionDto } from './transaction.dto';
import type { TransactionWithHistoryRow } from './transactions.repository';

/**
 * A ledger row as the API answers it: minor units as JSON numbers (exact integer strings beyond
 * 2^53), their major-unit decimal strings where the currency's digits are known, ISO 8601 UTC times.
 */
export function toTransactionDto(row: TransactionRow): TransactionDto {
  const amount = BigInt(row.amount);
  const fee = BigInt(row.fee);
  const counterAmount = row.counter_amount === null ? null : BigInt(row.counter_amount);
  const amountDecimal = tryFormatMajor(amount, row.currency);
  const feeDecimal = tryFormatMajor(fee, row.currency);
  const counterAmountDecimal =
    counterAmount === null || row.counter_currency === null
      ? undefined
      : tryFormatMajor(counterAmount, row.counter_currency);
  return {
    id: row.id,
    kind: row.kind,
    direction: row.direction,
    status: row.status,
    amount: minorToJson(amount),
    fee: minorToJson(fee),
    currency: row.currency,
    ...(amountDecimal === undefined ? {} : { amountDecimal }),
    ...(feeDecimal === undefined ? {} : { feeDecimal }),
    counterAmount: counterAmount === null ? null : minorToJson(counterAmount),
    counterCurrency: row.counter_currency,
    ...(counterAmountDecimal === undefined ? {} : { counterAmountDecimal }),
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
      actorId: change.actorId,
    })),
  };
}
