import { Global, Module } from '@nestjs/common';
import { AuditSealerService } from './audit-sealer.service';
import { AuditTrailService } from './audit-trail.service';
import { AuditController } from './audit.controller';
import { AuditInterceptor } from './audit.interceptor';
import { AuditRepository } from './audit.repository';

/**
 * The audit trail (issue 14, item 3): GET /v1/audit-events, and the interceptor that makes every
 * `@Audited` route leave an event (exported: each controller's module instantiates it for its
 * routes). Changes write theirs, unchained, in their own transaction with `recordAuditedChange`
 * (audit-chain.ts), which needs no injection; AuditSealerService chains them afterwards.
 */
@Global()
@Module({
  controllers: [AuditController],
  providers: [AuditRepository, AuditSealerService, AuditTrailService, AuditInterceptor],
  exports: [AuditTrailService, AuditInterceptor],
})
export class AuditModule {}
