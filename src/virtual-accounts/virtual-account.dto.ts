import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsNotEmpty, IsString, IsUUID, Matches, MaxLength } from 'class-validator';
import { PageMetaDto, PageQueryDto } from '../common/pagination';
import { lower, trim, OptionalNonNull } from '../common/validation';
import { VIRTUAL_ACCOUNT_BANKS } from './virtual-account-rules';

/**
 * Body of POST /v1/virtual-accounts. `bvn` and `dateOfBirth` are sent to the provider and not
 * stored by the gateway.
 */
export class CreateVirtualAccountDto {
  @ApiProperty({ format: 'uuid', description: 'The customer the account is issued to.' })
  @IsUUID()
  customerId: string;

  @ApiProperty({
    enum: VIRTUAL_ACCOUNT_BANKS,
    example: 'safehaven',
    description: 'Bank issuing the account (lower-case identifier).',
  })
  @Transform(lower)
  @IsIn(VIRTUAL_ACCOUNT_BANKS, { message: `bank must be one of ${VIRTUAL_ACCOUNT_BANKS.join(', ')}` })
  bank: string;

  @ApiProperty({
    example: '22123456789',
    description: "The holder's Bank Verification Number: 11 digits. Not stored by the gateway.",
  })
  @Transform(trim)
  @IsString()
  @Matches(/^\d{11}$/, { message: 'bvn must be 11 digits' })
  bvn: string;

  @ApiPropertyOptional({
    example: '1990-04-01',
    format: 'date',
    description:
      "The holder's date of birth: a real calendar date, yyyy-mm-dd, not in the future (UTC). Required when bank is providus (400 otherwise). Not stored by the gateway.",
  })
  @OptionalNonNull()
  @Transform(trim)
  @IsString()
  @Matches(/^\d{4}-\d{2}-\d{2}$/, { message: 'dateOfBirth must be a date written yyyy-mm-dd' })
  dateOfBirth?: string;

  @ApiProperty({
    example: '08012345678',
    description: "The holder's phone number: 7 to 15 digits, optionally with a leading +.",
  })
  @Transform(trim)
  @IsString()
  @Matches(/^\+?\d{7,15}$/, { message: 'phoneNumber must be 7 to 15 digits, optionally with a leading +' })
  phoneNumber: string;

  @ApiPropertyOptional({
    example: 'Ada',
    maxLength: 100,
    description: "Holder's first name; defaults to the customer's.",
  })
  @OptionalNonNull()
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  firstName?: string;

  @ApiPropertyOptional({
    example: 'Obi',
    maxLength: 100,
    description: "Holder's last name; defaults to the customer's.",
  })
  @OptionalNonNull()
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  lastName?: string;
}

/** Query of GET /v1/virtual-accounts. */
export class ListVirtualAccountsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ format: 'uuid', description: "Only this customer's accounts." })
  @OptionalNonNull()
  @IsUUID()
  customerId?: string;
}

/** A virtual bank account issued to a customer. */
export class VirtualAccountDto {
  @ApiProperty({ format: 'uuid', description: "The gateway's id." }) id: string;
  @ApiProperty({ description: "The provider's id." }) providerId: string;
  @ApiProperty({ format: 'uuid' }) customerId: string;
  @ApiProperty({ enum: VIRTUAL_ACCOUNT_BANKS, example: 'safehaven' }) bank: string;
  @ApiProperty({ example: 'Safe Haven MFB', description: "The bank's display name." }) bankName: string;
  @ApiProperty({ example: 'Ada Obi' }) accountName: string;
  @ApiProperty({ example: '0123456789', description: 'Account number to pay into.' }) accountNumber: string;
  @ApiProperty({ example: 'NGN', description: 'Upper-case currency code of the account.' }) currency: string;
  @ApiProperty({ example: 'active', description: '`active` on creation.' }) status: string;
  @ApiProperty({ example: 'wg-virtual-account-3f0c9a…', description: 'Reference sent to the provider.' })
  reference: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

export class VirtualAccountPageDto extends PageMetaDto {
  @ApiProperty({ type: [VirtualAccountDto] }) data: VirtualAccountDto[];
}
