import { Injectable } from '@nestjs/common';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** Outcome of one provider call, as recorded in `provider_call_duration_seconds`. */
export type ProviderCallOutcome = 'ok' | 'rejected' | 'unavailable' | 'timeout' | 'retry_later';

/** Backlogs read from the database at scrape time (counts across every instance). */
export interface DatabaseBacklog {
  inboxPending: number;
  /** Seconds since the oldest pending callback was received; 0 when none. */
  inboxOldestPendingSeconds: number;
  outboxPending: number;
  ledgerUnknown: number;
}

/** One connection pool of this instance at scrape time: connections open (`total`), `idle`, and queries `waiting` for one. */
export interface PoolReading {
  pool: string;
  total: number;
  idle: number;
  waiting: number;
}

/**
 * Prometheus metrics (prom-client), served at GET /metrics.
 * - `http_request_duration_seconds{method,route,status}`: histogram per matched route template.
 * - `provider_call_duration_seconds{operation,outcome}`: histogram per provider operation.
 * - `webhook_signature_failures_total`: callbacks refused for a missing or wrong signature.
 * - `webhook_events_processed_total{event,outcome}`: callbacks applied, by inbox outcome.
 * - `webhook_apply_queue_depth`: callbacks stored and waiting to be applied on this instance.
 * - `outbound_delivery_attempts_total{outcome}`: deliveries of gateway events to subscriptions.
 * - `provider_amount_mismatch_total{operation}`: provider answers refused for stating another
 *   amount or currency than was asked (src/provider/answer-checks.ts).
 * - `rate_limit_rejections_total{throttler}`: requests refused with 429 by the per-key rate limit.
 * - `rate_limit_store_errors_total`: rate-limit hits the shared store (Redis) failed to count;
 *   those requests were served (fail open).
 * - `provider_breaker_state`: the provider circuit breaker, 0 closed, 1 half-open, 2 open;
 *   `provider_breaker_opens_total`; `provider_fast_failures_total{reason}`: provider calls refused
 *   before being sent (breaker_open, bulkhead_full), answered 503 provider_retry_later;
 *   `provider_bulkhead_calls{state}`: provider calls running (`in_flight`, at most
 *   PROVIDER_BULKHEAD_LIMIT) and waiting for a slot (`queued`, at most PROVIDER_BULKHEAD_QUEUE).
 * - `webhook_inbox_backlog`, `webhook_inbox_oldest_pending_seconds`, `outbox_backlog`,
 *   `ledger_unknown_transactions`: read from the database at each scrape (`backlog` below).
 * - `db_pool_connections{pool,state}` (`pool` = prisma | reads, `state` = in_use | idle) and
 *   `db_pool_waiting{pool}`: this instance's PostgreSQL pools at each scrape (`pools` below).
 * Each service instance owns its registry, so several apps in one test process do not collide.
 */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();

  readonly httpRequestDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Gateway HTTP request duration by route template and status.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly providerCallDuration = new Histogram({
    name: 'provider_call_duration_seconds',
    help: 'Upstream provider call duration by operation and outcome.',
    labelNames: ['operation', 'outcome'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  readonly webhookSignatureFailures = new Counter({
    name: 'webhook_signature_failures_total',
    help: 'Provider callbacks refused for a missing or invalid signature.',
    registers: [this.registry],
  });

  readonly webhookEventsProcessed = new Counter({
    name: 'webhook_events_processed_total',
    help: 'Provider callbacks applied (or attempted), by event name and inbox outcome.',
    labelNames: ['event', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly outboundDeliveries = new Counter({
    name: 'outbound_delivery_attempts_total',
    help: 'Attempts to deliver gateway events to subscriptions, by result (delivered, retrying, failed).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly providerAmountMismatches = new Counter({
    name: 'provider_amount_mismatch_total',
    help: 'Provider answers refused because their amount or currency differs from the request, by operation.',
    labelNames: ['operation'] as const,
    registers: [this.registry],
  });

  readonly cardBalanceDrift = new Gauge({
    name: 'card_balance_drift_cards',
    help: 'Cards whose stored balance differs from the sum of their successful ledger movements, at the last reconciliation pass.',
    registers: [this.registry],
  });

  readonly rateLimitRejections = new Counter({
    name: 'rate_limit_rejections_total',
    help: 'Requests refused (429) by the per-API-key rate limit, by throttler.',
    labelNames: ['throttler'] as const,
    registers: [this.registry],
  });

  readonly rateLimitStoreErrors = new Counter({
    name: 'rate_limit_store_errors_total',
    help: 'Rate-limit hits the shared store (Redis) failed to count; the requests were served without a limit.',
    registers: [this.registry],
  });

  readonly providerBreakerOpens = new Counter({
    name: 'provider_breaker_opens_total',
    help: 'Times the provider circuit breaker opened.',
    registers: [this.registry],
  });

  readonly providerFastFailures = new Counter({
    name: 'provider_fast_failures_total',
    help: 'Provider calls refused before being sent (503 provider_retry_later), by reason: breaker_open, bulkhead_full.',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  /** Set by the provider module: 0 closed, 1 half-open, 2 open. */
  providerBreakerState: () => number = () => 0;

  /** Set by the provider module: the provider bulkhead's calls running and waiting now. */
  providerBulkhead: () => { inFlight: number; queued: number } = () => ({ inFlight: 0, queued: 0 });

  /**
   * Set by the health module: the database backlogs at scrape time (null when the database did not
   * answer; the gauges then keep their last values).
   */
  backlog: () => Promise<DatabaseBacklog | null> = () => Promise.resolve(null);

  /** Set by the webhooks module: how many stored callbacks wait in this instance's apply queue. */
  webhookQueueDepth: () => number = () => 0;

  /** Set by the metrics module: this instance's database pools now (Prisma's and the read pool). */
  pools: () => PoolReading[] = () => [];

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    const breakerState = () => this.providerBreakerState();
    new Gauge({
      name: 'provider_breaker_state',
      help: 'Provider circuit breaker on this instance: 0 closed, 1 half-open (probing), 2 open (failing fast).',
      registers: [this.registry],
      collect() {
        this.set(breakerState());
      },
    });
    const bulkheadUse = () => this.providerBulkhead();
    new Gauge({
      name: 'provider_bulkhead_calls',
      help: 'Provider calls on this instance by state: in_flight (holding a bulkhead slot), queued (waiting for one).',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        const { inFlight, queued } = bulkheadUse();
        this.set({ state: 'in_flight' }, inFlight);
        this.set({ state: 'queued' }, queued);
      },
    });
    this.registerBacklogGauges();
    this.registerPoolGauges();
    const queueDepth = () => this.webhookQueueDepth();
    new Gauge({
      name: 'webhook_apply_queue_depth',
      help: "Stored provider callbacks waiting in this instance's apply queue.",
      registers: [this.registry],
      collect() {
        this.set(queueDepth());
      },
    });
  }

  /** The pool gauges (issue 13: connections in use and waiting), read from `pools()` at each scrape. */
  private registerPoolGauges(): void {
    const pools = () => this.pools();
    new Gauge({
      name: 'db_pool_connections',
      help: "Connections of this instance's PostgreSQL pools, by pool (prisma, reads) and state (in_use, idle).",
      labelNames: ['pool', 'state'] as const,
      registers: [this.registry],
      collect() {
        for (const { pool, total, idle } of pools()) {
          this.set({ pool, state: 'in_use' }, total - idle);
          this.set({ pool, state: 'idle' }, idle);
        }
      },
    });
    new Gauge({
      name: 'db_pool_waiting',
      help: "Queries waiting for a connection of this instance's PostgreSQL pools, by pool (prisma, reads).",
      labelNames: ['pool'] as const,
      registers: [this.registry],
      collect() {
        for (const { pool, waiting } of pools()) this.set({ pool }, waiting);
      },
    });
  }

  /** The database backlog gauges, all filled by one `backlog()` read per scrape. */
  private registerBacklogGauges(): void {
    const backlog = () => this.backlog();
    // One read for the four gauges: the first gauge collected reads, the others of the scrape reuse it.
    let pending: Promise<DatabaseBacklog | null> | null = null;
    const read = async (field: keyof DatabaseBacklog, gauge: Gauge): Promise<void> => {
      pending ??= backlog()
        .catch(() => null)
        .finally(() => setImmediate(() => (pending = null)));
      const values = await pending;
      if (values) gauge.set(values[field]);
    };
    const gauges: Array<[keyof DatabaseBacklog, string, string]> = [
      [
        'inboxPending',
        'webhook_inbox_backlog',
        'Provider callbacks stored and not yet applied (inbox outcome pending), all instances.',
      ],
      [
        'inboxOldestPendingSeconds',
        'webhook_inbox_oldest_pending_seconds',
        'Age of the oldest provider callback not yet applied (0 when none).',
      ],
      ['outboxPending', 'outbox_backlog', 'Outbound events not yet delivered (outbox status pending), all instances.'],
      [
        'ledgerUnknown',
        'ledger_unknown_transactions',
        'Ledger rows in status unknown (a provider call without a clear answer), waiting for reconciliation.',
      ],
    ];
    for (const [field, name, help] of gauges) {
      new Gauge({
        name,
        help,
        registers: [this.registry],
        collect() {
          return read(field, this);
        },
      });
    }
  }

  /** The histogram's child per (method, status, route), made once: no label hashing on each request. */
  private readonly httpRequestSeries = new Map<string, ReturnType<typeof this.httpRequestDuration.labels>>();

  /** Records one HTTP request; `route` is the route template (e.g. /v1/customers/:id), never the raw URL. */
  observeHttpRequest(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${status} ${route}`;
    let series = this.httpRequestSeries.get(key);
    if (!series) {
      series = this.httpRequestDuration.labels({ method, route, status: String(status) });
      this.httpRequestSeries.set(key, series);
    }
    series.observe(seconds);
  }

  /** Records one provider call by operation name (e.g. `createCustomer`). */
  observeProviderCall(operation: string, outcome: ProviderCallOutcome, seconds: number): void {
    this.providerCallDuration.observe({ operation, outcome }, seconds);
  }

  /** Counts one provider answer refused for another amount or currency than asked (e.g. `initializeSwap`). */
  countProviderAmountMismatch(operation: string): void {
    this.providerAmountMismatches.inc({ operation });
  }

  /** The Prometheus text exposition of every metric. */
  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
