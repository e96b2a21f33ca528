import { Injectable } from '@nestjs/common';
import { PrismaService } from '../database/prisma.service';
import { type AuditEvent, Prisma, type PrismaClient } from '../generated/prisma/client';
import { type AuditEventInput, eventHash, GENESIS_HASH } from './audit-hash';

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

/** A sealed event: its place in the chain is set. */
export type SealedAuditEvent = AuditEvent & { seq: bigint; prevHash: string; hash: string };

/** The advisory lock key that serialises sealing ("audit" in ASCII). Only the sealer takes it. */
const AUDIT_SEAL_LOCK = 0x6175646974;

/** Unsealed events chained per sealing transaction. */
export const SEAL_BATCH = 500;

/** What one call of `sealPendingEvents` did. */
export interface SealReport {
  /** Events given a seq, prev_hash and hash. */
  sealed: number;
  /** false when `wait` was off and another sealer held the lock (nothing was done). */
  locked: boolean;
}

/**
 * Inserts `event` unchained inside `tx` (the transaction of the change it describes): one INSERT of
 * its content with `at` = now; `seq`, `prev_hash` and `hash` stay null until sealed. Takes no lock
 * and reads nothing, so concurrent changes never wait on each other for their events.
 * Resolves to the event's insertion id (`id`, the order sealing follows).
 */
export async function insertAuditEvent(tx: Prisma.TransactionClient, event: AuditEventInput): Promise<bigint> {
  const [row] = await tx.$queryRaw<Array<{ id: bigint }>>(insertAuditEventSql(event));
  return BigInt(row.id);
}

/**
 * The audit event's INSERT as an SQL statement (`INSERT … RETURNING id`; insertAuditEvent runs it),
 * also for a repository that writes the
 * change and its event in ONE statement (a data-modifying CTE, sent through node-postgres or
 * Prisma): the same row, unchained, `at` = now. With `onlyIf` (an SQL condition, e.g. that the
 * change's own CTE returned a row), nothing is inserted unless it holds.
 */
export function insertAuditEventSql(event: AuditEventInput, onlyIf?: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`
    INSERT INTO audit_events (at, actor_id, actor_name, action, target_type, target_id, request_id, outcome, details)
    SELECT ${new Date()}::timestamptz, ${event.actorId}::uuid, ${event.actorName}::text, ${event.action}::text,
           ${event.targetType}::text, ${event.targetId}::text, ${event.requestId}::text, ${event.outcome}::text,
           ${event.details ? JSON.stringify(event.details) : null}::jsonb
    ${onlyIf ? Prisma.sql`WHERE ${onlyIf}` : Prisma.empty}
    RETURNING id`;
}

/**
 * Seals committed unsealed events into the hash chain, oldest insertion first, `batch` per
 * transaction, until a batch finds fewer than `batch` (so everything committed before the call is
 * sealed when it resolves). Each transaction takes the advisory lock AUDIT_SEAL_LOCK (only sealers
 * take it: money paths never wait on it), reads the last sealed event, gives each unsealed one
 * `seq` = last + 1, … (gapless), `prev_hash` = the previous event's hash and `hash` =
 * `eventHash` of its content as stored, in one UPDATE; one sealer at a time across all instances.
 *
 * Commit order: an event whose transaction commits after events inserted later (higher id) were
 * sealed is simply sealed in a later pass with a later seq. The chain is ordered by seq, i.e. by
 * sealing; `id` and `at` need not be monotonic along it.
 *
 * The window: until sealed (normally within AUDIT_SEAL_MS), an event's row is not protected by the
 * chain: someone able to UPDATE or DELETE audit_events could change or remove it unnoticed by
 * `verify`. Once sealed, any edit or deletion is caught.
 *
 * `wait`: wait for the lock (on-demand sealing: the list endpoint, the CLI); without it a pass
 * that finds the lock held by another sealer returns at once with `locked: false` (the periodic
 * pass: that sealer does the work).
 * @throws whatever the database throws (a failed transaction seals nothing of its batch).
 */
