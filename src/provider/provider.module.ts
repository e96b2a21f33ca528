import { Global, Logger, Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { MetricsService } from '../metrics/metrics.service';
import { AmountUnit, ProviderUnits } from './provider-units';
import { ProviderClient, ProviderLogger } from './provider.client';

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
 * the card-event handlers read.
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
      provide: ProviderClient,
      inject: [ConfigService, MetricsService, ProviderUnits],
      useFactory: (config: ConfigService, metrics: MetricsService, units: ProviderUnits) =>
        new ProviderClient({
          baseUrl: config.getOrThrow<string>('PROVIDER_BASE_URL'),
          apiKey: config.getOrThrow<string>('PROVIDER_API_KEY'),
          timeoutMs: Number(config.getOrThrow('PROVIDER_TIMEOUT_MS')),
          logger: nestProviderLogger(new Logger('ProviderClient')),
          onCall: (operation, outcome, seconds) => metrics.observeProviderCall(operation, outcome, seconds),
          units: units.settings,
          onAmountMismatch: (operation) => metrics.countProviderAmountMismatch(operation),
        }),
    },
  ],
  exports: [ProviderClient, ProviderUnits],
})
export class ProviderModule {}
