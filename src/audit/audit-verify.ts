import type { AuditEvent } from '../generated/prisma/client';
import { eventHash, GENESIS_HASH } from './audit-hash';

/** What `verifyChain` found: `ok`, or the first row that breaks the chain and why. */
export type ChainReport =
  | { ok: true; events: number; lastSeq: bigint | null }
  | { ok: false; events: number; seq: bigint; problem: 'edited' | 'missing_before' | 'relinked' };

/**
 * Recomputes the sealed chain (rows in seq order; unsealed rows are no part of it): each row's hash
 * from its content and the previous row's hash, and the sequence without gaps. The first row that fails is reported: `edited` (its content no longer
 * gives its hash), `missing_before` (a row before it was deleted: a gap in seq), or `relinked`
 * (its prevHash is not the previous row's hash: rows were replaced or reordered).
 */
export async function verifyChain(rows: AsyncIterable<AuditEvent>): Promise<ChainReport> {
  let previous: { seq: bigint; hash: string } | null = null;
  let events = 0;
  for await (const row of rows) {
    events += 1;
    const expectedSeq: bigint = previous ? previous.seq + 1n : 1n;
    if (row.seq !== expectedSeq) return { ok: false, events, seq: row.seq ?? expectedSeq, problem: 'missing_before' };
    if (row.prevHash !== (previous?.hash ?? GENESIS_HASH)) {
      return { ok: false, events, seq: expectedSeq, problem: 'relinked' };
    }
    const { hash, ...content } = row;
    if (hash === null || eventHash({ ...content, seq: expectedSeq, prevHash: row.prevHash }) !== hash) {
      return { ok: false, events, seq: expectedSeq, problem: 'edited' };
    }
    previous = { seq: expectedSeq, hash };
  }
  return { ok: true, events, lastSeq: previous?.seq ?? null };
}
