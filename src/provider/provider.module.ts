import { Global, Logger, Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Agent } from 'undici';
import { ShutdownService } from '../lifecycle/shutdown.service';
import { MetricsService } from '../metrics/metrics.service';
import { ProviderResilience } from './provider-resilience';
import { AmountUnit, ProviderUnits } from './provider-units';
import { ProviderClient, ProviderLogger } from './provider.client';

/** `provider_breaker_state` values. */
const BREAKER_GAUGE = { closed: 0, half_open: 1, open: 2 } as const;

/** Adapts a Nest `Logger` (nestjs-pino underneath: object first, message second) to `ProviderLogger`. */
export function nestProviderLogger(logger: Logger): ProviderLogger {
  return {
    debug: (obj, msg) => logger.debug(obj, msg),
    info: (obj, msg) => logger.log(obj, msg),
    warn: (obj, msg) => logger.warn(obj, msg),
    error: (obj, msg) => logger.error(obj, msg),
  };
}

/**
 * Global module providing the one `ProviderClient`, configured from PROVIDER_BASE_URL,
 * PROVIDER_API_KEY and PROVIDER_TIMEOUT_MS (src/config/env.ts), timing every call into
 * `provider_call_duration_seconds` and counting refused answers into
 * `provider_amount_mismatch_total` via the globally registered `MetricsService`; and the
 * `ProviderUnits` (SWAP_AMOUNT_UNIT, CARD_EVENT_AMOUNT_UNIT, validated by env.ts) the client and
 * the card-event handlers read; and the `ProviderResilience` (circuit breaker and bulkhead,
 * PROVIDER_BREAKER_* and PROVIDER_BULKHEAD_*) every call goes through, its state in
 * `provider_breaker_state` and its refusals in `provider_fast_failures_total`. The client's
 * connections (undici, undici-adapter.ts) are closed in the shutdown's `pools` stage
 * (ShutdownService, when the app has one).
 */
@Global()
@Module({
  providers: [
    {
      provide: ProviderUnits,
      inject: [ConfigService],
      useFactory: (config: ConfigService) =>
        new ProviderUnits({
          SWAP_AMOUNT_UNIT: config.get<AmountUnit>('SWAP_AMOUNT_UNIT') ?? 'major',
          CARD_EVENT_AMOUNT_UNIT: config.get<AmountUnit>('CARD_EVENT_AMOUNT_UNIT') ?? 'major',
        }),
    },
    {
      provide: ProviderResilience,
      inject: [ConfigService, MetricsService],
      useFactory: (config: ConfigService, metrics: MetricsService) => {
        const logger = new Logger('ProviderBreaker');
        const resilience = new ProviderResilience(
          {
            breakerFailures: Number(config.get('PROVIDER_BREAKER_FAILURES') ?? 5),
            halfOpenAfterMs: Number(config.get('PROVIDER_BREAKER_HALF_OPEN_MS') ?? 10000),
            bulkheadLimit: Number(config.get('PROVIDER_BULKHEAD_LIMIT') ?? 32),
            bulkheadQueue: Number(config.get('PROVIDER_BULKHEAD_QUEUE') ?? 256),
          },
          {
            onStateChange: (state) => {
              if (state === 'open') metrics.providerBreakerOpens.inc();
              const line = { breaker: state };
              if (state === 'closed') logger.log(line, 'provider circuit breaker closed: calls go through again');
              else
                logger.warn(
                  line,
                  `provider circuit breaker ${state === 'open' ? 'open: calls fail fast' : 'half-open: probing'}`,
                );
            },
            onFastFailure: (reason) => metrics.providerFastFailures.inc({ reason }),
          },
        );
        metrics.providerBreakerState = () => BREAKER_GAUGE[resilience.state];
        metrics.providerBulkhead = () => resilience.bulkheadUse;
        return resilience;
      },
    },
    {
      provide: ProviderClient,
      inject: [
        ConfigService,
        MetricsService,
        ProviderUnits,
        ProviderResilience,
        { token: ShutdownService, optional: true },
      ],
      useFactory: (
        config: ConfigService,
        metrics: MetricsService,
        units: ProviderUnits,
        resilience: ProviderResilience,
        shutdown: ShutdownService | undefined,
      ) => {
        // The client's connections (undici), closed with the pools: after the drain stage, whose work may call the provider.
        const connections = new Agent();
        shutdown?.register('pools', 'provider connections', () => connections.close());
        return new ProviderClient({
          baseUrl: config.getOrThrow<string>('PROVIDER_BASE_URL'),
          apiKey: config.getOrThrow<string>('PROVIDER_API_KEY'),
          timeoutMs: Number(config.getOrThrow('PROVIDER_TIMEOUT_MS')),
          logger: nestProviderLogger(new Logger('ProviderClient')),
          onCall: (operation, outcome, seconds) => metrics.observeProviderCall(operation, outcome, seconds),
          units: units.settings,
          onAmountMismatch: (operation) => metrics.countProviderAmountMismatch(operation),
          resilience,
          connections,
        });
      },
    },
  ],
  exports: [ProviderClient, ProviderUnits, ProviderResilience],
})
export class ProviderModule {}
