import { Global, Module } from '@nestjs/common';
import { ReconciliationModule } from '../reconciliation/reconciliation.module';
import { LedgerRepository } from './ledger.repository';
import { LedgerService } from './ledger.service';
import { TransactionsController } from './transactions.controller';
import { TransactionsRepository } from './transactions.repository';
import { TransactionsService } from './transactions.service';

/**
 * The ledger (Transaction + TransactionStatusChange), used by every money-moving module through
 * LedgerService, and the finance API over it (GET /v1/transactions, /{id}, /summary, /export).
 */
@Global()
@Module({
  imports: [ReconciliationModule],
  controllers: [TransactionsController],
  providers: [LedgerRepository, LedgerService, TransactionsRepository, TransactionsService],
  exports: [LedgerService],
})
export class TransactionsModule {}
