import { Global, Module } from '@nestjs/common';
import { IdempotencyRepository } from './idempotency.repository';
import { IdempotencyService } from './idempotency.service';
import { DeferredClaimIdempotencyInterceptor, IdempotencyInterceptor } from './idempotent.decorator';

@Global()
@Module({
  providers: [IdempotencyService, IdempotencyRepository, IdempotencyInterceptor, DeferredClaimIdempotencyInterceptor],
  exports: [IdempotencyService, IdempotencyInterceptor, DeferredClaimIdempotencyInterceptor],
})
export class IdempotencyModule {}
