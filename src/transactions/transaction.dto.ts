import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsISO8601,
  IsString,
  IsUUID,
  Matches,
  Max,
  MaxLength,
  Min,
  registerDecorator,
  ValidationArguments,
  ValidationOptions,
} from 'class-validator';
import { ApiMinorUnits } from '../common/api-money';
import { lower, trim, upper, OptionalNonNull } from '../common/validation';
import {
  StatusChangeSource,
  TransactionDirection,
  TransactionKind,
  TransactionStatus,
} from '../generated/prisma/enums';

/** Largest page of GET /v1/transactions (the finance issue: `limit` ≤ 200). */
export const MAX_TRANSACTION_PAGE = 200;
export const DEFAULT_TRANSACTION_PAGE = 50;

const KINDS = Object.values(TransactionKind);
const STATUSES = Object.values(TransactionStatus);
const DIRECTIONS = Object.values(TransactionDirection);
const SOURCES = Object.values(StatusChangeSource);

/** A minor-unit amount in a query string: digits only (kept as a string, parsed to bigint by the service). */
const MINOR_UNITS = /^\d{1,18}$/;
/** ISO 8601 date (`2026-11-01`) or date-time with a zone (`2026-11-01T00:00:00Z`, `…+01:00`). */
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?:Z|[+-]\d{2}:\d{2}))?$/;

/**
 * Cross-field check: this property (the upper bound) must not be below `lowerField` when both are
 * given. Compares ISO instants as times and minor-unit digit strings as integers.
 */
function NotBelow(lowerField: string, kind: 'instant' | 'integer', options?: ValidationOptions) {
  return (target: object, propertyName: string) =>
    registerDecorator({
      name: 'notBelow',
      target: target.constructor,
      propertyName,
      constraints: [lowerField],
      options: {
        message: (args: ValidationArguments) => `${args.property} must not be before ${lowerField}`,
        ...options,
      },
      validator: {
        validate(value: unknown, args: ValidationArguments) {
          const low = (args.object as Record<string, unknown>)[lowerField];
          if (typeof value !== 'string' || typeof low !== 'string') return true; // the field's own rules report it
          if (kind === 'integer') {
            if (!MINOR_UNITS.test(value) || !MINOR_UNITS.test(low)) return true;
            return BigInt(value) >= BigInt(low);
          }
          const [a, b] = [Date.parse(low), Date.parse(value)];
          return Number.isNaN(a) || Number.isNaN(b) || b >= a;
        },
      },
    });
}

/**
 * Filters shared by the list, the summary and the CSV export of the ledger. Every given filter
 * must match (AND). Amounts are minor units of the row's own currency.
 */
export class TransactionFilterDto {
  @ApiPropertyOptional({ enum: KINDS, enumName: 'TransactionKind', description: 'Kind of money movement.' })
  @OptionalNonNull()
  @Transform(lower)
  @IsIn(KINDS, { message: `kind must be one of: ${KINDS.join(', ')}` })
  kind?: TransactionKind;

  @ApiPropertyOptional({ enum: STATUSES, enumName: 'TransactionStatus', description: 'Ledger status.' })
  @OptionalNonNull()
  @Transform(lower)
  @IsIn(STATUSES, { message: `status must be one of: ${STATUSES.join(', ')}` })
  status?: TransactionStatus;

  @ApiPropertyOptional({
    enum: DIRECTIONS,
    enumName: 'TransactionDirection',
    description: 'credit (money in) or debit (money out).',
  })
  @OptionalNonNull()
  @Transform(lower)
  @IsIn(DIRECTIONS, { message: `direction must be one of: ${DIRECTIONS.join(', ')}` })
  direction?: TransactionDirection;

  @ApiPropertyOptional({
    example: 'USD',
    description: 'Currency code of `amount` (case-insensitive; stored upper-case).',
  })
  @OptionalNonNull()
  @Transform(upper)
  @IsString()
  @Matches(/^[A-Z]{3,5}$/, { message: 'currency must be a currency code such as USD' })
  currency?: string;

  @ApiPropertyOptional({ format: 'uuid', description: 'Gateway id of the customer.' })
  @OptionalNonNull()
  @IsUUID('all', { message: 'customerId must be a UUID' })
  customerId?: string;

  @ApiPropertyOptional({ format: 'uuid', description: 'Gateway id of the card (card top-ups, withdrawals, spends).' })
  @OptionalNonNull()
  @IsUUID('all', { message: 'cardId must be a UUID' })
  cardId?: string;

