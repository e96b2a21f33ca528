import { Module, OnModuleInit } from '@nestjs/common';
import { BeneficiariesModule } from '../beneficiaries/beneficiaries.module';
import { IdempotencyService } from '../common/idempotency/idempotency.service';
import { CustomersModule } from '../customers/customers.module';
import { PayoutsController } from './payouts.controller';
import { PayoutsRepository } from './payouts.repository';
import { PayoutsService } from './payouts.service';

@Module({
  imports: [CustomersModule, BeneficiariesModule],
  controllers: [PayoutsController],
  providers: [PayoutsService, PayoutsRepository],
})
export class PayoutsModule implements OnModuleInit {
  constructor(
    private readonly idempotency: IdempotencyService,
    private readonly payouts: PayoutsService,
  ) {}

  /**
   * A retry of a payout request whose process died is answered from the payout as it is now; one
   * whose database went away before the provider call finds the payout released (releaseUnsent).
   */
  onModuleInit(): void {
    this.idempotency.registerResource('payout', (id) => this.payouts.get(id));
    this.idempotency.registerRelease('payout', (id) => this.payouts.releaseUnsent(id));
  }
}
