import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsNotEmpty, IsString, IsUUID, Max, MaxLength, Min } from 'class-validator';
import { ApiMinorUnits } from '../common/api-money';
import { CURRENCIES } from '../common/money';
import { upper, OptionalNonNull } from '../common/validation';
import { int32AmountBound } from '../provider';

/** The largest payout, minor units of any currency: the provider's initialize `amount` is an int32. */
const PAYOUT_MAX_MINOR = int32AmountBound('initializePayout', CURRENCIES);

/** Body of POST /v1/payouts. */
export class CreatePayoutDto {
  @ApiProperty({ format: 'uuid' }) @IsUUID() customerId: string;
  @ApiProperty({ format: 'uuid', description: 'A beneficiary of this customer.' }) @IsUUID() beneficiaryId: string;

  @ApiProperty({
    format: 'int64',
    example: 150000,
    description: `Integer amount in minor units of sourceCurrency (150000 = 1,500.00 USD), at most ${PAYOUT_MAX_MINOR}: the provider's payout takes an int32.`,
  })
  @IsInt()
  @Min(1)
  @Max(PAYOUT_MAX_MINOR, {
    message: 'amount must be at most $constraint1 minor units: the provider takes an int32 amount',
  })
  amount: number;

  @ApiPropertyOptional({ example: 'USD', default: 'USD', description: 'Wallet currency debited.' })
  @OptionalNonNull()
  @Transform(upper)
  @IsString()
  @IsIn(CURRENCIES, { message: 'sourceCurrency must be a supported currency code' })
  sourceCurrency?: string;

  @ApiProperty({ example: 'Invoice 42' }) @IsString() @IsNotEmpty() @MaxLength(200) description: string;
}

/** Body of POST /v1/payouts/{id}/approve and /reject (optional). */
export class PayoutDecisionDto {
  @ApiPropertyOptional({
    example: 'Invoice checked against the contract',
    description: 'Why; kept in the status history (and as failureReason of a rejected payout).',
  })
  @OptionalNonNull()
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  reason?: string;
}

/** A payout as the gateway answers it. Amounts are integers in minor units. */
export class PayoutDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({
    enum: [
      'awaiting_approval',
      'created',
      'unknown',
      'initiated',
      'pending',
      'processing',
      'success',
      'failed',
      'expired',
      'reversed',
      'rejected',
      'needs_review',
    ],
    example: 'initiated',
  })
  status: string;
  @ApiProperty({ format: 'uuid' }) customerId: string;
  @ApiProperty({ format: 'uuid' }) beneficiaryId: string;
  @ApiMinorUnits({ example: 150000, description: 'Minor units of `currency`.' }) amount: number;
  @ApiProperty({ example: 'USD', description: 'Wallet currency debited.' }) currency: string;
  @ApiMinorUnits({ example: 1500, description: 'Fee in minor units of `currency`.' }) fee: number;
  @ApiProperty({ type: String, nullable: true, example: '1500.00', description: 'Exchange rate (decimal string).' })
  rate: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    format: 'date-time',
    description: 'Confirm before this moment: the provider’s rate window (~4 min) between initialize and finalize.',
  })
  quoteExpiresAt: string | null;
  @ApiMinorUnits({
    nullable: true,
    description: 'Amount paid to the destination, minor units of payoutCurrency (after confirm).',
  })
  payoutAmount: number | null;
  @ApiProperty({ type: String, nullable: true, example: 'NGN' }) payoutCurrency: string | null;
  @ApiProperty() reference: string;
  @ApiProperty({ type: String, nullable: true }) providerId: string | null;
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty({ type: String, nullable: true }) failureReason: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
  @ApiProperty({ type: String, nullable: true, format: 'date-time' }) completedAt: string | null;
}