  @ApiPropertyOptional({ format: 'uuid', description: 'Gateway id of the beneficiary (payouts).' })
  @OptionalNonNull()
  @IsUUID('all', { message: 'beneficiaryId must be a UUID' })
  beneficiaryId?: string;

  @ApiPropertyOptional({ description: "The gateway's reference of the transaction (exact match)." })
  @OptionalNonNull()
  @Transform(trim)
  @IsString()
  @MaxLength(100)
  reference?: string;

  @ApiPropertyOptional({
    format: 'date-time',
    example: '2026-11-01T00:00:00Z',
    description: 'Created at or after this instant (inclusive). ISO 8601; a date alone means 00:00 UTC.',
  })
  @OptionalNonNull()
  @IsString()
  @Matches(ISO_INSTANT, { message: 'from must be an ISO 8601 date or date-time with a zone' })
  @IsISO8601({ strict: true }, { message: 'from must be a valid ISO 8601 date' })
  from?: string;

  @ApiPropertyOptional({
    format: 'date-time',
    example: '2026-12-01T00:00:00Z',
    description: 'Created before this instant (exclusive). ISO 8601; must not be before `from`.',
  })
  @OptionalNonNull()
  @IsString()
  @Matches(ISO_INSTANT, { message: 'to must be an ISO 8601 date or date-time with a zone' })
  @IsISO8601({ strict: true }, { message: 'to must be a valid ISO 8601 date' })
  @NotBelow('from', 'instant')
  to?: string;

  @ApiPropertyOptional({
    type: String,
    example: '10000',
    description: 'Smallest `amount`, in minor units (inclusive): 1 to 18 digits.',
  })
  @OptionalNonNull()
  @IsString()
  @Matches(MINOR_UNITS, { message: 'amountMin must be a non-negative integer of minor units' })
  amountMin?: string;

  @ApiPropertyOptional({
    type: String,
    example: '500000',
    description: 'Largest `amount`, in minor units (inclusive): 1 to 18 digits; must not be below `amountMin`.',
  })
  @OptionalNonNull()
  @IsString()
  @Matches(MINOR_UNITS, { message: 'amountMax must be a non-negative integer of minor units' })
  @NotBelow('amountMin', 'integer')
  amountMax?: string;
}

/** Sort order on (createdAt, id). */
export type TransactionOrder = 'asc' | 'desc';

/** Query of GET /v1/transactions/export: the filters and the order. */
export class ExportTransactionsQueryDto extends TransactionFilterDto {
  @ApiPropertyOptional({
    enum: ['desc', 'asc'],
    default: 'desc',
    description: 'desc = newest first (default), asc = oldest first; ties broken by id.',
  })
  @OptionalNonNull()
  @Transform(lower)
  @IsIn(['asc', 'desc'], { message: 'order must be asc or desc' })
  order?: TransactionOrder;
}

/** Query of GET /v1/transactions: the filters, the order and a keyset page. */
export class ListTransactionsQueryDto extends ExportTransactionsQueryDto {
  @ApiPropertyOptional({
    description: "Opaque cursor from a previous page's `nextCursor` (same filters and order).",
  })
  @OptionalNonNull()
  @IsString()
  @MaxLength(200)
  cursor?: string;

  @ApiPropertyOptional({ minimum: 1, maximum: MAX_TRANSACTION_PAGE, default: DEFAULT_TRANSACTION_PAGE })
  @OptionalNonNull()
  @Type(() => Number)
  @IsInt({ message: 'limit must be an integer' })
  @Min(1)
  @Max(MAX_TRANSACTION_PAGE)
  limit?: number;
}

/** Query of GET /v1/transactions/summary: the period (`from`, `to`) and the other filters. */
export class TransactionSummaryQueryDto extends TransactionFilterDto {}

/** Query of GET /v1/transactions/{id}. */
export class GetTransactionQueryDto {
  @ApiPropertyOptional({
    type: Boolean,
    description:
      'Look the transaction up at the provider first (GET /transactions/{id}) and apply any forward status move ' +
      '(source `reconciliation`).',
  })
  @OptionalNonNull()
  @Transform(({ value }: { value: unknown }) => (value === 'true' ? true : value === 'false' ? false : value))
  @IsBoolean({ message: 'refresh must be true or false' })
  refresh?: boolean;
}

