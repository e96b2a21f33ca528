import { createHash } from 'node:crypto';
import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { CollectionsService } from '../collections/collections.service';
import { type BackoffSchedule, backoffDelayMs } from '../common/backoff';
import { DomainError, ErrorCode } from '../common/errors';
import { jsonTooDeep } from '../common/http-limits';
import { storableJson, storableText, TooDeepError } from '../common/storable-text';
import type { Env } from '../config/env';
import type { Prisma, Transaction, TransactionKind, TransactionStatus, WebhookEvent } from '../generated/prisma/client';
import { ShutdownService } from '../lifecycle/shutdown.service';
import { MetricsService } from '../metrics/metrics.service';
import {
  callbackAmountMismatch,
  type LedgerCallbackEvent,
  maskCardNumbers,
  type ProviderAmountMismatchError,
  stripCardSecrets,
} from '../provider';
import { LedgerService } from '../transactions/ledger.service';
import { ApplyQueue } from './apply-queue';
import { InboxWriter } from './inbox-writer';
import { type InboxOutcome, InboxRepository, isDataError } from './inbox.repository';
import { type InboxEvent, RefusedEventError, WebhookHandlerRegistry, type WebhookOutcome } from './webhook-handlers';

export type { WebhookOutcome } from './webhook-handlers';

/** A verified callback body: `{event, data}` (docs/provider.md#callback-delivery). */
export interface ProviderEvent {
  event: string;
  data: Record<string, unknown>;
  /** NUL or lone surrogates were replaced by U+FFFD to make it storable (common/storable-text.ts). */
  sanitized?: boolean;
}

/** Ledger events: event name → the kind of ledger row it concerns and the status it means (docs/provider.md#events). */
const LEDGER_EVENTS: Record<LedgerCallbackEvent, { kind: TransactionKind; to: TransactionStatus }> = {
  'payout.transfer.success': { kind: 'payout', to: 'success' },
  'payout.transfer.failed': { kind: 'payout', to: 'failed' },
  'transaction.deposit.success': { kind: 'collection', to: 'success' },
};

/** An identifier as text: the provider sends ids as strings or numbers (never validated as UUIDs). */
function idText(value: unknown): string | null {
  if (typeof value === 'string' && value !== '') return value;
  return typeof value === 'number' && Number.isFinite(value) ? String(value) : null;
}

/**
 * Keys whose values are kept as they are, never masked even when long and numeric: identifiers,
 * and (other than in card events) bank account numbers and IBANs, which can be 12+ digits.
 */
const IDENTIFIER_KEY = /(^id$|id$|Id$|reference)/;
const ACCOUNT_KEY = /(account_?(number|no|num)|^account|iban)$/i;

/**
 * `maskCardNumbers` applied to every string inside `value` except identifiers and account numbers
 * (IDENTIFIER_KEY, ACCOUNT_KEY): the free text of any callback (a payout's reason or narration, a
 * card's merchant narrative) may carry a card number.
 */
function maskStrings(value: unknown, key = ''): unknown {
  if (typeof value === 'string')
    return IDENTIFIER_KEY.test(key) || ACCOUNT_KEY.test(key) ? value : maskCardNumbers(value);
  if (Array.isArray(value)) return value.map((item) => maskStrings(item, key));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, maskStrings(v, k)]));
  }
  return value;
}

function isLedgerEvent(event: string): event is LedgerCallbackEvent {
  return Object.prototype.hasOwnProperty.call(LEDGER_EVENTS, event);
}

/** Attempts after which a failing or unmatched event is no longer retried automatically. */
export const MAX_INBOX_ATTEMPTS = 10;

/** How long a retry pass holds the events it took before another pass may take them. */
const INBOX_LEASE_MS = 5 * 60_000;

/** Inbox events a recovery pass leases at once (no more than the apply queue has room for). */
export const RECOVERY_BATCH = 500;

/**
 * Events one run of the apply queue applies at most: payout events of a batch are matched in one
 * statement and moved in one (LedgerService.transitionMany), and the batch's outcomes are recorded
 * in one; under load the queue fills batches, when quiet each event runs at once on its own.
 */
