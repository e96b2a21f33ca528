/**
 * The audit trail's chain (issue 14, item 3): each event holds the SHA-256 of the previous event's
 * hash and its own content, so that editing or deleting a row breaks every link after it
 * (`npm run audit -- verify`). Appending takes a transaction-scoped advisory lock, reads the last
 * event and writes the next `seq` (last + 1): appends are serialised, so the chain has neither gaps
 * nor forks under concurrency, and an event is written in the caller's database transaction: it
 * commits with the change it describes, or not at all. Keep the append the last statement of a
 * transaction where possible (the lock is held until commit).
 */
import { createHash } from 'node:crypto';
import { currentRequestContext } from '../common/request-context';

/** Anything that can run raw SQL: the Prisma client or an interactive transaction of it. */
export interface AuditSql {
  $queryRaw<T = unknown>(query: TemplateStringsArray, ...values: unknown[]): Promise<T>;
}

/** `outcome` of an event: the change was made, the gateway or the provider refused it (4xx), or it failed (5xx). */
export type AuditOutcome = 'succeeded' | 'refused' | 'failed';

/** One event to append; `at` is set by the append. */
export interface AuditEventInput {
  actorId: string | null;
  actorName: string | null;
  /** e.g. payout.create, payout.confirm, card.freeze, api_key.create. */
  action: string;
  targetType: string;
  targetId: string | null;
  requestId: string | null;
  outcome: AuditOutcome;
  /** Small JSON (codes, statuses): never personal data or secrets. */
  details?: Record<string, unknown> | null;
}

/** An event as stored, with its place in the chain. */
export interface ChainedAuditEvent extends Omit<AuditEventInput, 'outcome' | 'details'> {
  seq: bigint;
  at: Date;
  outcome: string;
  details: unknown;
  prevHash: string;
  hash: string;
}

/** prevHash of the first event. */
export const GENESIS_HASH = '0'.repeat(64);

/** The advisory lock key that serialises appends ("audit" in ASCII). */
const AUDIT_CHAIN_LOCK = 0x6175646974;

/** JSON with object keys sorted at every level (jsonb does not keep the order it was given). */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value ?? null);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

/** SHA-256 (hex) of the previous hash and the event's content (every column but `hash`). */
export function eventHash(event: Omit<ChainedAuditEvent, 'hash'>): string {
  const content = canonicalJson([
    event.seq.toString(),
    event.at.toISOString(),
    event.actorId,
    event.actorName,
    event.action,
    event.targetType,
    event.targetId,
    event.requestId,
    event.outcome,
    event.details ?? null,
  ]);
  return createHash('sha256').update(event.prevHash).update('\n').update(content).digest('hex');
}

/**
 * Appends `event` to the chain inside `db` (a transaction: the lock is released at its commit).
 * Outside a transaction the lock would end with the statement: always pass a transaction.
 */
export async function appendAuditEvent(db: AuditSql, event: AuditEventInput): Promise<ChainedAuditEvent> {
  await db.$queryRaw`SELECT pg_advisory_xact_lock(${AUDIT_CHAIN_LOCK}::bigint)::text AS locked`;
  const [last] = await db.$queryRaw<Array<{ seq: bigint; hash: string }>>`
    SELECT seq, hash FROM audit_events ORDER BY seq DESC LIMIT 1`;
  const chained: Omit<ChainedAuditEvent, 'hash'> = {
    ...event,
    details: event.details ?? null,
    seq: (last ? BigInt(last.seq) : 0n) + 1n,
    at: new Date(),
    prevHash: last?.hash ?? GENESIS_HASH,
  };
  const hash = eventHash(chained);
  const details = chained.details === null ? null : JSON.stringify(chained.details);
  await db.$queryRaw`
    INSERT INTO audit_events (seq, at, actor_id, actor_name, action, target_type, target_id, request_id, outcome,
                              details, prev_hash, hash)
    VALUES (${chained.seq}, ${chained.at}, ${chained.actorId}::uuid, ${chained.actorName}, ${chained.action},
            ${chained.targetType}, ${chained.targetId}, ${chained.requestId}, ${chained.outcome},
            ${details}::jsonb, ${chained.prevHash}, ${hash})
    RETURNING seq`;
  return { ...chained, hash };
}

/**
 * Writes the current request's event (the action its route declares with `@Audited`, outcome
 * `succeeded`) for the change `targetId`, inside the change's own database transaction `db`. Call
 * it from the transaction that writes the change. The first call of a request writes; later ones
 * (and calls outside an audited request: callbacks, jobs) do nothing.
 */
export async function recordAuditedChange(
  db: AuditSql,
  targetId: string,
  details?: Record<string, unknown>,
): Promise<void> {
  const context = currentRequestContext();
  if (!context?.action || context.recorded) return;
  await appendAuditEvent(db, {
    actorId: context.actor?.id ?? null,
    actorName: context.actor?.name ?? null,
    action: context.action,
    targetType: context.targetType ?? 'unknown',
    targetId,
    requestId: context.requestId,
    outcome: 'succeeded',
    details: details ?? null,
  });
  context.recorded = true;
}
