import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RequireScopes } from '../auth/auth.decorators';
import { ApiValidationErrors } from '../common/api-responses';
import { AuditEventPageDto, ListAuditEventsQueryDto } from './audit-event.dto';
import { AuditTrailService } from './audit-trail.service';

@ApiTags('audit')
@Controller('v1/audit-events')
export class AuditController {
  constructor(private readonly trail: AuditTrailService) {}

  @Get()
  @RequireScopes('audit:read')
  @ApiOperation({
    summary: 'Audit trail: who (API client) did what to which resource, newest first (filters, cursor pages)',
  })
  @ApiOkResponse({ type: AuditEventPageDto })
  @ApiValidationErrors()
  list(@Query() query: ListAuditEventsQueryDto): Promise<AuditEventPageDto> {
    return this.trail.list(query);
  }
}
