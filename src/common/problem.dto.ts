import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ApiMinorUnits } from './api-money';
import { ErrorCode } from './errors';

/** One failing field of a `validation_failed` problem. */
export class FieldErrorDto {
  @ApiProperty({ example: 'email' }) field: string;
  @ApiProperty({ example: 'email must be an email' }) message: string;
}

/** An amount in minor units of a currency, as a `provider_amount_mismatch` problem shows it. */
export class ProblemMoneyDto {
  @ApiMinorUnits({
    example: 10000,
    orString: true,
    description: 'Minor units (a string beyond the largest safe JSON integer).',
  })
  amount: number | string;
  @ApiProperty({ example: 'USD' }) currency: string;
}

/** RFC 9457 problem details, served as `application/problem+json` for every error. */
export class ProblemDto {
  @ApiProperty({ example: 'urn:wallet-gateway:problem:validation_failed' }) type: string;
  @ApiProperty({ example: 'Validation failed' }) title: string;
  @ApiProperty({ type: 'integer', minimum: 400, maximum: 599, example: 400 }) status: number;
  @ApiProperty({ example: 'The request is invalid.' }) detail: string;
  @ApiProperty({ enum: ErrorCode, enumName: 'ErrorCode', example: ErrorCode.ValidationFailed }) code: ErrorCode;
  @ApiPropertyOptional({ example: '/v1/customers' }) instance?: string;
  @ApiPropertyOptional({ description: 'Request id, also in the x-request-id response header and the logs.' })
  requestId?: string;
  @ApiPropertyOptional({ type: [FieldErrorDto], description: 'Failing fields (validation_failed only).' })
  errors?: FieldErrorDto[];
  @ApiPropertyOptional({
    type: [String],
    example: ['payouts:read'],
    description: 'The scopes the API key lacks (forbidden only).',
  })
  missingScopes?: string[];
  @ApiPropertyOptional({ example: 'initializeSwap', description: 'Provider operation (provider_* codes).' })
  operation?: string;
  @ApiPropertyOptional({
    type: ProblemMoneyDto,
    description: 'What was asked of the provider (provider_amount_mismatch).',
  })
  asked?: ProblemMoneyDto;
  @ApiPropertyOptional({
    type: ProblemMoneyDto,
    description: 'What the provider answered instead (provider_amount_mismatch).',
  })
  answered?: ProblemMoneyDto;
  @ApiPropertyOptional({
    example: 'unit misconfigured?',
    description: 'provider_amount_mismatch: the amounts differ by exactly the minor-unit factor (×100 for cents).',
  })
  hint?: string;
}

/**
 * The problem of a money-moving call the provider did not answer clearly (timeout, 5xx, a malformed
 * answer): the movement's ledger row was kept `unknown`, and says by when it is settled. Do not
 * start the movement again before `settlesBy`: read the row (GET /v1/transactions/{transactionId})
 * or retry with the same Idempotency-Key, which replays this answer.
 */
export class UnsettledProblemDto extends ProblemDto {
  @ApiPropertyOptional({ format: 'uuid', description: 'The ledger row of the movement (GET /v1/transactions/{id}).' })
  transactionId?: string;
  @ApiPropertyOptional({
    enum: ['unknown'],
    description:
      'The ledger status the movement was left in (named so because `status` is the HTTP status in RFC 9457).',
  })
  transactionStatus?: 'unknown';
  @ApiPropertyOptional({
    format: 'date-time',
    description:
      'By when reconciliation has settled the row (its creation + SETTLEMENT_DEADLINE minutes): from the ' +
      "provider's records, or `failed` (`provider_answer_lost`) when its call moved no money, or `needs_review` " +
      'when money may have moved.',
  })
  settlesBy?: string;
}
