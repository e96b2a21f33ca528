import { Module, OnModuleInit } from '@nestjs/common';
import { IdempotencyService } from '../common/idempotency/idempotency.service';
import { CustomersModule } from '../customers/customers.module';
import { CollectionsController } from './collections.controller';
import { CollectionsRepository } from './collections.repository';
import { CollectionsService } from './collections.service';

@Module({
  imports: [CustomersModule],
  controllers: [CollectionsController],
  providers: [CollectionsService, CollectionsRepository],
  exports: [CollectionsService],
})
export class CollectionsModule implements OnModuleInit {
  constructor(
    private readonly idempotency: IdempotencyService,
    private readonly collections: CollectionsService,
  ) {}

  /**
   * A retry of a collection request whose process died is answered from the collection as it is
   * now (the resource noted is its ledger row, written in one transaction with the collection).
   */
  onModuleInit(): void {
    this.idempotency.registerResource('collection', (transactionId) =>
      this.collections.getByTransaction(transactionId),
    );
  }
}
