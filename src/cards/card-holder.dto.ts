import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  IsISO31661Alpha2,
  IsNotEmpty,
  IsObject,
  IsString,
  IsUUID,
  Matches,
  MaxLength,
  ValidateNested,
} from 'class-validator';
import { trim, upper, OptionalNonNull } from '../common/validation';
import { CARD_HOLDER_STATUSES } from './card-state';

/** Longest image reference (URL or data URI) accepted; the request body limit applies as well. */
const MAX_IMAGE_LENGTH = 1_000_000;

/** The card holder's address (sent to the provider as line1, houseName, city, state, zipCode, country). */
export class CardHolderAddressDto {
  @ApiProperty({ example: '12 Admiralty Way', maxLength: 200 })
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  line1: string;

  @ApiProperty({ example: 'Block C', maxLength: 200, description: 'House or building name.' })
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  houseName: string;

  @ApiProperty({ example: 'Lekki', maxLength: 100 })
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  city: string;

  @ApiProperty({ example: 'Lagos', maxLength: 100 })
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  state: string;

  @ApiProperty({ example: '106104', maxLength: 20 })
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(20)
  zipCode: string;

  @ApiProperty({
    example: 'NG',
    description:
      'ISO 3166-1 alpha-2 country code. Decides the nationality rules: NG needs `bvn`, GH needs `dateOfBirth`.',
  })
  @Transform(upper)
  @IsString()
  @IsISO31661Alpha2({ message: 'address.country must be an ISO 3166-1 alpha-2 country code' })
  country: string;
}

/** Body of POST /v1/card-holders (docs/provider.md#card-holders). */
export class CreateCardHolderDto {
  @ApiProperty({ format: 'uuid', description: 'The customer to onboard as a card user.' })
  @IsUUID()
  customerId: string;

  @ApiProperty({ example: 'NIN', description: 'Kind of KYC document, e.g. BVN, NIN, PASSPORT.' })
  @Transform(upper)
  @IsString()
  @Matches(/^[A-Z_]{2,30}$/, { message: 'idType must be a document kind such as NIN or PASSPORT' })
  idType: string;

  @ApiProperty({ example: 'A12345678', maxLength: 50, description: 'Number of the KYC document.' })
  @Transform(trim)
  @IsString()
  @Matches(/^[A-Za-z0-9-]{3,50}$/, { message: 'idNumber must be 3-50 letters, digits or dashes' })
  idNumber: string;

  @ApiPropertyOptional({ example: 'Ada', maxLength: 100, description: "Defaults to the customer's first name." })
  @OptionalNonNull()
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  firstName?: string;

  @ApiPropertyOptional({ example: 'Obi', maxLength: 100, description: "Defaults to the customer's last name." })
  @OptionalNonNull()
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  lastName?: string;

  @ApiPropertyOptional({ example: '08012345678', description: "Defaults to the customer's phone." })
  @OptionalNonNull()
  @Transform(trim)
  @IsString()
  @Matches(/^\+?\d{6,15}$/, { message: 'phone must be 6-15 digits, optionally with a leading +' })
  phone?: string;

  @ApiProperty({ type: CardHolderAddressDto })
  @IsObject()
  @ValidateNested()
  @Type(() => CardHolderAddressDto)
  address: CardHolderAddressDto;

  @ApiPropertyOptional({
    example: '22222222222',
    description: 'Bank Verification Number, 11 digits. Required when address.country is NG.',
  })
  @OptionalNonNull()
  @Transform(trim)
  @IsString()
  @Matches(/^\d{11}$/, { message: 'bvn must be 11 digits' })
  bvn?: string;

  @ApiPropertyOptional({
    example: '1990-04-01',
    format: 'date',
    description: 'A real calendar date, yyyy-mm-dd, not in the future (UTC). Required when address.country is GH.',
  })
  @OptionalNonNull()
  @Transform(trim)
  @IsString()
  @Matches(/^\d{4}-\d{2}-\d{2}$/, { message: 'dateOfBirth must be a date written yyyy-mm-dd' })
  dateOfBirth?: string;

  @ApiProperty({
    example: 'https://cdn.example.com/kyc/ada.jpg',
    description: 'URL (or data URI) of the holder photo. Sent to the provider, never stored.',
  })
  @IsString()
  @IsNotEmpty()
  @MaxLength(MAX_IMAGE_LENGTH)
  userPhoto: string;

  @ApiPropertyOptional({
    example: 'https://cdn.example.com/kyc/ada-id.jpg',
    description: 'URL (or data URI) of the ID document. Sent to the provider, never stored.',
  })
  @OptionalNonNull()
  @IsString()
  @IsNotEmpty()
  @MaxLength(MAX_IMAGE_LENGTH)
  idImage?: string;
}

/**
 * A card holder as the gateway answers it. Personal data is stored encrypted and never answered in
 * full: the document number and phone by their last four characters, the address by its country;
 * BVN and date of birth not at all.
 */
export class CardHolderDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) customerId: string;
  @ApiProperty({ type: String, nullable: true, description: "The provider's card user id." })
  providerUserId: string | null;
  @ApiProperty({
    enum: CARD_HOLDER_STATUSES,
    example: 'pending',
    description:
      '`created` while the registration call is in flight (written before it), `unknown` when it got no clear ' +
      'answer (timeout or 5xx: register again to retry), `pending` until the provider decides KYC ' +
      '(virtualcard.user.kyc.success → `active`, …failed → `failed`). Cards may be issued to `pending` and `active` holders.',
  })
  status: string;
  @ApiProperty({ example: 'NIN' }) idType: string;
  @ApiProperty({ example: '5678', description: 'Last four characters of the document number.' })
  idNumberLast4: string;
  @ApiProperty({ example: 'Ada' }) firstName: string;
  @ApiProperty({ example: 'Obi' }) lastName: string;
  @ApiProperty({ example: '5678', description: 'Last four digits of the phone number.' })
  phoneLast4: string;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'NG',
    description: "Country of the holder's address (ISO 3166-1 alpha-2); the address itself is not answered.",
  })
  country: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'Why KYC failed.' }) failureReason: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}
