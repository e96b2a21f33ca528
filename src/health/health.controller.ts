import { timingSafeEqual } from 'node:crypto';
import { Controller, Get, Header, Headers, Res } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, HealthIndicatorService } from '@nestjs/terminus';
import type { FastifyReply } from 'fastify';
import { Public } from '../auth/auth.decorators';
import { ApiProblem } from '../common/api-responses';
import { DomainError, ErrorCode } from '../common/errors';
import type { Env } from '../config/env';
import { ShutdownService } from '../lifecycle/shutdown.service';
import { MetricsService } from '../metrics/metrics.service';
import { ProviderResilience } from '../provider';
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
    private readonly resilience: ProviderResilience,
    private readonly config: ConfigService<Env, true>,
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
  @ApiOkResponse({
    description:
      "The database is reachable. `details.provider.breaker` shows the provider circuit breaker's state (closed, half_open, open); it never fails readiness.",
  })
  ready() {
    const shutdown = () => {
      const indicator = this.indicators.check('shutdown');
      const phase = this.shutdown.phase;
      return phase === 'serving' ? indicator.up() : indicator.down({ phase });
    };
    // Shown, never failing: an open breaker is the instance coping with the provider, not a reason
    // for the load balancer to take it out.
    const provider = () => this.indicators.check('provider').up({ breaker: this.resilience.state });
    // Going away: answer 503 at once, without waiting for the database, so that the load balancer
    // takes the instance out within its first checks however busy the database is.
    if (this.shutdown.phase !== 'serving') return this.health.check([shutdown, provider]);
    return this.health.check([
      shutdown,
      // On the probe's own connection (HealthRepository): a busy pool does not make it fail.
      () =>
        this.indicators
          .check('database')
          .attempt(async () => {
            await this.database.ping();
            return {};
          })
          .withTimeout(2000),
      provider,
    ]);
  }

  @Get('metrics')
  @ApiOperation({ summary: 'Prometheus metrics (text exposition format)' })
  @ApiOkResponse({
    description: 'Request counts and latency histograms per route, provider call latency and outcome per operation.',
  })
  @ApiProblem(401, 'METRICS_TOKEN is set and the bearer token is not it.')
  @Header('cache-control', 'no-store')
  async metricsText(
    @Headers('authorization') authorization: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    this.checkMetricsToken(authorization);
    const { contentType, body } = await this.metrics.render();
    await reply.header('content-type', contentType).send(body);
  }

  /**
   * With METRICS_TOKEN set, /metrics answers only `Authorization: Bearer <METRICS_TOKEN>`.
   * @throws DomainError `unauthorized` (401) otherwise.
   */
  private checkMetricsToken(authorization: string | undefined): void {
    const token = this.config.get('METRICS_TOKEN', { infer: true });
    if (!token) return;
    const given = Buffer.from(/^Bearer (.+)$/i.exec(authorization ?? '')?.[1] ?? '');
    const wanted = Buffer.from(token);
    if (given.length !== wanted.length || !timingSafeEqual(given, wanted))
      throw new DomainError(ErrorCode.Unauthorized, 'A valid metrics token is required (METRICS_TOKEN).');
  }
}
