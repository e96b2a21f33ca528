import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDateString, IsString, IsUUID, Matches, MaxLength } from 'class-validator';
import { PageMetaDto, PageQueryDto } from '../common/pagination';
import { OptionalNonNull } from '../common/validation';

/** Query of GET /v1/audit-events: filters combined with AND, newest first, cursor pages. */
export class ListAuditEventsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ format: 'uuid', description: 'Only events of this API client.' })
  @OptionalNonNull()
  @IsUUID()
  actorId?: string;

  @ApiPropertyOptional({ example: 'payout.confirm', description: 'Only this action.' })
  @OptionalNonNull()
  @Matches(/^[a-z_]+\.[a-z_]+$/, { message: 'action must look like payout.confirm' })
  @MaxLength(64)
  action?: string;

  @ApiPropertyOptional({ description: 'Only events about this resource id.' })
  @OptionalNonNull()
  @IsString()
  @MaxLength(128)
  targetId?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Events at or after this instant.' })
  @OptionalNonNull()
  @IsDateString()
  from?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Events before this instant.' })
  @OptionalNonNull()
  @IsDateString()
  to?: string;
}

/** One audit event: who did what to which resource, in which request, and what came of it. */
export class AuditEventDto {
  @ApiProperty({ description: 'Place in the chain (1, 2, 3, … without gaps).', example: '42' }) seq: string;
  @ApiProperty({ format: 'date-time' }) at: string;
  @ApiProperty({ type: String, nullable: true, format: 'uuid', description: 'API client; null for the CLI.' })
  actorId: string | null;
  @ApiProperty({ type: String, nullable: true }) actorName: string | null;
  @ApiProperty({ example: 'payout.confirm' }) action: string;
  @ApiProperty({ example: 'payout' }) targetType: string;
  @ApiProperty({ type: String, nullable: true }) targetId: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'The x-request-id of the request.' })
  requestId: string | null;
  @ApiProperty({ enum: ['succeeded', 'refused', 'failed'] }) outcome: string;
  @ApiProperty({
    type: 'object',
    nullable: true,
    additionalProperties: true,
    description: 'For refusals and failures: the problem `code` and HTTP `status`.',
  })
  details: Record<string, unknown> | null;
  @ApiProperty({ description: "SHA-256 (hex) of the previous event's hash and this event's content." }) hash: string;
}

export class AuditEventPageDto extends PageMetaDto {
  @ApiProperty({ type: [AuditEventDto] }) data: AuditEventDto[];
}
