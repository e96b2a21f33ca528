/**
 * The audit trail's hash chain (issue 14, item 3), as pure functions: each sealed event holds the
 * SHA-256 of the previous event's hash and its own content, so that editing or deleting a sealed
 * row breaks every link after it (`npm run audit -- verify`). Events are written unchained and
 * sealed into the chain later (audit.repository.ts `sealPendingEvents`).
 */
import { createHash } from 'node:crypto';

/** `outcome` of an event: the change was made, the gateway or the provider refused it (4xx), or it failed (5xx). */
export type AuditOutcome = 'succeeded' | 'refused' | 'failed';

/** One event to write; `at` is set when it is written. */
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

/** An event as sealed, with its place in the chain. */
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

/** JSON with object keys sorted at every level (jsonb does not keep the order it was given). */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value ?? null);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

/**
 * SHA-256 (hex, 64 characters) of the previous hash and the event's content: seq, at (ISO 8601,
 * milliseconds), actor id and name, action, target type and id, request id, outcome, details
 * (canonical JSON). Not the insertion id: that is no part of the chain.
 */
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
