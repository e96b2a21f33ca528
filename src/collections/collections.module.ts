import { Module, OnModuleInit } from '@nestjs/common';
import { NotFoundError } from '../common/errors';
import { IdempotencyService } from '../common/idempotency/idempotency.service';
import { CustomersModule } from '../customers/customers.module';
import { PrismaService } from '../database/prisma.service';
import { CollectionsController } from './collections.controller';
import { CollectionsService, toCollectionDto } from './collections.service';

@Module({
  imports: [CustomersModule],
  controllers: [CollectionsController],
  providers: [CollectionsService],
  exports: [CollectionsService],
})
export class CollectionsModule implements OnModuleInit {
  constructor(
    private readonly idempotency: IdempotencyService,
    private readonly prisma: PrismaService,
  ) {}

  /**
   * A retry of a collection request whose process died is answered from the collection as it is
   * now (the resource noted is its ledger row, written in one transaction with the collection).
   */
  onModuleInit(): void {
    this.idempotency.registerResource('collection', async (transactionId) => {
      const row = await this.prisma.collection.findUnique({ where: { transactionId }, include: { transaction: true } });
      if (!row) throw new NotFoundError('Collection of transaction', transactionId);
      return toCollectionDto(row);
    });
  }
}
