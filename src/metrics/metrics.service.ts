import { Injectable } from '@nestjs/common';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** Outcome of one provider call, as recorded in `provider_call_duration_seconds`. */
export type ProviderCallOutcome = 'ok' | 'rejected' | 'unavailable' | 'timeout';

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

  /** Set by the webhooks module: how many stored callbacks wait in this instance's apply queue. */
  webhookQueueDepth: () => number = () => 0;

  constructor() {
    collectDefaultMetrics({ register: this.registry });
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

  /** Records one HTTP request; `route` is the route template (e.g. /v1/customers/:id), never the raw URL. */
  observeHttpRequest(method: string, route: string, status: number, seconds: number): void {
    this.httpRequestDuration.observe({ method, route, status: String(status) }, seconds);
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
