import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  IsISO31661Alpha2,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsObject,
  IsString,
  IsUUID,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { ApiMinorUnits } from '../common/api-money';
import { CURRENCY_EXPONENTS } from '../common/money';
import { PageMetaDto, PageQueryDto } from '../common/pagination';
import { trim, upper, OptionalNonNull } from '../common/validation';
import type { TransactionStatus } from '../generated/prisma/client';
import { collectionCurrenciesInWords, collectionLimitsInWords } from './collection-limits';

/** Statuses a collection's ledger row can have (src/transactions/transaction-state.ts, kind `collection`). */
export const COLLECTION_STATUSES: TransactionStatus[] = [
  'created',
  'unknown',
  'processing',
  'success',
  'failed',
  'expired',
  'reversed',
];

/** Who pays, and where: the provider's `payload` of collections/initialize. */
export class CollectionPayerDto {
  @ApiProperty({
    example: 'wema',
    maxLength: 100,
    description: "The bank to issue the account detail at (sent as the provider's `payload.type`).",
  })
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  type: string;

  @ApiProperty({
    example: 'Ada Obi',
    maxLength: 200,
    description: 'Name on the account detail (sent as `payload.accountName`).',
  })
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  accountName: string;
}

/** Body of POST /v1/collections. Checked against the documented country limits before the provider is called. */
export class CreateCollectionDto {
  @ApiProperty({ format: 'uuid', description: 'The customer who pays.' })
  @IsUUID()
  customerId: string;

  @ApiProperty({ example: 'NG', description: 'ISO 3166-1 alpha-2 country code. NG, KE and UG have documented limits.' })
  @Transform(upper)
  @IsString()
  @IsISO31661Alpha2({ message: 'country must be an ISO 3166-1 alpha-2 country code' })
  country: string;

  @ApiProperty({
    example: 'NGN',
    description: `Upper-case currency code. Where the country has documented limits, its currency (${collectionCurrenciesInWords()}): another is refused with 422 \`business_rule_failed\`.`,
  })
  @Transform(upper)
  @IsString()
  @IsIn(Object.keys(CURRENCY_EXPONENTS), { message: 'currency must be a supported currency code' })
  currency: string;

  @ApiProperty({
    example: 6500000,
    description:
      `Integer amount in MINOR units of \`currency\` (6500000 = 65,000.00 NGN). Limits per country: ${collectionLimitsInWords()}; ` +
      'outside them 422 `business_rule_failed`. Other countries: the provider decides.',
  })
  @IsInt()
  @Min(1)
  @Max(Number.MAX_SAFE_INTEGER)
  amount: number;

  @ApiProperty({
    example: 'Order 1042',
    maxLength: 200,
    description: 'Shown to the provider and kept on the ledger row.',
  })
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  description: string;

  @ApiProperty({ type: CollectionPayerDto, description: 'Bank and account name of the account detail to issue.' })
  @IsObject()
  @ValidateNested()
  @Type(() => CollectionPayerDto)
  payer: CollectionPayerDto;
}

/** Query of GET /v1/collections. */
export class ListCollectionsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ format: 'uuid', description: "Only this customer's collections." })
  @OptionalNonNull()
  @IsUUID()
  customerId?: string;

  @ApiPropertyOptional({
    enum: COLLECTION_STATUSES,
    example: 'processing',
    description: 'Only collections in this status.',
  })
  @OptionalNonNull()
  @IsIn(COLLECTION_STATUSES, { message: `status must be one of ${COLLECTION_STATUSES.join(', ')}` })
  status?: string;
}

/** A collection as the gateway answers it: the account detail to pay into and its ledger state. Amounts are integers in minor units. */
export class CollectionDto {
  @ApiProperty({ format: 'uuid', description: "The gateway's collection id." }) id: string;
  @ApiProperty({ format: 'uuid', description: 'The ledger row of this collection (GET /v1/transactions/{id}).' })
  transactionId: string;
  @ApiProperty({
    enum: COLLECTION_STATUSES,
    example: 'processing',
    description:
      '`processing` once the account detail is issued; `unknown` when the provider did not answer (reconciliation decides); `failed` when it refused.',
  })
  status: string;
  @ApiProperty({ format: 'uuid' }) customerId: string;
  @ApiProperty({ example: 'NG' }) country: string;
  @ApiMinorUnits({ example: 6500000, description: 'Amount to pay, in minor units of `currency`.' }) amount: number;
  @ApiProperty({ example: 'NGN' }) currency: string;
  @ApiMinorUnits({
    example: 97500,
    description: "The provider's fee, in minor units of `currency` (0 until the provider answers).",
  })
  fee: number;
  @ApiProperty({
    type: String,
    nullable: true,
    example: '0123456789',
    description: 'Account number to pay into (null until the provider answers).',
  })
  accountNumber: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'wema', description: 'Bank of the account detail.' }) bankName:
    string | null;
  @ApiProperty({ type: String, nullable: true, example: 'Ada Obi', description: 'Name on the account detail.' })
  accountName: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    format: 'date-time',
    description: 'The account detail stops being valid at this moment (provider `expiryDate`).',
  })
  expiresAt: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'Order 1042' }) description: string | null;
  @ApiProperty({
    example: 'wg-collection-3f0c9a…',
    description: 'Reference sent to the provider, unique per collection.',
  })
  reference: string;
  @ApiProperty({ type: String, nullable: true, description: "The provider's collection id." }) providerId:
    string | null;
  @ApiProperty({ type: String, nullable: true, description: 'Why the collection failed or is unknown.' })
  failureReason: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
  @ApiProperty({
    type: String,
    nullable: true,
    format: 'date-time',
    description: 'When the collection reached a final status.',
  })
  completedAt: string | null;
}

export class CollectionPageDto extends PageMetaDto {
  @ApiProperty({ type: [CollectionDto] }) data: CollectionDto[];
}
