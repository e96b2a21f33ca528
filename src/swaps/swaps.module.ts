import { Module, OnModuleInit } from '@nestjs/common';
import { IdempotencyService } from '../common/idempotency/idempotency.service';
import { SwapsController } from './swaps.controller';
import { SwapsRepository } from './swaps.repository';
import { SwapsService } from './swaps.service';

@Module({ controllers: [SwapsController], providers: [SwapsService, SwapsRepository], exports: [SwapsService] })
export class SwapsModule implements OnModuleInit {
  constructor(
    private readonly idempotency: IdempotencyService,
    private readonly swaps: SwapsService,
  ) {}

  /** A retry of a swap request whose process died is answered from the swap as it is now (the client's own only). */
  onModuleInit(): void {
    this.idempotency.registerResource('swap', (id, clientId) => this.swaps.getSwap(clientId, id));
  }
}
