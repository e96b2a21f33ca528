import { Injectable } from '@nestjs/common';
import { DatabaseError } from 'pg';
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
  // Statements sent through node-postgres (PrismaService.pool) fail with its DatabaseError.
  if (error instanceof DatabaseError) return /^(22|54)/.test(error.code ?? '');
  if (!(error instanceof Prisma.PrismaClientKnownRequestError)) return false;
  const meta = error.meta as { driverAdapterError?: { cause?: { originalCode?: string; code?: string } } } | undefined;
  const cause = meta?.driverAdapterError?.cause;
  const state = cause?.originalCode ?? cause?.code ?? '';
  return /^(22|54)/.test(state);
}

/**
 * The inbox of provider callbacks (`webhook_events`): storing each once, recording what its
 * application did, and leasing the events due for another attempt. The only code that touches
 * the table (InboxWriter batches the inserts; WebhooksService decides what happens). Every
 * statement here is on the callbacks' hot path and goes through node-postgres (PrismaService.sql,
 * on Prisma's own connections), without Prisma's per-query cost.
 */
@Injectable()
export class InboxRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Claim "store each event once": one `INSERT … SELECT FROM json_to_recordset($1) ON CONFLICT
   * (dedupe_key) DO NOTHING` with the given row ids, whatever the number of rows (one text, prepared
   * once per connection). The rows travel as
   * ONE JSON text parameter (each `payloadJson` and `headersJson` embedded as it is, not parsed
   * again): per-row parameters cost the client far more (each value converted on its own).
   * Returns the rows inserted, built from the values given and the `received_at` the database set
   * (pending, no attempt yet); an event whose dedupe key is already stored is not among them. One
   * value the database refuses fails the whole statement (see isDataError).
   */
  async insertMany(rows: Array<{ id: string; values: InboxInsert }>): Promise<WebhookEvent[]> {
    const document = `[${rows
      .map(
        ({ id, values: v }) =>
          `{"id":${JSON.stringify(id)},"dedupe_key":${JSON.stringify(v.dedupeKey)},"event":${JSON.stringify(v.event)},` +
          `"provider_id":${JSON.stringify(v.providerId)},"reference":${JSON.stringify(v.reference)},` +
          `"raw_body":${JSON.stringify(v.rawBody)},"payload":${v.payloadJson},` +
          `"signature_header":${JSON.stringify(v.signatureHeader)},"headers":${v.headersJson}}`,
      )
      .join(',')}]`;
    const inserted = await this.prisma.sql<{ id: string; receivedAt: Date }>(
      Prisma.sql`
      INSERT INTO webhook_events (id, dedupe_key, event, provider_id, reference, raw_body, payload, signature_header, headers)
      SELECT id, dedupe_key, event, provider_id, reference, raw_body, payload, signature_header, headers
      FROM json_to_recordset(${document}::json) AS r(id uuid, dedupe_key text, event text, provider_id text,
        reference text, raw_body text, payload jsonb, signature_header text, headers jsonb)
      ON CONFLICT (dedupe_key) DO NOTHING
      RETURNING id, received_at AS "receivedAt"`,
      undefined,
      'inbox_insert',
    );
    const byId = new Map(rows.map((row) => [row.id, row.values]));
    return inserted.map(({ id, receivedAt }) => {
      const v = byId.get(id) as InboxInsert;
      return {
        id,
        dedupeKey: v.dedupeKey,
        event: v.event,
        providerId: v.providerId,
        reference: v.reference,
        rawBody: v.rawBody,
        payload: JSON.parse(v.payloadJson) as Prisma.JsonValue,
        signatureHeader: v.signatureHeader,
        headers: JSON.parse(v.headersJson) as Prisma.JsonValue,
        receivedAt,
        processedAt: null,
        outcome: 'pending',
        error: null,
        attempts: 0,
        nextAttemptAt: null,
      };
    });
  }

  /** Marks events `ids` due at `now` (left in the inbox by a full apply queue, taken later by `claimDue`). */
  async markDue(ids: string[], now: Date): Promise<void> {
    await this.prisma.sql(
      Prisma.sql`UPDATE webhook_events SET next_attempt_at = ${now} WHERE id = ANY(${ids}::uuid[])`,
    );
  }

  /**
   * Records the outcome of one application of each event of `results` (by `id`, each once), in one
   * statement whatever their number (the outcomes travel as one JSON text parameter).
   */
  async recordOutcomes(results: Array<InboxOutcome & { id: string }>): Promise<void> {
    if (results.length === 0) return;
    const document = JSON.stringify(
      results.map((r) => ({
        id: r.id,
        outcome: r.outcome,
        error: r.error,
        processed_at: r.processedAt,
        attempts: r.attempts,
        next_attempt_at: r.nextAttemptAt,
      })),
    );
    await this.prisma.sql(Prisma.sql`
      UPDATE webhook_events w
      SET outcome = o.outcome, error = o.error, processed_at = o.processed_at, attempts = o.attempts,
          next_attempt_at = o.next_attempt_at
      FROM json_to_recordset(${document}::json)
        AS o(id uuid, outcome text, error text, processed_at timestamptz, attempts int, next_attempt_at timestamptz)
      WHERE w.id = o.id`);
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
    return this.prisma.sql<WebhookEvent>(Prisma.sql`
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
      RETURNING ${WEBHOOK_EVENT_COLUMNS}`);
  }
}
