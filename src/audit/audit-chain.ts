/**
 * Writing the audit trail from a change's own database transaction (issue 14, item 3; issue 16:
 * the trail must not serialise money movements).
 *
 * An event is written UNCHAINED in the caller's transaction: one INSERT of its content, no lock
 * and no read, so concurrent changes never wait on each other for the trail; it commits with the
 * change it describes, or not at all. The sealer (AuditSealerService, `sealPendingEvents` in
 * audit.repository.ts) later gives committed events their `seq`, `prev_hash` and `hash` in
 * insertion order under an advisory lock only it takes. Until then an event is unsealed: its row
 * is not yet protected by the chain (see `sealPendingEvents` for that window).
 */
import { currentRequestContext } from '../common/request-context';
import { afterCommit } from '../database/after-commit';
import type { Prisma } from '../generated/prisma/client';
import type { AuditEventInput } from './audit-hash';
import { insertAuditEvent, insertAuditEventSql } from './audit.repository';

export type { AuditEventInput, AuditOutcome, ChainedAuditEvent } from './audit-hash';
export { canonicalJson, eventHash, GENESIS_HASH } from './audit-hash';

/**
 * Writes `event` unchained inside `tx` (the transaction of the change it describes): one INSERT,
 * no lock. Resolves to the event's insertion id. The sealer chains it after `tx` commits.
 */
export function appendAuditEvent(tx: Prisma.TransactionClient, event: AuditEventInput): Promise<bigint> {
  return insertAuditEvent(tx, event);
}

/**
 * Writes the current request's event (the action its route declares with `@Audited`, outcome
 * `succeeded`) for the change `targetId`, inside the change's own database transaction `tx`: one
 * INSERT, no lock (the event is sealed into the chain after commit). Call it from the transaction
 * that writes the change. The first call of a request writes; later ones (and calls outside an
 * audited request: callbacks, jobs) do nothing. The request counts its event as recorded only once
 * `tx` has committed (after-commit.ts): if `tx` rolls back, a later call in the same request (a
 * retried transaction) writes it again, and so does AuditInterceptor after a success.
 */
export async function recordAuditedChange(
  tx: Prisma.TransactionClient,
  targetId: string,
  details?: Record<string, unknown>,
): Promise<void> {
  const context = currentRequestContext();
  if (context?.auditedIn === tx) return; // written in this very transaction already
  const event = auditedChangeEvent(targetId, details);
  if (!context || !event) return;
  await insertAuditEvent(tx, event);
  context.auditedIn = tx;
  // Recorded once `tx` commits: a rollback leaves the event unwritten, so a retry (or the
  // interceptor, after a success) writes it. A transaction PrismaService does not run: at once.
  const recorded = () => {
    context.recorded = true;
    if (context.auditedIn === tx) context.auditedIn = undefined;
  };
  if (!afterCommit(tx, recorded)) recorded();
}

/** The current request's event for the change `targetId`, or null when there is none to write (see recordAuditedChange). */
function auditedChangeEvent(targetId: string, details?: Record<string, unknown>): AuditEventInput | null {
  const context = currentRequestContext();
  if (!context?.action || context.recorded) return null;
  return {
    actorId: context.actor?.id ?? null,
    actorName: context.actor?.name ?? null,
    action: context.action,
    targetType: context.targetType ?? 'unknown',
    targetId,
    requestId: context.requestId,
    outcome: 'succeeded',
    details: details ?? null,
  };
}

/**
 * recordAuditedChange as an SQL statement (`INSERT … RETURNING id`, see insertAuditEventSql), for a
 * repository that writes the change and its event in ONE statement (a data-modifying CTE, through
 * node-postgres or Prisma): the current request's event for the change `targetId`, inserted only if
 * `onlyIf` holds (e.g. `EXISTS (SELECT 1 FROM ins)`: the change was written). Null when there is
 * nothing to write (outside an audited request, or its event already written). Once the statement
 * has run and its change is to be kept, call `auditedChangeRecorded()` (so that the request writes
 * no second event); a statement whose change was not written (`onlyIf` false) recorded nothing.
 */
export function auditedChangeSql(
  targetId: string,
  onlyIf?: Prisma.Sql,
  details?: Record<string, unknown>,
): Prisma.Sql | null {
  const event = auditedChangeEvent(targetId, details);
  return event ? insertAuditEventSql(event, onlyIf) : null;
}

/** Marks the current request's event as written (after auditedChangeSql's statement did). No-op outside a request. */
export function auditedChangeRecorded(): void {
  const context = currentRequestContext();
  if (context?.action) context.recorded = true;
}
