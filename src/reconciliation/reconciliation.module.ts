import { Module } from '@nestjs/common';
import { CardsModule } from '../cards/cards.module';
import { SwapsModule } from '../swaps/swaps.module';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { ExpiryService } from './expiry.service';
import { ReconciliationRunsController } from './reconciliation-runs.controller';
import { ReconciliationRunsRepository } from './reconciliation-runs.repository';
import { ReconciliationRunsService } from './reconciliation-runs.service';
import { ReconciliationRepository } from './reconciliation.repository';
import { ReconciliationService } from './reconciliation.service';

@Module({
  imports: [WebhooksModule, CardsModule, SwapsModule],
  controllers: [ReconciliationRunsController],
  providers: [
    ReconciliationService,
    ExpiryService,
    ReconciliationRepository,
    ReconciliationRunsService,
    ReconciliationRunsRepository,
  ],
  exports: [ReconciliationService, ExpiryService, ReconciliationRunsService],
})
export class ReconciliationModule {}
