import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ErrorCode } from './errors';

/** One failing field of a `validation_failed` problem. */
export class FieldErrorDto {
  @ApiProperty({ example: 'email' }) field: string;
  @ApiProperty({ example: 'email must be an email' }) message: string;
}

/** An amount in minor units of a currency, as a `provider_amount_mismatch` problem shows it. */
export class ProblemMoneyDto {
  @ApiProperty({ example: 10000, description: 'Minor units (a string beyond the largest safe JSON integer).' })
  amount: number;
  @ApiProperty({ example: 'USD' }) currency: string;
}

/** RFC 9457 problem details, served as `application/problem+json` for every error. */
export class ProblemDto {
  @ApiProperty({ example: 'urn:wallet-gateway:problem:validation_failed' }) type: string;
  @ApiProperty({ example: 'Validation failed' }) title: string;
  @ApiProperty({ example: 400 }) status: number;
  @ApiProperty({ example: 'The request is invalid.' }) detail: string;
  @ApiProperty({ enum: ErrorCode, enumName: 'ErrorCode', example: ErrorCode.ValidationFailed }) code: ErrorCode;
  @ApiPropertyOptional({ example: '/v1/customers' }) instance?: string;
  @ApiPropertyOptional({ description: 'Request id, also in the x-request-id response header and the logs.' })
  requestId?: string;
  @ApiPropertyOptional({ type: [FieldErrorDto], description: 'Failing fields (validation_failed only).' })
  errors?: FieldErrorDto[];
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
