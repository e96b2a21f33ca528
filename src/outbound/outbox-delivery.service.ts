import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Env } from '../config/env';
import { ShutdownService } from '../lifecycle/shutdown.service';
import { MetricsService } from '../metrics/metrics.service';
import { afterFailedAttempt } from './delivery-schedule';
import { ClaimedMessage, OutboxRepository } from './outbox.repository';
import { signStandardWebhook } from './standard-webhooks';

/** Counts of one delivery pass. */
export interface DeliveryReport {
  /** Messages taken (due and leased by this pass). */
  attempted: number;
  delivered: number;
  /** Failed attempts that will be tried again later. */
  retrying: number;
  /** Failed attempts after which the message gave up (`failed`). */
  failed: number;
}

/** The outcome of one HTTP attempt. */
interface AttemptResult {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
}

/** Messages leased per pass, and attempts in flight at once within a pass. */
const BATCH_SIZE = 50;
const CONCURRENCY = 8;
/** Characters of a refusing receiver's answer kept in `lastError`. */
const ERROR_BODY_CHARS = 200;
const USER_AGENT = 'wallet-gateway-webhooks/1';

/**
 * Delivers outbox messages to their subscriptions, signed per Standard Webhooks (headers
 * webhook-id = the message id, stable across retries; webhook-timestamp; webhook-signature).
 * A 2xx answer is `delivered`; anything else (other status, redirect, network error, no answer
 * within OUTBOX_TIMEOUT_MS) is retried on the schedule of delivery-schedule.ts until
 * OUTBOX_MAX_ATTEMPTS, then `failed` with the last error. Safe with several gateway instances:
 * each message is leased by one pass (`FOR UPDATE SKIP LOCKED`). Delivery is at least once: a
 * receiver deduplicates on webhook-id. With JOBS_ENABLED each instance runs a pass every
 * OUTBOX_POLL_MS (at once again while passes find full batches). Logs name the subscription and
 * message ids, never the URL or the secret.
 */
@Injectable()
export class OutboxDeliveryService implements OnApplicationBootstrap {
  private readonly logger = new Logger('Outbox');
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;
  private stopped = false;

  constructor(
    private readonly outbox: OutboxRepository,
    private readonly config: ConfigService<Env, true>,
    private readonly metrics: MetricsService,
    shutdown: ShutdownService,
  ) {
    shutdown.register('drain', 'outbox pass', () => this.stop());
  }

  onApplicationBootstrap(): void {
    if (this.config.get('JOBS_ENABLED', { infer: true })) this.schedule(0);
  }