export const APPLY_BATCH = 100;

/** The inbox's schedule for the one backoff rule (src/common/backoff.ts): 30 s doubling, capped at 1 h, ±20 %. */
const INBOX_BACKOFF: BackoffSchedule = {
  stepsMs: [30_000, 60_000, 120_000, 240_000, 480_000, 960_000, 1_920_000, 3_600_000],
  jitter: 0.2,
};

/**
 * Backoff before retry `attempts` + 1: 30 s doubling per attempt, capped at 1 h, with ±20 % jitter
 * so that many events failing together do not retry together.
 */
export function retryDelayMs(attempts: number, random = Math.random): number {
  return backoffDelayMs(INBOX_BACKOFF, attempts, random);
}

/**
 * The inbox key: event name + data.id + data.status (the provider sends no event id). A field that
 * is an object or array counts as its JSON text: `String()` of it says `[object Object]` for any
 * object, and throws for one like `{"toString": 1}`.
 */
export function dedupeKey(event: ProviderEvent): string {
  return createHash('sha256')
    .update(`${event.event}\n${keyPart(event.data.id)}\n${keyPart(event.data.status)}`)
    .digest('hex');
}

function keyPart(value: unknown): string {
  if (value !== null && typeof value === 'object') return JSON.stringify(value);
  // The rest of what parsed JSON holds: a string, a number, a boolean, or nothing (null, or no such field).
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : '';
}

/**
 * Provider callbacks: each is stored once in the inbox (WebhookEvent), then applied through the
 * entity's state machine (LedgerService.transition, source `webhook`). A duplicate changes nothing;
 * an event for an unknown record is kept as `unmatched`; an event without a handler yet is kept
 * as `unhandled`. Handled so far: payout.transfer.success|failed and transaction.deposit.success
 * (a collection paid: matched by the collection's provider id or the reference the gateway sent).
 */
@Injectable()
export class WebhooksService implements OnModuleInit {
  private readonly logger = new Logger('Webhooks');

  private readonly queue: ApplyQueue<WebhookEvent, WebhookOutcome>;
  /** Events were left in the inbox because the queue was full. */
  private overflowed = false;
  private pumping = false;
  /** The application is shutting down: recovery passes take no new batch. */
  private stopping = false;
  private readonly queueLimit: number;
  private readonly inbox: InboxWriter;

  constructor(
    private readonly repository: InboxRepository,
    private readonly collections: CollectionsService,
    private readonly ledger: LedgerService,
    private readonly handlers: WebhookHandlerRegistry,
    private readonly config: ConfigService<Env, true>,
    private readonly metrics: MetricsService,
    shutdown: ShutdownService,
  ) {
    this.queue = new ApplyQueue(
      (rows: WebhookEvent[]) => this.processBatch(rows),
      config.get('WEBHOOK_APPLY_CONCURRENCY', { infer: true }),
      APPLY_BATCH,
    );
    this.queue.onIdle = () => void this.pump();
    this.queueLimit = config.get('WEBHOOK_APPLY_QUEUE_LIMIT', { infer: true });
    this.inbox = new InboxWriter(repository);
    metrics.webhookQueueDepth = () => this.queue.length() + this.queue.running();
    // After the HTTP server has closed (no new callbacks), before pg-boss and the pools.
    shutdown.register('drain', 'webhook apply queue', () => this.stop());
  }

  /** Registers the ledger events (payouts, deposits) this module applies itself. */
  onModuleInit(): void {
    this.handlers.register(Object.keys(LEDGER_EVENTS), (event) => this.applyLedgerEvent(event));
  }

