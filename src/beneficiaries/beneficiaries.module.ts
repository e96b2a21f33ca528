import { Module } from '@nestjs/common';
import { CustomersModule } from '../customers/customers.module';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { BeneficiariesController } from './beneficiaries.controller';
import { BeneficiariesRepository } from './beneficiaries.repository';
import { BeneficiariesService } from './beneficiaries.service';
import { BeneficiaryEventsHandler } from './beneficiary-events';

@Module({
  imports: [CustomersModule, WebhooksModule],
  controllers: [BeneficiariesController],
  providers: [BeneficiariesService, BeneficiariesRepository, BeneficiaryEventsHandler],
  exports: [BeneficiariesService],
})
export class BeneficiariesModule {}
