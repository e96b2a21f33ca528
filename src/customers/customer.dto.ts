import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsEmail, IsNotEmpty, IsString, Matches, MaxLength } from 'class-validator';
import { PageMetaDto, PageQueryDto } from '../common/pagination';
import { lower, trim, OptionalNonNull } from '../common/validation';

/** Body of POST /v1/customers. Emails are compared case-insensitively (stored lower-case). */
export class CreateCustomerDto {
  @ApiProperty({ example: 'ada@example.com', maxLength: 254 })
  @Transform(lower)
  @IsEmail()
  @MaxLength(254)
  email: string;

  @ApiProperty({ example: 'Ada', maxLength: 100 })
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  firstName: string;

  @ApiProperty({ example: 'Obi', maxLength: 100 })
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  lastName: string;

  @ApiProperty({ example: '8012345678', description: 'Phone number without the dialling code: 6 to 15 digits.' })
  @Transform(trim)
  @IsString()
  @Matches(/^\d{6,15}$/, { message: 'phone must be 6 to 15 digits' })
  phone: string;

  @ApiProperty({ example: '+234', description: 'Dialling code, with or without the leading plus (stored with it).' })
  @Transform(trim)
  @IsString()
  @Matches(/^\+?\d{1,4}$/, { message: 'countryCode must be a dialling code such as +234' })
  countryCode: string;
}

/**
 * Body of POST /v1/me/customer: the signed-in person's details; the email is not sent, it comes
 * from the access token's verified `email` claim.
 */
export class CreateMyCustomerDto {
  @ApiProperty({ example: 'Ada', maxLength: 100 })
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  firstName: string;

  @ApiProperty({ example: 'Obi', maxLength: 100 })
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  lastName: string;

  @ApiProperty({ example: '8012345678', description: 'Phone number without the dialling code: 6 to 15 digits.' })
  @Transform(trim)
  @IsString()
  @Matches(/^\d{6,15}$/, { message: 'phone must be 6 to 15 digits' })
  phone: string;

  @ApiProperty({ example: '+234', description: 'Dialling code, with or without the leading plus (stored with it).' })
  @Transform(trim)
  @IsString()
  @Matches(/^\+?\d{1,4}$/, { message: 'countryCode must be a dialling code such as +234' })
  countryCode: string;
}

/** Body of PATCH /v1/customers/{id}: any subset of the create fields (at least one). */
export class UpdateCustomerDto {
  @ApiPropertyOptional({ example: 'ada@example.com' })
  @OptionalNonNull()
  @Transform(lower)
  @IsEmail()
  @MaxLength(254)
  email?: string;

  @ApiPropertyOptional({ example: 'Ada' })
  @OptionalNonNull()
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  firstName?: string;

  @ApiPropertyOptional({ example: 'Obi' })
  @OptionalNonNull()
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  lastName?: string;

  @ApiPropertyOptional({ example: '8012345678' })
  @OptionalNonNull()
  @Transform(trim)
  @IsString()
  @Matches(/^\d{6,15}$/, { message: 'phone must be 6 to 15 digits' })
  phone?: string;

  @ApiPropertyOptional({ example: '+234' })
  @OptionalNonNull()
  @Transform(trim)
  @IsString()
  @Matches(/^\+?\d{1,4}$/, { message: 'countryCode must be a dialling code such as +234' })
  countryCode?: string;
}

/** Query of GET /v1/customers/{id}. */
export class GetCustomerQueryDto {
  @ApiPropertyOptional({ type: Boolean, description: "Fetch the provider's record first and store what changed." })
  @OptionalNonNull()
  @Transform(({ value }: { value: unknown }) => (value === 'true' ? true : value === 'false' ? false : value))
  @IsBoolean()
  refresh?: boolean;
}

/** Query of GET /v1/customers. */
export class ListCustomersQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ description: 'Exact email (case-insensitive).' })
  @OptionalNonNull()
  @Transform(lower)
  @IsEmail()
  email?: string;
}

/** A customer as the gateway answers it. Ids are the gateway's UUIDs; `providerId` is the provider's. */
export class CustomerDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ description: "The provider's customer id." }) providerId: string;
  @ApiProperty({ example: 'ada@example.com' }) email: string;
  @ApiProperty({ type: String, nullable: true, example: 'Ada' }) firstName: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'Obi' }) lastName: string | null;
  @ApiProperty({ type: String, nullable: true, example: '8012345678' }) phone: string | null;
  @ApiProperty({ type: String, nullable: true, example: '+234' }) countryCode: string | null;
  @ApiProperty({ example: false }) blacklisted: boolean;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

/** A page of customers. */
export class CustomerPageDto extends PageMetaDto {
  @ApiProperty({ type: [CustomerDto] }) data: CustomerDto[];
}