  /**
   * Parses a verified body into a storable event: strings and keys holding NUL or lone surrogates,
   * which PostgreSQL cannot store, get U+FFFD instead (common/storable-text.ts; `sanitized` says so).
   * @throws DomainError 400 when it is not `{event: string, data: object}`; ValidationError 400
   * when it is nested deeper than MAX_JSON_DEPTH (as the JSON body parser refuses it first).
   */
  parse(body: unknown): ProviderEvent {
    let storable: { value: unknown; replaced: boolean };
    try {
      storable = storableJson(body);
    } catch (error) {
      if (error instanceof TooDeepError) throw jsonTooDeep();
      throw error;
    }
    const candidate = storable.value as Partial<ProviderEvent> | null;
    if (!candidate || typeof candidate.event !== 'string' || !candidate.data || typeof candidate.data !== 'object') {
      throw new DomainError(ErrorCode.ValidationFailed, 'A callback body is {"event": string, "data": object}.');
    }
    return {
      event: candidate.event,
      data: candidate.data,
      ...(storable.replaced ? { sanitized: true } : {}),
    };
  }

  /**
   * Stores the event once (one INSERT … ON CONFLICT DO NOTHING on the dedupe key) and applies it:
   * before answering with WEBHOOK_APPLY=inline, else right after, on this instance's apply queue
   * (WEBHOOK_APPLY_CONCURRENCY at a time). Returns whether it was a duplicate and the outcome
   * (`pending` when it is applied in the background). Never throws for a failed application: the
   * inbox row records it (`failed`, with the error) and it is retried with backoff. An event stored
   * but not applied (the process stopped) stays `pending` and is recovered by `retryDue`.
   */
  async receive(
    event: ProviderEvent,
    rawBody: string,
    signatureHeader: string,
    headers: Record<string, string> = {},
  ): Promise<{ duplicate: boolean; outcome: WebhookOutcome | 'pending' }> {
    // Every event: card-number keys dropped, and anything shaped like a card number masked in free
    // text too (a merchant narrative, a payout's reason or narration could carry one); identifiers
    // and account numbers are kept (maskStrings).
    const data = maskStrings(stripCardSecrets(event.data)) as Record<string, unknown>;
    const clean = JSON.stringify({ event: event.event, data });
    // The raw body is kept as received unless something had to be taken out or replaced; then it is
    // the stored JSON (the signature cannot be checked again either way, the body having changed).
    const changed = event.sanitized === true || JSON.stringify(data) !== JSON.stringify(event.data);
    let row: WebhookEvent | null;
    try {
      row = await this.inbox.insert({
        dedupeKey: dedupeKey(event),
        event: event.event,
        providerId: idText(data.id),
        reference: idText(data.reference),
        rawBody: changed ? clean : storableText(rawBody),
        payloadJson: clean,
        signatureHeader,
        headersJson: JSON.stringify(headers),
      });
    } catch (error) {
      // Only this callback fails (InboxWriter inserts a failing batch row by row): a value the
      // database refuses is the sender's problem (400, never retried as is), anything else a 500.
      if (!isDataError(error)) throw error;
      this.logger.warn({ event: event.event, error: (error as Error).message }, 'callback refused: cannot be stored');
      throw new DomainError(
        ErrorCode.ValidationFailed,
        'The callback cannot be stored: the database refuses its content.',
      );
    }
    if (!row) return { duplicate: true, outcome: 'pending' };
    if (this.config.get('WEBHOOK_APPLY', { infer: true }) === 'inline') {
      return { duplicate: false, outcome: await this.queue.push(row) };
    }
    if (this.queue.length() < this.queueLimit) {
      this.enqueue(row);
    } else {
      // Past this bound an event waits in the inbox, marked due (grouped with the others arriving
      // meanwhile), instead of in memory; the queue takes such events from the database in batches
      // once it has room (`pump`), at once if it has emptied meanwhile.
      await this.inbox.markDue(row.id);
      this.overflowed = true;
      if (this.queue.idle()) void this.pump();
    }
    return { duplicate: false, outcome: 'pending' };
  }

  /**
   * Runs when the apply queue empties after an overflow: leases due inbox events from the database
   * in a batch and queues them (the queue's next drain pumps again, until none is left). Says
   * whether it queued some, found none, or failed (the events then wait for the retry pass).
   */
  private async pump(): Promise<'queued' | 'none' | 'failed'> {
    if (!this.overflowed || this.pumping) return 'none';
    this.pumping = true;
    try {
      this.overflowed = false;
      const due = await this.claimDue({ limit: Math.max(1, Math.ceil(this.queueLimit / 2)) });
      for (const row of due) this.enqueue(row);
      if (due.length === 0) return 'none';
      this.overflowed = true;
      return 'queued';
    } catch (error) {
      this.logger.error(
        { error: (error as Error).message },
        'webhook pump failed; the retry pass will take the events',
      );
      return 'failed';
    } finally {
      this.pumping = false;
    }
  }

