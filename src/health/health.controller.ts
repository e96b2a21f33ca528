import { timingSafeEqual } from 'node:crypto';
import { Controller, Get, Header, Headers, Res } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import {
  ApiOkResponse,
  ApiOperation,
  ApiServiceUnavailableResponse,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, HealthIndicatorService } from '@nestjs/terminus';
import type { FastifyReply } from 'fastify';
import { Public } from '../auth/auth.decorators';
import { DomainError, ErrorCode } from '../common/errors';
import { ProblemDto } from '../common/problem.dto';
import type { Env } from '../config/env';
import { PrismaService } from '../database/prisma.service';
import { MetricsService } from '../metrics/metrics.service';
import { ProviderResilience } from '../provider';

/** Liveness, readiness (@nestjs/terminus) and Prometheus metrics; no client key needed. */
@ApiTags('operations')
@Public()
@Controller()
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    private readonly prisma: PrismaService,
    private readonly metrics: MetricsService,
    private readonly resilience: ProviderResilience,
    private readonly config: ConfigService<Env, true>,
  ) {}

  @Get('health/live')
  @HealthCheck()
  @ApiOperation({ summary: 'Liveness: the process answers' })
  @ApiOkResponse({ description: '{"status":"ok"}' })
  live() {
    return this.health.check([]);
  }

  @Get('health/ready')
  @HealthCheck()
  @ApiOperation({ summary: 'Readiness: the database answers' })
  @ApiOkResponse({
    description:
      "The database is reachable. `details.provider.breaker` shows the provider circuit breaker's state (closed, half_open, open); it never fails readiness.",
  })
  @ApiServiceUnavailableResponse({ description: 'The database is not reachable.' })
  ready() {
    return this.health.check([
      () =>
        this.indicators
          .check('database')
          .attempt(async () => {
            await this.prisma.$queryRaw`SELECT 1`;
            return {};
          })
          .withTimeout(2000),
      // Shown, never failing: an open breaker is the instance coping with the provider, not a reason
      // for the load balancer to take it out.
      () => this.indicators.check('provider').up({ breaker: this.resilience.state }),
    ]);
  }

  @Get('metrics')
  @ApiOperation({ summary: 'Prometheus metrics (text exposition format)' })
  @ApiOkResponse({
    description: 'Request counts and latency histograms per route, provider call latency and outcome per operation.',
  })
  @ApiUnauthorizedResponse({ type: ProblemDto, description: 'METRICS_TOKEN is set and the bearer token is not it.' })
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
