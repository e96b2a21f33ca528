import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { ThrottlerStorage } from '@nestjs/throttler';
import type { Env } from '../../config/env';
import { MetricsService } from '../../metrics/metrics.service';
import { FixedWindowThrottlerStorage, type ThrottleRecord } from './fixed-window.storage';
import { RedisThrottlerStorage } from './redis.storage';

/** At most one warning line per this many ms while the shared store fails (the counter counts them all). */
export const STORE_WARNING_INTERVAL_MS = 10_000;

/**
 * The storage behind @nestjs/throttler's guard (the per-API-key limit, RATE_LIMIT_PER_MINUTE):
 * - with REDIS_URL, counted in Redis (`RedisThrottlerStorage`), exact across every instance;
 * - without it, in this process's memory (`FixedWindowThrottlerStorage`, one instance).
 * When Redis fails (down, unreachable, slow past REDIS_TIMEOUT_MS) the request is let through
 * (fail open: a limit is an abuse guard, not worth refusing service over), counted in
 * `rate_limit_store_errors_total`, and a warning is logged at most once per
 * STORE_WARNING_INTERVAL_MS with the number of failures since the last one. Every refused request
 * is counted in `rate_limit_rejections_total`.
 */
@Injectable()
export class RateLimitStorage implements ThrottlerStorage, OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('RateLimit');
  private readonly memory?: FixedWindowThrottlerStorage;
  private readonly redis?: RedisThrottlerStorage;
  private lastWarning = 0;
  private unreported = 0;

  constructor(
    config: ConfigService<Env, true>,
    private readonly metrics: MetricsService,
  ) {
    const url = config.get('REDIS_URL', { infer: true });
    if (url) {
      this.redis = new RedisThrottlerStorage(
        {
          url,
          keyPrefix: config.get('REDIS_KEY_PREFIX', { infer: true }),
          timeoutMs: config.get('REDIS_TIMEOUT_MS', { infer: true }),
        },
        (error) => this.warn('connection', error),
      );
    } else {
      this.memory = new FixedWindowThrottlerStorage();
    }
  }

  /** Where the counts live: `redis` or `memory`. */
  get store(): 'redis' | 'memory' {
    return this.redis ? 'redis' : 'memory';
  }

  async onModuleInit(): Promise<void> {
    await this.redis?.connect();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.redis?.close();
  }

  /** ThrottlerStorage: counts one hit; never throws (see the class comment). */
  increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): Promise<ThrottleRecord> {
    // In memory the count is synchronous: one resolved promise, not a chain of them.
    if (this.memory)
      return Promise.resolve(
        this.counted(this.memory.count(key, ttl, limit, blockDuration, throttlerName), throttlerName),
      );
    return this.incrementInRedis(this.redis as RedisThrottlerStorage, key, ttl, limit, blockDuration, throttlerName);
  }

  private async incrementInRedis(
    redis: RedisThrottlerStorage,
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): Promise<ThrottleRecord> {
    try {
      return this.counted(await redis.increment(key, ttl, limit, blockDuration, throttlerName), throttlerName);
    } catch (error) {
      this.metrics.rateLimitStoreErrors.inc();
      this.warn('hit', error);
      return {
        totalHits: 0,
        timeToExpire: Math.max(1, Math.ceil(ttl / 1000)),
        isBlocked: false,
        timeToBlockExpire: 0,
      };
    }
  }

  /** Counts a refused request in `rate_limit_rejections_total`; returns the record. */
  private counted(record: ThrottleRecord, throttlerName: string): ThrottleRecord {
    if (record.isBlocked) this.metrics.rateLimitRejections.inc({ throttler: throttlerName });
    return record;
  }

  /** One warning line per STORE_WARNING_INTERVAL_MS, saying how many failures it stands for. */
  private warn(during: 'hit' | 'connection', error: unknown): void {
    this.unreported += 1;
    const now = Date.now();
    if (now - this.lastWarning < STORE_WARNING_INTERVAL_MS) return;
    this.lastWarning = now;
    const failures = this.unreported;
    this.unreported = 0;
    this.logger.warn(
      { during, failures, error: error instanceof Error ? error.message : String(error) },
      'rate-limit store (Redis) failing: requests are let through without a shared count',
    );
  }
}