export async function sealPendingEvents(
  prisma: Pick<PrismaClient, '$transaction'>,
  opts: { wait?: boolean; batch?: number } = {},
): Promise<SealReport> {
  const batch = opts.batch ?? SEAL_BATCH;
  let sealed = 0;
  for (;;) {
    const done = await prisma.$transaction(async (tx) => {
      if (opts.wait) {
        await tx.$queryRaw`SELECT pg_advisory_xact_lock(${AUDIT_SEAL_LOCK}::bigint)::text AS locked`;
      } else {
        const [{ locked }] = await tx.$queryRaw<Array<{ locked: boolean }>>`
          SELECT pg_try_advisory_xact_lock(${AUDIT_SEAL_LOCK}::bigint) AS locked`;
        if (!locked) return null;
      }
      return sealBatch(tx, batch);
    });
    if (done === null) return { sealed, locked: false };
    sealed += done;
    if (done < batch) return { sealed, locked: true };
  }
}

/** One batch, inside a transaction holding the lock: returns how many events it sealed. */
async function sealBatch(tx: Prisma.TransactionClient, batch: number): Promise<number> {
  const pending = await tx.auditEvent.findMany({ where: { seq: null }, orderBy: { id: 'asc' }, take: batch });
  if (pending.length === 0) return 0;
  const last = await tx.auditEvent.findFirst({
    where: { seq: { not: null } },
    orderBy: { seq: 'desc' },
    select: { seq: true, hash: true },
  });
  let seq = last?.seq ?? 0n;
  let prevHash = last?.hash ?? GENESIS_HASH;
  const ids: string[] = [];
  const seqs: string[] = [];
  const prevHashes: string[] = [];
  const hashes: string[] = [];
  for (const row of pending) {
    seq += 1n;
    const hash = eventHash({ ...row, seq, prevHash });
    ids.push(row.id.toString());
    seqs.push(seq.toString());
    prevHashes.push(prevHash);
    hashes.push(hash);
    prevHash = hash;
  }
  const updated = await tx.$executeRaw`
    UPDATE audit_events AS e
       SET seq = v.seq, prev_hash = v.prev_hash, hash = v.hash
      FROM unnest(${ids}::bigint[], ${seqs}::bigint[], ${prevHashes}::text[], ${hashes}::text[])
           AS v(id, seq, prev_hash, hash)
     WHERE e.id = v.id AND e.seq IS NULL`;
  // Under the lock nobody else seals: a row missing here was deleted meanwhile. Roll the batch back
  // rather than leave a gap in seq.
  if (updated !== pending.length) {
    throw new Error(`audit sealing: ${pending.length - updated} unsealed events vanished while sealing`);
  }
  return pending.length;
}

/** Database access for the audit trail (table audit_events): writes, sealing, pages, and the chain in order. */
@Injectable()
export class AuditRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Writes one unchained event on its own (an event that describes no database change): one
   * INSERT, sealed later like any other.
   */
  async appendAlone(event: AuditEventInput): Promise<void> {
    await insertAuditEvent(this.prisma, event);
  }

  /** Inserts one unchained event inside `tx` (see `insertAuditEvent`). */
  insert(tx: Prisma.TransactionClient, event: AuditEventInput): Promise<bigint> {
    return insertAuditEvent(tx, event);
  }

  /** Seals committed unsealed events (see `sealPendingEvents`). */
  seal(opts: { wait?: boolean; batch?: number } = {}): Promise<SealReport> {
    return sealPendingEvents(this.prisma, opts);
  }

  /** Sealed events newest first (by seq), `limit` rows. Unsealed events are not listed. */
  async list(filter: AuditEventFilter, limit: number): Promise<SealedAuditEvent[]> {
    const where: Prisma.AuditEventWhereInput = {
      ...(filter.actorId ? { actorId: filter.actorId } : {}),
      ...(filter.action ? { action: filter.action } : {}),
      ...(filter.targetId ? { targetId: filter.targetId } : {}),
      ...(filter.from || filter.to ? { at: { gte: filter.from, lt: filter.to } } : {}),
      seq: filter.beforeSeq !== undefined ? { lt: filter.beforeSeq } : { not: null },
    };
    // `seq` is set (the filter), hence prev_hash and hash too (CHECK audit_events_sealed_together).
    return (await this.prisma.auditEvent.findMany({
      where,
      orderBy: { seq: 'desc' },
      take: limit,
    })) as SealedAuditEvent[];
  }
}

/**
 * The whole sealed chain in seq order, `batch` rows at a time (for `npm run audit -- verify`,
 * which runs without Nest). Unsealed events are not part of it.
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
    after = rows[rows.length - 1].seq ?? after;
  }
}
