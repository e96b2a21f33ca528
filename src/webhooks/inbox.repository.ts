import { Injectable } from '@nestjs/common';
import { PrismaService } from '../database/prisma.service';
import { Prisma, type WebhookEvent } from '../generated/prisma/client';

/** One callback to store in the inbox (columns of `webhook_events` set on arrival). */
export interface InboxInsert {
  dedupeKey: string;
  event: string;
  providerId: string | null;
  reference: string | null;
  rawBody: string;
  /** The stored `{event, data}` JSON text (card secrets stripped). */
  payloadJson: string;
  signatureHeader: string;
  /** JSON text of the request headers of interest (see WebhooksController). */
  headersJson: string;
}

/** What one application of an inbox event left: its outcome, error, attempts so far and next attempt (or none). */
export interface InboxOutcome {
  outcome: string;
  error: string | null;
  processedAt: Date;
  attempts: number;
  nextAttemptAt: Date | null;
}

/** Columns of `webhook_events` named as the WebhookEvent type's fields. */
const WEBHOOK_EVENT_COLUMNS = Prisma.sql`id, dedupe_key AS "dedupeKey", event, provider_id AS "providerId",
  reference, raw_body AS "rawBody", payload, signature_header AS "signatureHeader", received_at AS "receivedAt",
  processed_at AS "processedAt", outcome, error, attempts, next_attempt_at AS "nextAttemptAt", headers`;

/**
 * Whether a database error is about the data of the statement (SQLSTATE class 22 "data exception",
 * or 54 "program limit exceeded", e.g. a value nested too deeply) rather than the database being
 * unavailable: such a row can never be stored, and retrying it is pointless.
 */
export function isDataError(error: unknown): boolean {
  if (!(error instanceof Prisma.PrismaClientKnownRequestError)) return false;
  const meta = error.meta as { driverAdapterError?: { cause?: { originalCode?: string; code?: string } } } | undefined;
  const cause = meta?.driverAdapterError?.cause;
  const state = cause?.originalCode ?? cause?.code ?? '';
  return /^(22|54)/.test(state);
}

/**
 * The inbox of provider callbacks (`webhook_events`): storing each once, recording what its
 * application did, and leasing the events due for another attempt. The only code that touches
 * the table (InboxWriter batches the inserts; WebhooksService decides what happens).
 */
@Injectable()
export class InboxRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Claim "store each event once": one multi-row `INSERT … ON CONFLICT (dedupe_key) DO NOTHING`
   * with the given row ids. Returns the rows inserted; an event whose dedupe key is already stored
   * is not among them. One value the database refuses fails the whole statement (see isDataError).
   */
  insertMany(rows: Array<{ id: string; values: InboxInsert }>): Promise<WebhookEvent[]> {
    const values = Prisma.join(
      rows.map(
        ({ id, values: v }) =>
          Prisma.sql`(${id}::uuid, ${v.dedupeKey}, ${v.event}, ${v.providerId}, ${v.reference}, ${v.rawBody},
                      ${v.payloadJson}::jsonb, ${v.signatureHeader}, ${v.headersJson}::jsonb)`,
      ),
    );
    return this.prisma.$queryRaw<WebhookEvent[]>`
      INSERT INTO webhook_events (id, dedupe_key, event, provider_id, reference, raw_body, payload, signature_header, headers)
      VALUES ${values}
      ON CONFLICT (dedupe_key) DO NOTHING
      RETURNING ${WEBHOOK_EVENT_COLUMNS}`;
  }

  /** Marks event `id` due now (left in the inbox by a full apply queue, taken later by `claimDue`). */
  async markDue(id: string, now: Date): Promise<void> {
    await this.prisma.webhookEvent.update({ where: { id }, data: { nextAttemptAt: now } });
  }

  /** Records the outcome of one application of event `id` (raw SQL on the hot path: a compiled Prisma update costs about twice the CPU). */
  async recordOutcome(id: string, result: InboxOutcome): Promise<void> {
    await this.prisma.$executeRaw`
      UPDATE webhook_events
      SET outcome = ${result.outcome}, error = ${result.error}, processed_at = ${result.processedAt},
          attempts = ${result.attempts}, next_attempt_at = ${result.nextAttemptAt}::timestamptz
      WHERE id = ${id}::uuid`;
  }

  /**
   * Claim "lease the due events": `failed`/`unmatched` events whose `next_attempt_at` ≤ `now`,
   * `pending` ones marked due (≤ `now`), and `pending` ones never marked received before
   * `staleBefore` — skipping those processed at or after `notProcessedSince` when given — the
   * `limit` received first (returned in no particular order). Rows are locked `FOR UPDATE SKIP LOCKED` and their `next_attempt_at`
   * pushed to `leaseUntil` in the same statement, so concurrent passes never take the same event.
   */
  claimDue(opts: {
    now: Date;
    staleBefore: Date;
    leaseUntil: Date;
    limit: number;
    notProcessedSince: Date | null;
  }): Promise<WebhookEvent[]> {
    const { now, staleBefore, leaseUntil, limit, notProcessedSince } = opts;
    return this.prisma.$queryRaw<WebhookEvent[]>`
      UPDATE webhook_events SET next_attempt_at = ${leaseUntil}
      WHERE id IN (
        SELECT id FROM webhook_events
        WHERE ((outcome IN ('failed', 'unmatched') AND next_attempt_at <= ${now})
           OR (outcome = 'pending' AND next_attempt_at <= ${now})
           OR (outcome = 'pending' AND next_attempt_at IS NULL AND received_at < ${staleBefore}))
          AND (${notProcessedSince}::timestamptz IS NULL OR processed_at IS NULL OR processed_at < ${notProcessedSince}::timestamptz)
        ORDER BY received_at
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED)
      RETURNING ${WEBHOOK_EVENT_COLUMNS}`;
  }
}