/** One ledger row as the gateway answers it. Amounts are integers in minor units. */
export class TransactionDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ enum: KINDS, enumName: 'TransactionKind', example: 'payout' }) kind: TransactionKind;
  @ApiProperty({ enum: DIRECTIONS, enumName: 'TransactionDirection', example: 'debit' })
  direction: TransactionDirection;
  @ApiProperty({ enum: STATUSES, enumName: 'TransactionStatus', example: 'success' }) status: TransactionStatus;
  @ApiMinorUnits({
    orString: true,
    example: 150000,
    description: 'Minor units of `currency` (150000 USD = 1,500.00); an integer string beyond 2^53.',
  })
  amount: number | string;
  @ApiMinorUnits({
    orString: true,
    example: 1500,
    description: 'Fee in minor units of `currency`; an integer string beyond 2^53.',
  })
  fee: number | string;
  @ApiProperty({ example: 'USD' }) currency: string;
  @ApiPropertyOptional({
    example: '1500.00',
    description:
      "`amount` in major units, as a decimal string with the currency's digits (absent for a currency the gateway has no exponent for).",
  })
  amountDecimal?: string;
  @ApiPropertyOptional({
    example: '15.00',
    description: '`fee` in major units (decimal string), like `amountDecimal`.',
  })
  feeDecimal?: string;
  @ApiMinorUnits({
    orString: true,
    nullable: true,
    example: 19350000,
    description:
      'Minor units of `counterCurrency`: the payout destination amount or the swap target amount (integer string beyond 2^53).',
  })
  counterAmount: number | string | null;
  @ApiPropertyOptional({
    example: '193500.00',
    description: '`counterAmount` in major units of `counterCurrency` (decimal string), when its digits are known.',
  })
  counterAmountDecimal?: string;
  @ApiProperty({ type: String, nullable: true, example: 'KES' }) counterCurrency: string | null;
  @ApiProperty({ type: String, nullable: true, example: '129', description: 'Exchange rate (decimal string).' })
  exchangeRate: string | null;
  @ApiProperty({ type: String, nullable: true, format: 'uuid' }) customerId: string | null;
  @ApiProperty({ type: String, nullable: true, format: 'uuid' }) beneficiaryId: string | null;
  @ApiProperty({ type: String, nullable: true, format: 'uuid' }) cardId: string | null;
  @ApiProperty({ type: String, nullable: true, description: "The provider's id of the transaction." })
  providerId: string | null;
  @ApiProperty({ description: "The gateway's reference, sent to the provider." }) reference: string;
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty({ type: String, nullable: true }) failureReason: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
  @ApiProperty({ type: String, nullable: true, format: 'date-time', description: 'When a final status was reached.' })
  completedAt: string | null;
}

/** One status move of a transaction. */
export class StatusChangeDto {
  // Inline enum (no enumName): OpenAPI 3.0's `nullable` needs a `type` beside it, which a `$ref` cannot have.
  @ApiProperty({ type: String, enum: STATUSES, nullable: true, description: 'null for the first entry.' })
  from: TransactionStatus | null;
  @ApiProperty({ enum: STATUSES, enumName: 'TransactionStatus' }) to: TransactionStatus;
  @ApiProperty({
    enum: SOURCES,
    enumName: 'StatusChangeSource',
    description:
      'What moved it: api, webhook, reconciliation, or manual (a person, POST /v1/transactions/{id}/resolve).',
  })
  source: StatusChangeSource;
  @ApiProperty({ format: 'date-time' }) at: string;
  @ApiProperty({
    type: String,
    nullable: true,
    format: 'uuid',
    description: 'The API client that moved it (manual moves; api moves under an Idempotency-Key), else null.',
  })
  actorId: string | null;
  @ApiProperty({
    type: String,
    enum: ['approved', 'rejected'],
    nullable: true,
    description:
      'A maker-checker decision on a payout (POST /v1/payouts/{id}/approve or /reject, the decider as `actorId`), else null.',
  })
  decision: 'approved' | 'rejected' | null;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'invoice checked',
    description:
      "Why it moved, when a reason was given: a decision's `reason` as the decider wrote it, an expiry's or a " +
      "reconciliation's reason (e.g. `approval TTL lapsed (PAYOUT_APPROVAL_TTL)`); else null.",
  })
  reason: string | null;
}

/** A transaction with its status history, oldest move first. */
export class TransactionDetailDto extends TransactionDto {
  @ApiProperty({ type: [StatusChangeDto] }) statusHistory: StatusChangeDto[];
}

/** A page of transactions. */
export class TransactionPageDto {
  @ApiProperty({ type: [TransactionDto] }) data: TransactionDto[];
  @ApiProperty({ type: String, nullable: true, description: 'Cursor of the next page, null on the last page.' })
  nextCursor: string | null;
}

