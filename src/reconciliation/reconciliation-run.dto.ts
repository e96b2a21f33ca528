import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayUnique, IsArray, IsDateString, IsIn } from 'class-validator';
import { ApiMinorUnits } from '../common/api-money';
import { PageMetaDto, PageQueryDto } from '../common/pagination';
import { OptionalNonNull } from '../common/validation';

/** Ledger kinds a report can compare: those the provider's GET /transactions/{id} answers for. */
export const RECONCILED_KINDS = ['payout', 'collection', 'swap'] as const;

/** Item classes of a report, in the order the totals list them. */
export const RECONCILIATION_CLASSES = [
  'matched',
  'status_mismatch',
  'amount_mismatch',
  'missing_at_provider',
  'unknown_locally',
] as const;
export type ReconciliationClass = (typeof RECONCILIATION_CLASSES)[number];

/** The longest period one run covers, in days (the service refuses a longer one with 400 on `to`). */
export const MAX_RUN_DAYS = 32;

/** Body of POST /v1/reconciliation-runs. */
export class CreateReconciliationRunDto {
  @ApiProperty({
    format: 'date-time',
    example: '2026-11-24T00:00:00Z',
    description: 'Start of the period (inclusive), ISO 8601; ledger rows by createdAt, callbacks by receipt.',
  })
  @IsDateString({ strict: true })
  from: string;

  @ApiProperty({
    format: 'date-time',
    example: '2026-11-25T00:00:00Z',
    description: `End of the period (exclusive): after \`from\`, and a run covers at most ${MAX_RUN_DAYS} days.`,
  })
  @IsDateString({ strict: true })
  to: string;

  @ApiPropertyOptional({
    enum: RECONCILED_KINDS,
    isArray: true,
    description: 'Ledger kinds to compare (default all three). Card movements are not known to the lookup.',
  })
  @OptionalNonNull()
  @IsArray()
  @ArrayUnique()
  @ArrayMaxSize(RECONCILED_KINDS.length)
  @IsIn(RECONCILED_KINDS, { each: true })
  kinds?: Array<(typeof RECONCILED_KINDS)[number]>;
}

/** Items per class. */
export class ReconciliationTotalsDto {
  @ApiProperty({ type: 'integer', minimum: 0 }) matched: number;
  @ApiProperty({ type: 'integer', minimum: 0, description: 'Status differs (lower-case on both sides).' })
  status_mismatch: number;
  @ApiProperty({ type: 'integer', minimum: 0, description: 'Amount, fee or currency differs (minor units).' })
  amount_mismatch: number;
  @ApiProperty({ type: 'integer', minimum: 0, description: 'The provider answers 404 for the provider id.' })
  missing_at_provider: number;
  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description: 'Provider callbacks of the period the gateway could not match.',
  })
  unknown_locally: number;
}

/** A reconciliation report (run) with its progress. */
export class ReconciliationRunDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'date-time' }) from: string;
  @ApiProperty({ format: 'date-time' }) to: string;
  @ApiProperty({ enum: RECONCILED_KINDS, isArray: true }) kinds: string[];
  @ApiProperty({ enum: ['queued', 'running', 'completed', 'failed'] }) status: string;
  @ApiProperty({
    type: String,
    nullable: true,
    format: 'uuid',
    description: 'The API client that asked; null for the nightly run.',
  })
  requestedBy: string | null;
  @ApiProperty({ type: 'integer', minimum: 0, description: 'Ledger rows to compare (counted when the run starts).' })
  total: number;
  @ApiProperty({ type: 'integer', minimum: 0, description: 'Ledger rows compared so far.' }) processed: number;
  @ApiProperty({ type: ReconciliationTotalsDto, description: 'Items per class (so far, while running).' })
  totals: ReconciliationTotalsDto;
  @ApiProperty({ type: String, nullable: true }) error: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ type: String, nullable: true, format: 'date-time' }) startedAt: string | null;
  @ApiProperty({ type: String, nullable: true, format: 'date-time' }) completedAt: string | null;
}

export class ReconciliationRunPageDto extends PageMetaDto {
  @ApiProperty({ type: [ReconciliationRunDto] }) data: ReconciliationRunDto[];
}

/** One compared ledger row, or one unmatched provider callback. Amounts in minor units. */
export class ReconciliationItemDto {
  @ApiProperty({ example: '42', pattern: '^[0-9]+$', description: 'Sequence number of the item (not a UUID).' })
  id: string;
  @ApiProperty({ enum: RECONCILIATION_CLASSES }) class: string;
  @ApiProperty({ type: String, nullable: true, format: 'uuid' }) transactionId: string | null;
  @ApiProperty({ type: String, nullable: true }) providerId: string | null;
  @ApiProperty({ type: String, nullable: true }) kind: string | null;
  @ApiProperty({ type: String, nullable: true }) localStatus: string | null;
  @ApiProperty({ type: String, nullable: true }) providerStatus: string | null;
  @ApiMinorUnits({ nullable: true, orString: true, description: 'Minor units of `currency`.' }) localAmount:
    number | string | null;
  @ApiMinorUnits({ nullable: true, orString: true, description: 'Minor units of `providerCurrency`.' })
  providerAmount: number | string | null;
  @ApiMinorUnits({ nullable: true, orString: true, description: 'Fee, minor units of `currency`.' }) localFee:
    number | string | null;
  @ApiMinorUnits({ nullable: true, orString: true, description: 'Fee, minor units of `providerCurrency`.' })
  providerFee: number | string | null;
  @ApiProperty({ type: String, nullable: true }) currency: string | null;
  @ApiProperty({ type: String, nullable: true }) providerCurrency: string | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description: '`differences` (fields that differ), the provider error, or the callback (unknown_locally).',
  })
  details: Record<string, unknown> | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
}

export class ReconciliationItemPageDto extends PageMetaDto {
  @ApiProperty({ type: [ReconciliationItemDto] }) data: ReconciliationItemDto[];
}

/** Query of GET /v1/reconciliation-runs/{id}/items. */
export class ListReconciliationItemsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: RECONCILIATION_CLASSES })
  @OptionalNonNull()
  @IsIn(RECONCILIATION_CLASSES)
  class?: ReconciliationClass;
}

/** Query of GET /v1/reconciliation-runs. */
export class ListReconciliationRunsQueryDto extends PageQueryDto {}
