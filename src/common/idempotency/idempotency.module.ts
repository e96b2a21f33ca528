import { Global, Module } from '@nestjs/common';
import { IdempotencyInterceptor } from './idempotent.decorator';
import { IdempotencyService } from './idempotency.service';

@Global()
@Module({
  providers: [IdempotencyService, IdempotencyInterceptor],
  exports: [IdempotencyService, IdempotencyInterceptor],
})
export class IdempotencyModule {}
