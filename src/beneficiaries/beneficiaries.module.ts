import { Module } from '@nestjs/common';
import { CustomersModule } from '../customers/customers.module';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { BeneficiariesController } from './beneficiaries.controller';
import { BeneficiariesService } from './beneficiaries.service';
import { BeneficiaryEventsHandler } from './beneficiary-events';

@Module({
  imports: [CustomersModule, WebhooksModule],
  controllers: [BeneficiariesController],
  providers: [BeneficiariesService, BeneficiaryEventsHandler],
  exports: [BeneficiariesService],
})
export class BeneficiariesModule {}