  /**
   * Queues a stored event for background application. If even recording its outcome fails (the
   * database is gone), the event stays `pending` in the inbox and the recovery pass takes it later.
   */
  private enqueue(row: WebhookEvent): void {
    this.queue.push(row).catch((error: unknown) => {
      this.logger.error(
        { inboxId: row.id, event: row.event, error: (error as Error).message },
        'webhook apply failed; the event stays pending for the recovery pass',
      );
    });
  }

  /**
   * Waits until every event queued on this instance has been applied, pumping overflowed events
   * from the inbox too (shutdown, tests). Stops early if the inbox cannot be read: those events
   * stay due in the database for the retry pass.
   */
  async drain(): Promise<void> {
    for (;;) {
      if (!this.queue.idle()) await this.queue.drained();
      else if (this.pumping) await new Promise((resolve) => setTimeout(resolve, 10));
      else if (!this.overflowed || (await this.pump()) === 'failed') return;
    }
  }

  /** Shutdown stage `drain`: recovery passes take no new batch; what is queued is applied. */
  private async stop(): Promise<void> {
    this.stopping = true;
    await this.drain();
  }

  /**
   * Applies one stored event and records the outcome on its inbox row (`processBatch` of one).
   */
  async process(row: WebhookEvent): Promise<WebhookOutcome> {
    return (await this.processBatch([row]))[0];
  }

  /**
   * Applies stored events, in order, and records each outcome on its inbox row (one statement for
   * the batch, after every effect has committed). Payout events go together (`applyPayouts`: one
   * statement matching them, one moving them); any other event, and any payout event that path
   * cannot decide, is applied on its own afterwards in arrival order (`applyOne`), so two events
   * about one ledger row apply in the order received. A `failed` application is scheduled again
   * with backoff (`nextAttemptAt`, see `retryDelayMs`) until MAX_INBOX_ATTEMPTS, then stays `failed`
   * with its error and no next attempt: visible, never lost. An `unmatched` event is retried by
   * reconciliation on the same schedule. A ledger event the row's state machine refuses (e.g. a
   * deposit for a collection already `failed`) stays `refused` with an error naming the row and its
   * status, logged at warn: never retried, never dropped. Returns the outcomes in order.
   * @throws when the outcomes cannot be recorded (the database is gone): the events stay `pending`
   * (or leased) in the inbox and a recovery pass applies them again (as duplicates if their effect committed).
   */
  async processBatch(rows: WebhookEvent[]): Promise<WebhookOutcome[]> {
    const results: Array<{ outcome: WebhookOutcome; error: string | null } | undefined> = rows.map(() => undefined);
    try {
      await this.applyPayouts(rows, results);
    } catch (error) {
      // Nothing of the statement that failed was written: each event is applied on its own below.
      this.logger.warn({ events: rows.length, error: (error as Error).message }, 'batch apply failed; one by one');
    }
    for (let i = 0; i < rows.length; i++) results[i] ??= await this.applyOne(rows[i]);
    const processedAt = new Date();
    const outcomes: Array<InboxOutcome & { id: string }> = rows.map((row, i) => {
      const { outcome, error } = results[i] as { outcome: WebhookOutcome; error: string | null };
      // Event names without a handler are counted together: a label per unknown name would grow without bound.
      this.metrics.webhookEventsProcessed.inc({ event: outcome === 'unhandled' ? 'other' : row.event, outcome });
      const attempts = row.attempts + 1;
      const retry = (outcome === 'failed' || outcome === 'unmatched') && attempts < MAX_INBOX_ATTEMPTS;
      return {
        id: row.id,
        outcome,
        error,
        processedAt,
        attempts,
        nextAttemptAt: retry ? new Date(processedAt.getTime() + retryDelayMs(attempts)) : null,
      };
    });
    await this.repository.recordOutcomes(outcomes);
    return outcomes.map((result) => result.outcome as WebhookOutcome);
  }

