import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsString, IsUUID, Max, Min } from 'class-validator';
import { ApiMinorUnits } from '../common/api-money';
import { CURRENCIES } from '../common/money';
import { upper } from '../common/validation';
import { SWAP_QUOTE_STATUSES } from './swap-quote-rules';

/** Body of POST /v1/swap-quotes. */
export class CreateSwapQuoteDto {
  @ApiProperty({ example: 'USD', description: 'Wallet currency to sell (debited on execution).' })
  @Transform(upper)
  @IsString()
  @IsIn(CURRENCIES, { message: 'sourceCurrency must be a supported currency code' })
  sourceCurrency: string;

  @ApiProperty({
    example: 'NGN',
    description: 'Wallet currency to buy (credited on execution); not the source currency.',
  })
  @Transform(upper)
  @IsString()
  @IsIn(CURRENCIES, { message: 'targetCurrency must be a supported currency code' })
  targetCurrency: string;

  @ApiProperty({
    example: 10000,
    description: 'Integer amount to sell, in MINOR units of sourceCurrency (10000 = 100.00 USD).',
  })
  @IsInt()
  @Min(1)
  @Max(Number.MAX_SAFE_INTEGER)
  amount: number;
}

/** A swap quote as the gateway answers it. Amounts are integers in minor units. */
export class SwapQuoteDto {
  @ApiProperty({ format: 'uuid', description: "The gateway's quote id: execute it with POST /v1/swaps {quoteId}." })
  id: string;
  @ApiProperty({
    enum: SWAP_QUOTE_STATUSES,
    example: 'open',
    description:
      '`open` until executed or `expiresAt`; `executing` while (or if unknown whether) the provider executes it; `executed`; `failed` (refused by the provider); `expired`.',
  })
  status: string;
  @ApiProperty({ example: 'USD' }) sourceCurrency: string;
  @ApiProperty({ example: 'NGN' }) targetCurrency: string;
  @ApiMinorUnits({ example: 10000, description: 'Amount sold, minor units of sourceCurrency.' }) sourceAmount: number;
  @ApiMinorUnits({ example: 15000000, description: 'Amount bought, minor units of targetCurrency.' })
  targetAmount: number;
  @ApiMinorUnits({ example: 50, description: "The provider's fee, minor units of sourceCurrency." }) fee: number;
  @ApiProperty({
    example: '1500',
    description:
      "The provider's conversion rate (target units per source unit, in major units), as an exact decimal string.",
  })
  rate: string;
  @ApiProperty({
    format: 'date-time',
    description: 'Execute before this moment (the provider quotes about 250 s); later answers 422 quote_expired.',
  })
  expiresAt: string;
  @ApiProperty({
    type: String,
    nullable: true,
    format: 'date-time',
    description: 'When the provider executed the quote.',
  })
  executedAt: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    format: 'uuid',
    description: 'The swap (ledger row) executing this quote: GET /v1/swaps/{id}.',
  })
  transactionId: string | null;
  @ApiProperty({ description: "The provider's quote id." }) providerId: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
}

/** Body of POST /v1/swaps. */
export class CreateSwapDto {
  @ApiProperty({ format: 'uuid', description: 'An open quote of this API client, from POST /v1/swap-quotes.' })
  @IsUUID()
  quoteId: string;
}

/** An executed (or attempted) swap: one ledger row of kind `swap`. Amounts are integers in minor units. */
export class SwapDto {
  @ApiProperty({ format: 'uuid', description: 'The ledger row id (also readable at GET /v1/transactions/{id}).' })
  id: string;
  @ApiProperty({
    enum: ['created', 'success', 'failed', 'unknown', 'reversed'],
    example: 'success',
    description:
      '`success` once the provider executed it; `failed` if it refused; `unknown` if it did not answer (reconciliation decides).',
  })
  status: string;
  @ApiProperty({ format: 'uuid', description: 'The quote executed.' }) quoteId: string;
  @ApiProperty({ example: 'USD', description: 'Currency debited.' }) sourceCurrency: string;
  @ApiProperty({ example: 'NGN', description: 'Currency credited.' }) targetCurrency: string;
  @ApiMinorUnits({ example: 10000, description: 'Amount debited, minor units of sourceCurrency.' })
  sourceAmount: number;
  @ApiMinorUnits({
    nullable: true,
    example: 15000000,
    description: 'Amount credited, minor units of targetCurrency.',
  })
  targetAmount: number | null;
  @ApiMinorUnits({ example: 50, description: 'Fee, minor units of sourceCurrency.' }) fee: number;
  @ApiProperty({
    type: String,
    nullable: true,
    example: '1500',
    description: 'Conversion rate of the quote (decimal string).',
  })
  rate: string | null;
  @ApiProperty({ example: 'wg-swap-3f0c9a…', description: "The gateway's reference of this swap." }) reference: string;
  @ApiProperty({ type: String, nullable: true, description: "The provider's swap transaction id." }) providerId:
    string | null;
  @ApiProperty({ type: String, nullable: true, description: 'Why the swap failed or is unknown.' }) failureReason:
    string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
  @ApiProperty({ type: String, nullable: true, format: 'date-time' }) completedAt: string | null;
}
