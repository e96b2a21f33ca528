import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Env } from '../config/env';
import { ShutdownService } from '../lifecycle/shutdown.service';
import { MetricsService } from '../metrics/metrics.service';
import { afterFailedAttempt } from './delivery-schedule';
import { guardedLookup, isAllowedAddress, OutboundDns } from './outbound-address';
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
const USER_AGENT = 'wallet-gateway-webhooks/1';

/**
 * Delivers outbox messages to their subscriptions, signed per Standard Webhooks (headers
 * webhook-id = the message id, stable across retries; webhook-timestamp; webhook-signature).
 * The message id is also the delivery's request id: `x-request-id` carries it on every attempt, so
 * a receiver's logs and ours (`messageId`) name the same delivery.
 * A 2xx answer is `delivered`; anything else (other status, redirect, network error, no answer
 * within OUTBOX_TIMEOUT_MS, an address refused by outbound-address.ts at connect time) is retried on the schedule of delivery-schedule.ts until
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
  /** OUTBOUND_ALLOW_PRIVATE: loopback and private receivers allowed (never in production). */
  private readonly allowPrivate: boolean;
  /** Keep-alive agents whose sockets connect only to addresses the guarded lookup allowed. */
  private readonly agents: { http: HttpAgent; https: HttpsAgent };

  constructor(
    private readonly outbox: OutboxRepository,
    private readonly config: ConfigService<Env, true>,
    private readonly metrics: MetricsService,
    dns: OutboundDns,
    shutdown: ShutdownService,
  ) {
    shutdown.register('drain', 'outbox pass', () => this.stop());
    this.allowPrivate = config.get('OUTBOUND_ALLOW_PRIVATE', { infer: true });
    const lookup = guardedLookup((host) => dns.resolve(host), this.allowPrivate);
    this.agents = {
      http: new HttpAgent({ keepAlive: true, lookup }),
      https: new HttpsAgent({ keepAlive: true, lookup }),
    };
  }

  onApplicationBootstrap(): void {
    if (this.config.get('JOBS_ENABLED', { infer: true })) this.schedule(0);
  }

  /** Shutdown stage `drain`: stops the poller and waits for a pass in flight (before the pools close). */
  private async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
    this.agents.http.destroy();
    this.agents.https.destroy();
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

  /**
   * POSTs the signed event once, redirects not followed. Never throws: every failure becomes a
   * result whose error names only its class (timeout, refused, tls, dns, blocked_address, network,
   * http_<status>): no socket code, no address, nothing of the receiver's answer.
   */
  private async attempt(message: ClaimedMessage, timeoutMs: number): Promise<AttemptResult> {
    let body: string;
    let headers: Record<string, string>;
    try {
      body = JSON.stringify(message.payload);
      headers = { ...signStandardWebhook(message.secret, message.id, new Date(), body) };
    } catch (error) {
      return { ok: false, statusCode: null, error: `could not sign the event: ${(error as Error).message}` };
    }
    let url: URL;
    try {
      url = new URL(message.url);
    } catch {
      return { ok: false, statusCode: null, error: 'invalid_url' };
    }
    // An IP literal connects without a lookup: it is checked here (a name is checked in the lookup).
    const literal = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(literal) && !isAllowedAddress(literal, this.allowPrivate)) {
      return { ok: false, statusCode: null, error: 'blocked_address' };
    }
    try {
      const status = await this.post(
        url,
        body,
        {
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
          'x-request-id': message.id,
          ...headers,
        },
        timeoutMs,
      );
      if (status >= 200 && status < 300) return { ok: true, statusCode: status, error: null };
      return { ok: false, statusCode: status, error: `http_${status}` };
    } catch (error) {
      return { ok: false, statusCode: null, error: failureClass(error) };
    }
  }

  /** One POST through the guarded agents; resolves with the answer's status (its body is discarded). */
  private post(url: URL, body: string, headers: Record<string, string>, timeoutMs: number): Promise<number> {
    const https = url.protocol === 'https:';
    const send = https ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const req = send(
        url,
        {
          method: 'POST',
          agent: https ? this.agents.https : this.agents.http,
          headers: { ...headers, 'content-length': Buffer.byteLength(body) },
          signal: AbortSignal.timeout(timeoutMs),
        },
        (res) => {
          res.resume();
          res.on('error', () => undefined);
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
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

/** The class of a failed attempt, in words that name no address, socket code or answer. */
export function failureClass(error: unknown): string {
  const e = error as { name?: string; code?: string; cause?: { name?: string; code?: string } } | undefined;
  const code = e?.code ?? e?.cause?.code ?? '';
  if (e?.name === 'AbortError' || e?.name === 'TimeoutError' || e?.cause?.name === 'TimeoutError') return 'timeout';
  if (code === 'ETIMEDOUT' || code === 'ABORT_ERR') return 'timeout';
  if (code === 'EBLOCKEDADDRESS') return 'blocked_address';
  if (code === 'ECONNREFUSED') return 'refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_FAIL' || code === 'ENODATA') return 'dns';
  if (/SSL|TLS|CERT|EPROTO/.test(code)) return 'tls';
  return 'network';
}