  /** Applies one event through its handler: its outcome, or `refused` / `failed` with the error (logged). */
  private async applyOne(row: WebhookEvent): Promise<{ outcome: WebhookOutcome; error: string | null }> {
    try {
      return { outcome: await this.apply(row), error: null };
    } catch (e) {
      const error = e instanceof Error ? e.message : String(e);
      if (e instanceof RefusedEventError) {
        this.logger.warn({ event: row.event, inboxId: row.id, error }, 'webhook refused by the state machine');
        return { outcome: 'refused', error };
      }
      this.logger.error({ event: row.event, inboxId: row.id, error }, 'webhook processing failed');
      return { outcome: 'failed', error };
    }
  }

  /**
   * The payout events of `rows` (payout.transfer.success|failed), applied together: their ledger
   * rows matched in one statement (by provider id, else reference, as `matchTransaction`), and every
   * move the state machine allows from the status read made in one statement
   * (LedgerService.transitionMany: history entries and outbox messages included). Sets `results[i]`
   * for the events decided here: `unmatched` (no such payout yet), `applied`, `unchanged` (a
   * duplicate). The others (a move refused, a row moved meanwhile, a second event for a row already
   * in the batch) are left undecided for `applyOne`, which applies them in order after this.
   * @throws when a statement fails (nothing of that statement is written; the events stay undecided).
   */
  private async applyPayouts(
    rows: WebhookEvent[],
    results: Array<{ outcome: WebhookOutcome; error: string | null } | undefined>,
  ): Promise<void> {
    const payouts = rows.flatMap((row, index) =>
      isLedgerEvent(row.event) && LEDGER_EVENTS[row.event].kind === 'payout' ? [{ row, index }] : [],
    );
    if (payouts.length === 0) return;
    const found = await this.ledger.findManyByProviderIdOrReference(
      'payout',
      payouts.map(({ row }) => ({ providerId: row.providerId, reference: row.reference })),
    );
    const moves: Parameters<LedgerService['transitionMany']>[0] = [];
    const moved: number[] = [];
    payouts.forEach(({ row, index }, k) => {
      const before = found[k];
      if (!before) {
        results[index] = { outcome: 'unmatched', error: null };
        return;
      }
      const event = row.event as LedgerCallbackEvent;
      const { to } = LEDGER_EVENTS[event];
      const data = (row.payload as { data?: Record<string, unknown> }).data ?? {};
      // Money the event states that is not the row's (or cannot be read) is left to applyOne, which
      // holds the row for review (or keeps the event failed): only agreeing events move together.
      if (this.statedMoneyDiffers(event, data, before) !== false) return;
      moves.push({
        before,
        to,
        failureReason: to === 'failed' && typeof data.reason === 'string' ? data.reason : undefined,
        payload: row.payload as Prisma.InputJsonValue,
      });
      moved.push(index);
    });
    const outcomes = await this.ledger.transitionMany(moves, 'webhook');
    outcomes.forEach((outcome, k) => {
      if (outcome) results[moved[k]] = { outcome, error: null };
    });
  }

