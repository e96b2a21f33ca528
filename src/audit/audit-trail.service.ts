import { Injectable, Logger } from '@nestjs/common';
import { ValidationError } from '../common/errors';
import type { Page } from '../common/pagination';
import type { RequestContext } from '../common/request-context';
import { AuditEventDto, ListAuditEventsQueryDto } from './audit-event.dto';
import type { AuditOutcome } from './audit-hash';
import { AuditSealerService } from './audit-sealer.service';
import { AuditRepository, type SealedAuditEvent } from './audit.repository';

export function toAuditEventDto(row: SealedAuditEvent): AuditEventDto {
  return {
    seq: row.seq.toString(),
    at: row.at.toISOString(),
    actorId: row.actorId,
    actorName: row.actorName,
    action: row.action,
    targetType: row.targetType,
    targetId: row.targetId,
    requestId: row.requestId,
    outcome: row.outcome,
    details: (row.details as Record<string, unknown> | null) ?? null,
    hash: row.hash,
  };
}

/** Cursor of a newest-first page: the last seq shown, base64url. */
function decodeSeqCursor(token: string): bigint {
  const text = Buffer.from(token, 'base64url').toString('utf8');
  if (!/^[1-9][0-9]{0,18}$/.test(text)) {
    throw new ValidationError([{ field: 'cursor', message: 'cursor is not a valid page cursor' }]);
  }
  return BigInt(text);
}

function parseInstant(field: string, value: string | undefined): Date | undefined {
  if (!value) return undefined;
  const date = new Date(value);
  if (Number.isNaN(date.getTime()))
    throw new ValidationError([{ field, message: `${field} must be an ISO 8601 instant` }]);
  return date;
}

/**
 * The audit trail: events written for requests (by AuditInterceptor, or in a change's transaction
 * through `recordAuditedChange`), and their listing for GET /v1/audit-events.
 */
@Injectable()
export class AuditTrailService {
  private readonly logger = new Logger('Audit');

  constructor(
    private readonly repository: AuditRepository,
    private readonly sealer: AuditSealerService,
  ) {}

  /**
   * Writes the request's event on its own (no change's transaction wrote it: a refusal, a failure,
   * or a route whose change does not record itself). Never throws: a failure to write is logged,
   * and the request's own answer stands.
   */
  async recordRequest(
    context: RequestContext,
    targetId: string | null,
    outcome: AuditOutcome,
    details?: Record<string, unknown>,
  ): Promise<void> {
    try {
      await this.repository.appendAlone({
        actorId: context.actor?.id ?? null,
        actorName: context.actor?.name ?? null,
        action: context.action ?? 'unknown',
        targetType: context.targetType ?? 'unknown',
        targetId,
        requestId: context.requestId,
        outcome,
        details: details ?? null,
      });
      context.recorded = true;
    } catch (error) {
      this.logger.error(
        { err: error, action: context.action, requestId: context.requestId },
        'audit event not written',
      );
    }
  }

  /**
   * Events newest first (by seq), filtered by actor, action, target id and time (`from` inclusive,
   * `to` exclusive), in cursor pages (the cursor is a seq). Seals pending events first (waiting for
   * a sealer at work elsewhere), so every event committed before the request is listed with its
   * place in the chain; one committed later appears in a later listing, above the pages already
   * read (new events always get higher seqs, so cursors neither skip nor repeat).
   * @throws ValidationError (400) for a malformed cursor or instant.
   */
  async list(query: ListAuditEventsQueryDto): Promise<Page<AuditEventDto>> {
    const limit = query.limit ?? 20;
    const filter = {
      actorId: query.actorId,
      action: query.action,
      targetId: query.targetId,
      from: parseInstant('from', query.from),
      to: parseInstant('to', query.to),
      beforeSeq: query.cursor ? decodeSeqCursor(query.cursor) : undefined,
    };
    await this.sealer.sealNow();
    const rows = await this.repository.list(filter, limit + 1);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      data: page.map(toAuditEventDto),
      nextCursor: rows.length > limit && last ? Buffer.from(last.seq.toString()).toString('base64url') : null,
    };
  }
}
