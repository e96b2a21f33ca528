import { Injectable } from '@nestjs/common';
import { PrismaService } from '../database/prisma.service';
import type { AuditEvent, Prisma } from '../generated/prisma/client';
import { appendAuditEvent, type AuditEventInput, type ChainedAuditEvent } from './audit-chain';

/** Filters of the audit event list (all optional, combined with AND). */
export interface AuditEventFilter {
  actorId?: string;
  action?: string;
  targetId?: string;
  from?: Date;
  to?: Date;
  /** Only events before this seq (the cursor of newest-first pages). */
  beforeSeq?: bigint;
}

/** Database access for the audit trail (table audit_events): appends, pages, and the chain in order. */
@Injectable()
export class AuditRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Appends one event in a transaction of its own (an event that describes no database change). */
  appendAlone(event: AuditEventInput): Promise<ChainedAuditEvent> {
    return this.prisma.$transaction((tx) => appendAuditEvent(tx, event));
  }

  /** Newest first, `limit` rows. */
  list(filter: AuditEventFilter, limit: number): Promise<AuditEvent[]> {
    const where: Prisma.AuditEventWhereInput = {
      ...(filter.actorId ? { actorId: filter.actorId } : {}),
      ...(filter.action ? { action: filter.action } : {}),
      ...(filter.targetId ? { targetId: filter.targetId } : {}),
      ...(filter.from || filter.to ? { at: { gte: filter.from, lt: filter.to } } : {}),
      ...(filter.beforeSeq !== undefined ? { seq: { lt: filter.beforeSeq } } : {}),
    };
    return this.prisma.auditEvent.findMany({ where, orderBy: { seq: 'desc' }, take: limit });
  }
}

/**
 * The whole chain in order, `batch` rows at a time (for `npm run audit -- verify`, which runs
 * without Nest).
 */
export async function* chainInOrder(
  prisma: Pick<PrismaService, 'auditEvent'>,
  batch = 1000,
): AsyncGenerator<AuditEvent> {
  let after = 0n;
  for (;;) {
    const rows = await prisma.auditEvent.findMany({
      where: { seq: { gt: after } },
      orderBy: { seq: 'asc' },
      take: batch,
    });
    for (const row of rows) yield row;
    if (rows.length < batch) return;
    after = rows[rows.length - 1].seq;
  }
}
