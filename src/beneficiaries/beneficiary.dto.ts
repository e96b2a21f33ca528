import { ApiExtraModels, ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsISO31661Alpha2, IsObject, IsString, IsUUID, Matches } from 'class-validator';
import { PageMetaDto, PageQueryDto } from '../common/pagination';
import { upper, OptionalNonNull } from '../common/validation';

/** One field of a destination type (docs/provider.md#beneficiaries). */
export class DestinationFieldDto {
  @ApiProperty({ example: 'accountNumber' }) name: string;
  @ApiProperty({ example: 'string' }) type: string;
  @ApiProperty() required: boolean;
  @ApiPropertyOptional({ description: 'The only allowed value.' }) const?: string;
  @ApiPropertyOptional({ type: [String] }) enum?: string[];
  @ApiPropertyOptional({ description: 'Regular expression the value must match.' }) pattern?: string;
}

/**
 * GET /v1/payout-countries/{country}: the destination types a country supports and their fields.
 * DestinationFieldDto is registered here (ApiExtraModels): it is only reached through the map's
 * `additionalProperties`, which Nest does not follow, and an unregistered `$ref` breaks generated clients.
 */
@ApiExtraModels(DestinationFieldDto)
export class PayoutCountryDto {
  @ApiProperty({ example: 'KE' }) code: string;
  @ApiProperty({ example: 'Kenya' }) name: string;
  @ApiProperty({ type: String, nullable: true }) flag: string | null;
  @ApiProperty({ type: String, nullable: true, example: '+254' }) dialCode: string | null;
  @ApiProperty({
    description: 'Destination type (e.g. MOBILEMONEY) → its fields.',
    additionalProperties: { type: 'array', items: { $ref: getSchemaPath(DestinationFieldDto) } },
    example: { MOBILEMONEY: [{ name: 'accountNumber', type: 'string', required: true, pattern: '^2547[\\d]{8}$' }] },
  })
  destinations: Record<string, DestinationFieldDto[]>;
}

/** Body of POST /v1/beneficiaries. The destination is checked against the country's fields before the provider is called. */
export class CreateBeneficiaryDto {
  @ApiProperty({ format: 'uuid' }) @IsUUID() customerId: string;

  @ApiProperty({
    example: 'KE',
    description:
      'ISO 3166-1 alpha-2 country code. The countries payouts go to are the provider’s (GET /v1/payout-countries/{country}); ' +
      'one it does not serve is refused with 422 `business_rule_failed`.',
  })
  @Transform(upper)
  @IsString()
  @IsISO31661Alpha2({ message: 'country must be an ISO 3166-1 alpha-2 country code' })
  country: string;

  @ApiProperty({ example: 'KES' })
  @Transform(upper)
  @IsString()
  @Matches(/^[A-Z]{3,5}$/, { message: 'currency must be a currency code' })
  currency: string;

  @ApiProperty({
    example: { type: 'MOBILEMONEY', network: 'MPESA', accountNumber: '254712345678' },
    description:
      '`type` plus the fields GET /v1/payout-countries/{country} lists for that type (strings). The types and fields ' +
      'are the provider’s data per country, so they are checked by the service: a destination off them is refused ' +
      'with 422 `business_rule_failed` naming each field (`destination.type`, `destination.accountNumber`…).',
  })
  @IsObject()
  destination: Record<string, unknown>;
}

/** Query of GET /v1/beneficiaries. */
export class ListBeneficiariesQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ format: 'uuid' }) @OptionalNonNull() @IsUUID() customerId?: string;
}

/** A beneficiary (payout destination). */
export class BeneficiaryDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ type: String, nullable: true }) providerId: string | null;
  @ApiProperty({ format: 'uuid' }) customerId: string;
  @ApiProperty({ example: 'KE' }) country: string;
  @ApiProperty({ example: 'KES' }) currency: string;
  @ApiProperty({ example: 'MOBILEMONEY' }) type: string;
  @ApiProperty({
    example: { type: 'MOBILEMONEY', network: 'MPESA', accountNumber: '254712345678' },
  })
  destination: Record<string, string>;
  @ApiProperty({ example: 'success' }) status: string;
  @ApiProperty() reference: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

export class BeneficiaryPageDto extends PageMetaDto {
  @ApiProperty({ type: [BeneficiaryDto] }) data: BeneficiaryDto[];
}
