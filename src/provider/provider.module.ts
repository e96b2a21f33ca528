import { Global, Logger, Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { MetricsService } from '../metrics/metrics.service';
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
 * `provider_call_duration_seconds` via the globally registered `MetricsService`.
 */
@Global()
@Module({
  providers: [
    {
      provide: ProviderClient,
      inject: [ConfigService, MetricsService],
      useFactory: (config: ConfigService, metrics: MetricsService) =>
        new ProviderClient({
          baseUrl: config.getOrThrow<string>('PROVIDER_BASE_URL'),
          apiKey: config.getOrThrow<string>('PROVIDER_API_KEY'),
          timeoutMs: Number(config.getOrThrow('PROVIDER_TIMEOUT_MS')),
          logger: nestProviderLogger(new Logger('ProviderClient')),
          onCall: (operation, outcome, seconds) => metrics.observeProviderCall(operation, outcome, seconds),
        }),
    },
  ],
  exports: [ProviderClient],
})
export class ProviderModule {}
