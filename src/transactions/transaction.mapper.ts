/**
 * The one mapper of a ledger row (LedgerRow, ledger-row.ts) to the shapes the gateway shows: the
 * finance view (TransactionDto), and the views of the modules whose rows they are — payouts, swaps,
 * card movements — and the `data` of a ledger gateway event. The fields every view shows alike are
 * mapped the same way (`commonFields`); each view adds its own (names and units of its API) and
 * leaves out what it does not show. The hot views (finance rows, payouts, card movements) write
 * commonFields' fields out in its order instead of spreading it: one object per row, not two
 * (measured with `npm run bench:overhead`: −20–35 % of the gateway's CPU on a card movements page).
 * A field added to commonFields goes into those three too. No Nest here: the raw baseline of `npm run bench:finance` serves the same
 * mapping.
 */
import type { CardTransactionDto } from '../cards/card.dto';
import { minorToJson, minorToNumber, parseRate, tryFormatMajor } from '../common/money';
import { isoTime } from '../common/pagination';
import type { TransactionEventData } from '../outbound/gateway-events';
import type { PayoutDto } from '../payouts/payout.dto';
import type { SwapDto } from '../swaps/swap.dto';
import { type CardMovementRow, type LedgerPageRow, type LedgerRow, providerCallsStartedAt } from './ledger-row';
import type { StatusChangeDto, TransactionDetailDto, TransactionDto } from './transaction.dto';
import type { TransactionWithHistoryRow } from './transactions.repository';

/** The provider's rate window between payout initialize and finalize (docs/provider.md#payouts: ~4 minutes). */
export const PAYOUT_RATE_WINDOW_MS = 4 * 60 * 1000;

/** The fields every view of a ledger row shows, the same way: ids, status, free text, ISO 8601 UTC times. */
function commonFields(row: LedgerRow) {
  return {
    id: row.id,
    status: row.status,
    reference: row.reference,
    providerId: row.providerId,
    failureReason: row.failureReason,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    completedAt: row.completedAt?.toISOString() ?? null,
  };
}

/** The row's exchange rate as an exact canonical decimal string (money.ts parseRate), or null. */
function rateOf(row: Pick<LedgerRow, 'exchangeRate'>): string | null {
  return row.exchangeRate === null ? null : parseRate(row.exchangeRate.toFixed());
}

/**
 * A ledger row as the finance API answers it: minor units as JSON numbers (exact integer strings
 * beyond 2^53), their major-unit decimal strings where the currency's digits are known, ISO 8601 UTC
 * times (a LedgerRow's Dates, or a page row's `isoTime` text as it is: LedgerPageRow).
 */
export function toTransactionDto(row: LedgerPageRow): TransactionDto {
  const amountDecimal = tryFormatMajor(row.amount, row.currency);
  const feeDecimal = tryFormatMajor(row.fee, row.currency);
  const counterAmountDecimal =
    row.counterAmount === null || row.counterCurrency === null
      ? undefined
      : tryFormatMajor(row.counterAmount, row.counterCurrency);
  // One typed object in the JSON's order (commonFields' first), no spread of intermediate objects
  // (a page maps 20–100 rows); an optional decimal that is not known is undefined, which JSON leaves out.
  const dto: TransactionDto = {
    id: row.id,
    status: row.status,
    reference: row.reference,
    providerId: row.providerId,
    failureReason: row.failureReason,
    createdAt: isoTime(row.createdAt),
    updatedAt: isoTime(row.updatedAt),
    completedAt: row.completedAt === null ? null : isoTime(row.completedAt),
    kind: row.kind,
    direction: row.direction,
    amount: minorToJson(row.amount),
    fee: minorToJson(row.fee),
    currency: row.currency,
    amountDecimal,
    feeDecimal,
    counterAmount: row.counterAmount === null ? null : minorToJson(row.counterAmount),
    counterCurrency: row.counterCurrency,
    counterAmountDecimal,
    exchangeRate: rateOf(row),
    customerId: row.customerId,
    beneficiaryId: row.beneficiaryId,
    cardId: row.cardId,
    description: row.description,
  };
  return dto;
}

