import { Module } from '@nestjs/common';
import { RateLimitStorage } from './rate-limit.storage';

/** Provides `RateLimitStorage` (Redis with REDIS_URL, memory otherwise) to ThrottlerModule. */
@Module({ providers: [RateLimitStorage], exports: [RateLimitStorage] })
export class RateLimitModule {}
