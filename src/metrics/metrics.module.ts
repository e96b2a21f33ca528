import { Global, Module, type OnModuleInit } from '@nestjs/common';
import { MetricsRepository } from './metrics.repository';
import { MetricsService } from './metrics.service';

/** The one `MetricsService` (global), its backlog and pool gauges fed from `MetricsRepository`. */
@Global()
@Module({ providers: [MetricsService, MetricsRepository], exports: [MetricsService] })
export class MetricsModule implements OnModuleInit {
  constructor(
    private readonly metrics: MetricsService,
    private readonly repository: MetricsRepository,
  ) {}

  onModuleInit(): void {
    this.metrics.backlog = () => this.repository.backlog();
    this.metrics.pools = () => this.repository.pools();
  }
}
