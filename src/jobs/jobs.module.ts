import { Module } from '@nestjs/common';
import { ReconciliationModule } from '../reconciliation/reconciliation.module';
import { JobsService } from './jobs.service';

@Module({ imports: [ReconciliationModule], providers: [JobsService] })
export class JobsModule {}
