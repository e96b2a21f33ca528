import { Controller, Get, Header, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, HealthIndicatorService } from '@nestjs/terminus';
import type { FastifyReply } from 'fastify';
import { Public } from '../auth/auth.decorators';
import { ApiProblem } from '../common/api-responses';
import { ShutdownService } from '../lifecycle/shutdown.service';
import { MetricsService } from '../metrics/metrics.service';
import { HealthRepository } from './health.repository';

/** Liveness, readiness (@nestjs/terminus) and Prometheus metrics; no client key needed. */
@ApiTags('operations')
@Public()
@Controller()
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    private readonly database: HealthRepository,
    private readonly metrics: MetricsService,
    private readonly shutdown: ShutdownService,
  ) {}

  @Get('health/live')
  // Terminus's own documentation of the route (swaggerDocumentation) declares its 503 application/json,
  // but the problem filter answers it as problem+json: documented here instead.
  @HealthCheck({ noCache: true, swaggerDocumentation: false })
  @ApiProblem(503, 'A health check failed.')
  @ApiOperation({ summary: 'Liveness: the process answers' })
  @ApiOkResponse({ description: '{"status":"ok"}' })
  live() {
    return this.health.check([]);
  }

  @Get('health/ready')
  @HealthCheck({ noCache: true, swaggerDocumentation: false })
  @ApiProblem(503, 'The instance is shutting down (from the stop signal on), or the database is not reachable.')
  @ApiOperation({ summary: 'Readiness: the instance is not shutting down and the database answers' })
  @ApiOkResponse({ description: 'The database is reachable.' })
  ready() {
    return this.health.check([
      () => {
        const indicator = this.indicators.check('shutdown');
        const phase = this.shutdown.phase;
        return phase === 'serving' ? indicator.up() : indicator.down({ phase });
      },
      () =>
        this.indicators
          .check('database')
          .attempt(async () => {
            await this.database.ping();
            return {};
          })
          .withTimeout(2000),
    ]);
  }

  @Get('metrics')
  @ApiOperation({ summary: 'Prometheus metrics (text exposition format)' })
  @ApiOkResponse({
    description: 'Request counts and latency histograms per route, provider call latency and outcome per operation.',
  })
  @Header('cache-control', 'no-store')
  async metricsText(@Res() reply: FastifyReply): Promise<void> {
    const { contentType, body } = await this.metrics.render();
    await reply.header('content-type', contentType).send(body);
  }
}