  /**
   * Re-processes inbox events that are due: `failed` and `unmatched` ones whose `nextAttemptAt` has
   * come, and `pending` ones stored more than `staleAfterMs` ago without an outcome (the process
   * stopped between storing and applying). Drains them back to back: leases a batch (RECOVERY_BATCH,
   * no more than the apply queue has room for), feeds it to the apply queue (WEBHOOK_APPLY_CONCURRENCY
   * at a time, shared with live callbacks), leases the next batch as soon as the queue runs low, and
   * stops when none is due — or after `limit` events. Due rows are leased first (`FOR UPDATE SKIP
   * LOCKED`, then `nextAttemptAt` pushed past the lease), so passes on several gateway instances
   * share the work and never take the same event; an event is retried at most once per pass (rows
   * processed since the pass began are not taken again). Returns how many were retried and how
   * many now settled (neither `failed` nor `unmatched`).
   */
  async retryDue(opts: { limit?: number; staleAfterMs?: number; now?: Date } = {}): Promise<{
    retried: number;
    settled: number;
  }> {
    const limit = opts.limit ?? Number.POSITIVE_INFINITY;
    // Events processed from this instant on are this pass's own retries, skipped until the next pass.
    // One millisecond ahead: processed_at has millisecond precision, and an event the previous pass
    // recorded in the very millisecond this pass starts must still count as before it.
    const passStartedAt = new Date(Date.now() + 1);
    const lowWater = Math.max(1, Math.floor(Math.min(RECOVERY_BATCH, this.queueLimit) / 2));
    let retried = 0;
    let settled = 0;
    let inFlight = 0;
    // Woken when an event of this pass finishes and the queue is low (or all of them are done).
    let wake: (() => void) | null = null;
    const finished = () => {
      inFlight -= 1;
      if (wake && (inFlight === 0 || this.queue.length() < lowWater)) {
        wake();
        wake = null;
      }
    };
    const waitUntil = async (ready: () => boolean) => {
      while (!ready()) await new Promise<void>((resolve) => (wake = resolve));
    };
    try {
      while (retried < limit && !this.stopping) {
        // Wait for room: the queue holds at most queueLimit, and the next batch is leased only once
        // it runs low (so leased events do not wait long in memory).
        await waitUntil(() => inFlight === 0 || this.queue.length() < lowWater);
        const room = Math.max(1, this.queueLimit - this.queue.length());
        const take = Math.min(RECOVERY_BATCH, room, limit - retried);
        const due = await this.claimDue({ ...opts, limit: take, notProcessedSince: passStartedAt });
        if (due.length === 0) break;
        retried += due.length;
        inFlight += due.length;
        for (const row of due) {
          this.queue
            .push(row)
            .then(
              (outcome) => {
                if (outcome !== 'failed' && outcome !== 'unmatched') settled += 1;
              },
              (error: unknown) => {
                // Recording the outcome failed (the database is gone): the lease lapses, a later pass retries it.
                this.logger.error({ inboxId: row.id, error: (error as Error).message }, 'inbox retry failed');
              },
            )
            .finally(finished);
        }
      }
    } finally {
      await waitUntil(() => inFlight === 0);
    }
    return { retried, settled };
  }

  /**
   * Leases the inbox events that are due (see `retryDue`; also `pending` events marked due by an
   * overflowing queue) and returns them, oldest first. `notProcessedSince`: skip events processed
   * at or after that time (a pass's own retries).
   */
  private async claimDue(
    opts: { limit?: number; staleAfterMs?: number; now?: Date; notProcessedSince?: Date } = {},
  ): Promise<WebhookEvent[]> {
    const now = opts.now ?? new Date();
    const staleBefore = new Date(now.getTime() - (opts.staleAfterMs ?? 60_000));
    const leaseUntil = new Date(now.getTime() + INBOX_LEASE_MS);
    return this.repository.claimDue({
      now,
      staleBefore,
      leaseUntil,
      limit: opts.limit ?? 100,
      notProcessedSince: opts.notProcessedSince ?? null,
    });
  }

  private async apply(row: WebhookEvent): Promise<WebhookOutcome> {
    const handler = this.handlers.get(row.event);
    if (!handler) return 'unhandled';
    const data = (row.payload as { data?: Record<string, unknown> }).data ?? {};
    return handler({ row, event: row.event, data });
  }

  /**
   * Whether the money `event` states differs from `row`'s (callbackAmountMismatch): false when it
   * agrees or states none, true when it differs, null when it cannot be read (the check throws).
   */
  private statedMoneyDiffers(
    event: LedgerCallbackEvent,
    data: Record<string, unknown>,
    row: { amount: bigint; currency: string },
  ): boolean | null {
    try {
      return callbackAmountMismatch(event, data, { amountMinor: row.amount, currency: row.currency }) !== null;
    } catch {
      return null;
    }
  }

