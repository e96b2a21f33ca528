import { Global, Module } from '@nestjs/common';
import { LedgerService } from './ledger.service';

/** The ledger (Transaction + TransactionStatusChange), used by every money-moving module. */
@Global()
@Module({ providers: [LedgerService], exports: [LedgerService] })
export class TransactionsModule {}