/** Totals of one (currency, kind, status) group. */
export class TransactionTotalDto {
  @ApiProperty({ example: 'USD' }) currency: string;
  @ApiProperty({ enum: KINDS, enumName: 'TransactionKind' }) kind: TransactionKind;
  @ApiProperty({ enum: STATUSES, enumName: 'TransactionStatus' }) status: TransactionStatus;
  @ApiProperty({ type: 'integer', minimum: 0, example: 42, description: 'Number of transactions.' }) count: number;
  @ApiProperty({
    example: '6300000',
    pattern: '^-?[0-9]+$',
    description: 'Sum of `amount`, minor units, as an integer string (exact).',
  })
  amount: string;
  @ApiProperty({ example: '63000.00', description: 'Sum of `amount` in major units (decimal string).' })
  amountDecimal: string;
  @ApiProperty({
    example: '63000',
    pattern: '^-?[0-9]+$',
    description: 'Sum of `fee`, minor units, as an integer string.',
  })
  fee: string;
  @ApiProperty({ example: '630.00', description: 'Sum of `fee` in major units (decimal string).' }) feeDecimal: string;
}

/**
 * The net of one currency over the succeeded transactions (`status = success`) that match the
 * filters: `net = moneyIn − moneyOut − fees`. Sums are exact minor-unit integer strings, with
 * major-unit decimal strings beside them ('' for a currency the gateway has no exponent for).
 */
export class NetFlowDto {
  @ApiProperty({ example: 'NGN' }) currency: string;
  @ApiProperty({
    example: '45000000',
    description:
      "Money in, minor units: the amounts of succeeded credits (collections, card withdrawals…) plus the target amount of every succeeded swap into this currency (a swap's `counterAmount`).",
  })
  moneyIn: string;
  @ApiProperty({ example: '450000.00', description: '`moneyIn` in major units (decimal string).' })
  moneyInDecimal: string;
  @ApiProperty({
    example: '0',
    description:
      'Money out, minor units: the amounts of succeeded debits (payouts, swaps from this currency, card top-ups…).',
  })
  moneyOut: string;
  @ApiProperty({ example: '0.00', description: '`moneyOut` in major units (decimal string).' })
  moneyOutDecimal: string;
  @ApiProperty({ example: '0', description: 'Fees of the succeeded transactions in this currency, minor units.' })
  fees: string;
  @ApiProperty({ example: '0.00', description: '`fees` in major units (decimal string).' })
  feesDecimal: string;
  @ApiProperty({
    example: '45000000',
    description: 'moneyIn − moneyOut − fees, minor units (negative when more went out).',
  })
  net: string;
  @ApiProperty({ example: '450000.00', description: '`net` in major units (decimal string, `-` when negative).' })
  netDecimal: string;
}

/** Totals per currency × kind × status over a period. */
export class TransactionSummaryDto {
  @ApiProperty({
    type: String,
    nullable: true,
    format: 'date-time',
    description: 'Start of the period (inclusive); null = no lower bound.',
  })
  from: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    format: 'date-time',
    description: 'End of the period (exclusive); null = no upper bound.',
  })
  to: string | null;
  @ApiProperty({ type: [TransactionTotalDto], description: 'Ordered by currency, kind, status.' })
  totals: TransactionTotalDto[];
  @ApiProperty({
    type: [NetFlowDto],
    description:
      'Net per currency over the succeeded transactions of the same filters (money in − money out − fees; a ' +
      "swap's target amount is money in of its target currency, with `currency` matching that target currency " +
      'and `direction` treating it as a credit). Ordered by currency; a currency with nothing succeeded is absent.',
  })
  net: NetFlowDto[];
}

/** Longest `evidence` text a resolution keeps (characters). */
export const MAX_EVIDENCE_LENGTH = 2000;

/**
 * Body of POST /v1/transactions/{id}/resolve: a person's decision on a `needs_review` row, taken
 * from the provider's own records (dashboard, statement, support answer).
 */
export class ResolveTransactionDto {
  @ApiProperty({
    enum: ['success', 'failed'],
    description: 'What the provider shows happened: `success` (the money moved) or `failed` (it did not).',
  })
  @IsIn(['success', 'failed'], { message: 'status must be success or failed' })
  status: 'success' | 'failed';

  @ApiProperty({
    minLength: 1,
    maxLength: MAX_EVIDENCE_LENGTH,
    example: 'Provider dashboard: swap 9f1c… completed 2026-11-25 03:12 UTC, 10.00 USD → 15,200.00 NGN',
    description: `The provider's evidence for the decision, as text (1-${MAX_EVIDENCE_LENGTH} characters); kept in the status history.`,
  })
  @Transform(trim)
  @IsString()
  @Matches(/\S/, { message: 'evidence must not be empty' })
  @MaxLength(MAX_EVIDENCE_LENGTH)
  evidence: string;
}