  /**
   * payout.transfer.success|failed and transaction.deposit.success → the ledger row's state machine.
   * The money the event states is checked against the row first (callbackAmountMismatch): a
   * different amount or currency is not applied; the row goes to `needs_review` (a person decides,
   * as for a mismatched answer: docs/money-safety.md) and the event is kept `refused` saying why.
   * @throws ValidationError when the event's amount cannot be read (kept `failed`, retried).
   */
  private async applyLedgerEvent({ row, event: name, data }: InboxEvent): Promise<WebhookOutcome> {
    const event = name as LedgerCallbackEvent;
    const rule = LEDGER_EVENTS[event];
    const found = await this.matchTransaction(rule.kind, row);
    if (!found) return 'unmatched';
    const transactionId = found.id;
    const mismatch = callbackAmountMismatch(event, data, { amountMinor: found.amount, currency: found.currency });
    if (mismatch) return this.holdForReview(row, found, mismatch);
    const { outcome, transaction } = await this.ledger.transition(transactionId, rule.to, 'webhook', {
      payload: row.payload as Prisma.InputJsonValue,
      patch: rule.to === 'failed' && typeof data.reason === 'string' ? { failureReason: data.reason } : undefined,
    });
    if (
      outcome === 'refused' &&
      rule.kind === 'collection' &&
      rule.to === 'success' &&
      (transaction.status === 'failed' || transaction.status === 'expired')
    ) {
      // A deposit for a collection already failed (provider_answer_lost) or expired: the payer paid
      // anyway and the money is at the provider. Not silently kept: the row goes to a person.
      const review = await this.ledger.transition(transactionId, 'needs_review', 'webhook', {
        payload: {
          reason: `${event} after the collection was ${transaction.status}`,
          event: row.payload,
        } as Prisma.InputJsonValue,
      });
      if (review.outcome !== 'refused') return review.outcome;
    }
    if (outcome === 'refused') {
      // Anything else the state machine refuses is kept `refused` with this error, never dropped.
      throw new RefusedEventError(
        `${rule.kind} ${transactionId} is ${transaction.status}` +
          (transaction.failureReason ? ` (${transaction.failureReason})` : '') +
          `: ${event} would move it to ${rule.to}, which its state machine refuses; kept in the inbox.`,
      );
    }
    return outcome;
  }

  /**
   * A ledger event stating other money than its row holds: the row moves to `needs_review` (from
   * any status the state machine allows; a final row stays as it is), the mismatch is counted
   * (`provider_amount_mismatch_total{operation=<event>}`) and logged, and the event is kept
   * `refused` with an error naming both amounts and where the row is. Never applied as sent.
   */
  private async holdForReview(
    row: WebhookEvent,
    transaction: { id: string; kind: TransactionKind },
    mismatch: ProviderAmountMismatchError,
  ): Promise<never> {
    this.metrics.countProviderAmountMismatch(mismatch.operation);
    const review = await this.ledger.transition(transaction.id, 'needs_review', 'webhook', {
      payload: row.payload as Prisma.InputJsonValue,
      patch: { failureReason: mismatch.message },
    });
    const where =
      review.transaction.status === 'needs_review'
        ? 'held needs_review for a person to resolve'
        : `left ${review.transaction.status} (its state machine cannot hold it for review)`;
    this.logger.warn(
      {
        event: row.event,
        inboxId: row.id,
        transactionId: transaction.id,
        asked: mismatch.extensions.asked,
        answered: mismatch.extensions.answered,
      },
      'callback states another amount than the ledger row; not applied',
    );
    throw new RefusedEventError(
      `${mismatch.message} ${transaction.kind} ${transaction.id} ${where}; the event was not applied.`,
    );
  }

  /** The ledger row an event is about: by the provider's id or by the reference the gateway sent. */
  private async matchTransaction(kind: TransactionKind, row: WebhookEvent): Promise<Transaction | null> {
    if (kind === 'collection' && row.providerId) {
      const transactionId = await this.collections.transactionIdOfProviderId(row.providerId);
      if (transactionId) return this.ledger.get(transactionId);
    }
    return this.ledger.findByProviderIdOrReference(kind, row.providerId, row.reference);
  }
}