  /** Shutdown stage `drain`: stops the poller and waits for a pass in flight (before the pools close). */
  private async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  /**
   * One pass: leases due messages (up to `limit`) and attempts each once. `now` decides what is
   * due and when retries fall (tests move it forward instead of sleeping); attempts are made and
   * signed at the real time.
   */
  async deliverDue(opts: { now?: Date; limit?: number } = {}): Promise<DeliveryReport> {
    const now = opts.now ?? new Date();
    const timeoutMs = this.config.get('OUTBOX_TIMEOUT_MS', { infer: true });
    // Long enough for the attempt and the write of its result; a pass that dies leaves them due after it.
    const leaseUntil = new Date(now.getTime() + 2 * timeoutMs + 30_000);
    const claimed = await this.outbox.claimDue(now, leaseUntil, opts.limit ?? BATCH_SIZE);
    const report: DeliveryReport = { attempted: claimed.length, delivered: 0, retrying: 0, failed: 0 };
    let next = 0;
    const worker = async () => {
      while (next < claimed.length) {
        const outcome = await this.deliverOne(claimed[next++], now, timeoutMs);
        report[outcome] += 1;
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, claimed.length) }, worker));
    return report;
  }

  private async deliverOne(
    message: ClaimedMessage,
    now: Date,
    timeoutMs: number,
  ): Promise<'delivered' | 'retrying' | 'failed'> {
    const ids = { subscriptionId: message.subscriptionId, messageId: message.id, attempt: message.attempts };
    const result = await this.attempt(message, timeoutMs);
    if (result.ok) {
      await this.outbox.markDelivered(message, result.statusCode ?? 200, new Date());
      this.metrics.outboundDeliveries.inc({ outcome: 'delivered' });
      this.logger.log({ ...ids, statusCode: result.statusCode }, 'outbound event delivered');
      return 'delivered';
    }
    const next = afterFailedAttempt(message.attempts, this.config.get('OUTBOX_MAX_ATTEMPTS', { infer: true }), now);
    await this.outbox.markAttemptFailed(
      message,
      { statusCode: result.statusCode, error: result.error ?? 'failed' },
      next,
    );
    this.metrics.outboundDeliveries.inc({ outcome: next.status === 'failed' ? 'failed' : 'retrying' });
    if (next.status === 'failed') {
      this.logger.error({ ...ids, statusCode: result.statusCode }, 'outbound event gave up after the last attempt');
      return 'failed';
    }
    this.logger.warn(
      { ...ids, statusCode: result.statusCode, nextAttemptAt: next.nextAttemptAt },
      'outbound event attempt failed; will retry',
    );
    return 'retrying';
  }

  /** POSTs the signed event once. Never throws: every failure becomes a result. */
  private async attempt(message: ClaimedMessage, timeoutMs: number): Promise<AttemptResult> {
    let body: string;
    let headers: Record<string, string>;
    try {
      body = JSON.stringify(message.payload);
      headers = { ...signStandardWebhook(message.secret, message.id, new Date(), body) };
    } catch (error) {
      return { ok: false, statusCode: null, error: `could not sign the event: ${(error as Error).message}` };
    }
    try {
      const res = await fetch(message.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': USER_AGENT, ...headers },
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(timeoutMs),
      });
      const statusCode = res.status > 0 ? res.status : null;
      if (res.status >= 200 && res.status < 300) {
        await res.body?.cancel().catch(() => undefined);
        return { ok: true, statusCode, error: null };
      }
      const text = await readStart(res, ERROR_BODY_CHARS);
      return {
        ok: false,
        statusCode,
        error: `receiver answered HTTP ${res.status}${text ? `: ${text}` : ''}`,
      };
    } catch (error) {
      return { ok: false, statusCode: null, error: describeNetworkError(error, timeoutMs) };
    }
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.deliverDue()
        .then((report) => {
          if (report.attempted > 0) this.logger.log({ report }, 'outbox pass done');
          return report.attempted >= BATCH_SIZE ? 0 : this.config.get('OUTBOX_POLL_MS', { infer: true });
        })
        .catch((error: unknown) => {
          this.logger.error({ err: error }, 'outbox pass failed');
          return this.config.get('OUTBOX_POLL_MS', { infer: true });
        })
        .then((next) => {
          this.running = undefined;
          this.schedule(next);
        });
    }, delayMs);
    this.timer.unref();
  }
}

/** The first `max` characters of a response body (the rest is not read). */
async function readStart(res: Response, max: number): Promise<string> {
  if (!res.body) return '';
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    while (size < max) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(Buffer.from(value));
      size += value.length;
    }
  } catch {
    /* a body cut short: keep what arrived */
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(chunks).toString('utf8').slice(0, max).replace(/\s+/g, ' ').trim();
}

/** A network failure in words that name no URL: timeouts, refused connections, DNS. */
function describeNetworkError(error: unknown, timeoutMs: number): string {
  const e = error as { name?: string; message?: string; cause?: { code?: string; name?: string } };
  if (e?.name === 'TimeoutError' || e?.cause?.name === 'TimeoutError') return `no answer within ${timeoutMs} ms`;
  if (e?.name === 'AbortError') return `no answer within ${timeoutMs} ms`;
  const code = e?.cause?.code;
  return code ? `network error: ${code}` : 'network error';
}