/** A row of GET_WITH_HISTORY → the detail answer, history oldest first with ISO times. */
export function toTransactionDetailDto(row: TransactionWithHistoryRow): TransactionDetailDto {
  return {
    ...toTransactionDto(row),
    statusHistory: row.statusHistory.map((change): StatusChangeDto => ({
      from: change.from,
      to: change.to,
      source: change.source,
      at: new Date(change.at).toISOString(),
      actorId: change.actorId,
      decision: change.decision === 'approved' || change.decision === 'rejected' ? change.decision : null,
      reason: change.reason,
    })),
  };
}

/**
 * A payout (a row of kind `payout`) as /v1/payouts answers it: amounts as JSON numbers of minor
 * units, `rate`, the destination amount and currency as `payoutAmount`/`payoutCurrency`, and
 * `quoteExpiresAt` (once the provider has answered: PAYOUT_RATE_WINDOW_MS after the initialize was
 * sent — the payout's creation, or its approval for one held for approval: providerCallsStartedAt).
 * @throws ValidationError (400) for an amount beyond the largest safe JSON integer (money.ts minorToNumber).
 */
export function toPayoutDto(row: LedgerRow): PayoutDto {
  // commonFields' fields written out, in its order (the JSON's): one object, not two.
  return {
    id: row.id,
    status: row.status,
    reference: row.reference,
    providerId: row.providerId,
    failureReason: row.failureReason,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    completedAt: row.completedAt?.toISOString() ?? null,
    customerId: row.customerId as string,
    beneficiaryId: row.beneficiaryId as string,
    amount: minorToNumber(row.amount),
    currency: row.currency,
    fee: minorToNumber(row.fee),
    rate: rateOf(row),
    quoteExpiresAt: row.providerId
      ? new Date(providerCallsStartedAt(row).getTime() + PAYOUT_RATE_WINDOW_MS).toISOString()
      : null,
    payoutAmount: row.counterAmount === null ? null : minorToNumber(row.counterAmount),
    payoutCurrency: row.counterCurrency,
    description: row.description,
  };
}

/**
 * A swap (a row of kind `swap`) executing quote `quoteId`, as /v1/swaps answers it: the row's
 * currency and amount are the source (debited), its counter currency and amount the target.
 * @throws ValidationError (400) for an amount beyond the largest safe JSON integer.
 */
export function toSwapDto(row: LedgerRow, quoteId: string): SwapDto {
  return {
    ...commonFields(row),
    quoteId,
    sourceCurrency: row.currency,
    targetCurrency: row.counterCurrency as string,
    sourceAmount: minorToNumber(row.amount),
    targetAmount: row.counterAmount === null ? null : minorToNumber(row.counterAmount),
    fee: minorToNumber(row.fee),
    rate: rateOf(row),
  };
}

/**
 * A card movement (a row of kind card_topup, card_withdrawal or card_spend) as the cards API
 * answers it: the amount as a JSON number of minor units, the description as `narrative`.
 * @throws ValidationError (400) for an amount beyond the largest safe JSON integer.
 */
export function toCardMovementDto(row: CardMovementRow): CardTransactionDto {
  // commonFields' fields written out, in its order (the JSON's): one object per movement of a page, not two.
  return {
    id: row.id,
    status: row.status,
    reference: row.reference,
    providerId: row.providerId,
    failureReason: row.failureReason,
    createdAt: isoTime(row.createdAt),
    updatedAt: isoTime(row.updatedAt),
    completedAt: row.completedAt === null ? null : isoTime(row.completedAt),
    cardId: row.cardId as string,
    kind: row.kind,
    direction: row.direction,
    amount: minorToNumber(row.amount),
    currency: row.currency,
    narrative: row.description,
  };
}

/**
 * The `data` of a ledger gateway event (src/outbound/gateway-events.ts): the finance view's fields
 * an internal subscriber needs, as the finance view shows them (amounts as minor-unit JSON numbers,
 * exact strings beyond 2^53).
 */
export function toTransactionEventData(row: LedgerRow): TransactionEventData {
  const view = toTransactionDto(row);
  return {
    id: view.id,
    kind: view.kind,
    direction: view.direction,
    status: view.status,
    amount: view.amount,
    fee: view.fee,
    currency: view.currency,
    reference: view.reference,
    customerId: view.customerId,
    beneficiaryId: view.beneficiaryId,
    cardId: view.cardId,
    failureReason: view.failureReason,
    createdAt: view.createdAt,
    completedAt: view.completedAt,
  };
}
