import { DynamicModule, Module } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { ThrottlerModule } from '@nestjs/throttler';
import { LoggerModule } from 'nestjs-pino';
import { AuditModule } from './audit/audit.module';
import { ApiKeyGuard } from './auth/api-key.guard';
import { AuthModule } from './auth/auth.module';
import { BeneficiariesModule } from './beneficiaries/beneficiaries.module';
import { CardsModule } from './cards/cards.module';
import { CollectionsModule } from './collections/collections.module';
import { PiiModule } from './common/crypto/pii-cipher';
import { IdempotencyModule } from './common/idempotency/idempotency.module';
import { ProblemDetailsFilter } from './common/problem-details.filter';
import { RateLimitGuard } from './common/rate-limit/rate-limit.guard';
import { RateLimitModule } from './common/rate-limit/rate-limit.module';
import { RateLimitStorage } from './common/rate-limit/rate-limit.storage';
import { Env, validateEnv } from './config/env';
import { CustomersModule } from './customers/customers.module';
import { DatabaseModule } from './database/database.module';
import { FinancePageModule } from './finance-page/finance-page.module';
import { HealthModule } from './health/health.module';
import { JobsModule } from './jobs/jobs.module';
import { LifecycleModule } from './lifecycle/lifecycle.module';
import { loggerOptions } from './logging';
import { MetricsModule } from './metrics/metrics.module';
import { OutboundModule } from './outbound/outbound.module';
import { PayoutsModule } from './payouts/payouts.module';
import { ProviderModule } from './provider';
import { ReconciliationModule } from './reconciliation/reconciliation.module';
import { SwapsModule } from './swaps/swaps.module';
import { TransactionsModule } from './transactions/transactions.module';
import { VirtualAccountsModule } from './virtual-accounts/virtual-accounts.module';
import { WebhooksModule } from './webhooks/webhooks.module';

/**
 * The root module. `forRoot()` is evaluated when an app is created (not when this file is
 * imported), so each app reads and validates the environment as it is at that moment.
 */
@Module({})
export class AppModule {
  static forRoot(): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot({ isGlobal: true, cache: true, validate: validateEnv }),
        LoggerModule.forRootAsync({
          inject: [ConfigService],
          useFactory: (config: ConfigService<Env, true>) =>
            loggerOptions(config.get('LOG_LEVEL', { infer: true }), config.get('LOG_FILE', { infer: true })),
        }),
        ThrottlerModule.forRootAsync({
          imports: [RateLimitModule],
          inject: [ConfigService, RateLimitStorage],
          useFactory: (config: ConfigService<Env, true>, storage: RateLimitStorage) => ({
            throttlers: [{ name: 'default', ttl: 60_000, limit: config.get('RATE_LIMIT_PER_MINUTE', { infer: true }) }],
            // One budget per API key across all routes (unauthenticated routes fall back to the IP).
            // A person (access token) has their own budget, by issuer and subject.
            getTracker: (req: {
              apiClient?: { id: string };
              appUser?: { issuer: string; subject: string };
              ip?: unknown;
            }) =>
              req.apiClient?.id ?? (req.appUser ? `user:${req.appUser.issuer}#${req.appUser.subject}` : String(req.ip)),
            generateKey: (_ctx, tracker, name) => `${name}:${tracker}`,
            // Redis with REDIS_URL (shared by every instance), else memory (common/rate-limit).
            storage,
          }),
        }),
        LifecycleModule,
        DatabaseModule,
        PiiModule,
        MetricsModule,
        AuthModule,
        AuditModule,
        ProviderModule,
        IdempotencyModule,
        TransactionsModule,
        OutboundModule,
        HealthModule,
        CustomersModule,
        BeneficiariesModule,
        PayoutsModule,
        CollectionsModule,
        SwapsModule,
        VirtualAccountsModule,
        CardsModule,
        WebhooksModule,
        ReconciliationModule,
        JobsModule,
        FinancePageModule,
      ],
      providers: [
        // Order matters: authenticate first, so the rate limit is per API key.
        { provide: APP_GUARD, useClass: ApiKeyGuard },
        { provide: APP_GUARD, useClass: RateLimitGuard },
        { provide: APP_FILTER, useClass: ProblemDetailsFilter },
      ],
    };
  }
}
