import { Controller, HttpCode, Logger, Post, Req } from '@nestjs/common';
import type { RawBodyRequest } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { ApiHeader, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { SkipThrottle } from '@nestjs/throttler';
import type { FastifyRequest } from 'fastify';
import { Public } from '../auth/auth.decorators';
import { ApiProblem } from '../common/api-responses';
import { DomainError, ErrorCode } from '../common/errors';
import { MAX_JSON_DEPTH } from '../common/http-limits';
import type { Env } from '../config/env';
import { MetricsService } from '../metrics/metrics.service';
import { SIGNATURE_HEADERS, verifyWebhookSignature } from './signature';
import { WebhooksService } from './webhooks.service';

/** Request headers kept with each stored callback, for tracing a delivery (never the signature). */
const HEADERS_OF_INTEREST = ['content-type', 'content-length', 'user-agent', 'x-request-id'];

function headersOfInterest(request: FastifyRequest): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of HEADERS_OF_INTEREST) {
    const value = request.headers[name];
    if (typeof value === 'string') kept[name] = value.slice(0, 200);
  }
  return kept;
}

/** The provider's callbacks: no client key; the HMAC signature is checked instead. */
@ApiTags('webhooks')
@Public()
@SkipThrottle()
@Controller('webhooks')
export class WebhooksController {
  private readonly logger = new Logger('Webhooks');

  constructor(
    private readonly webhooks: WebhooksService,
    private readonly metrics: MetricsService,
    private readonly config: ConfigService<Env, true>,
  ) {}

  @Post('provider')
  @HttpCode(200)
  @ApiOperation({ summary: 'Receive a provider callback (signed with HMAC-SHA512 of the raw body)' })
  @ApiHeader({
    name: 'x-brails-signature',
    required: false,
    description: 'Hex HMAC-SHA512 of the body (or x-bitnob-signature).',
  })
  @ApiOkResponse({
    description: 'Stored (once) and acknowledged: {"received": true, "duplicate": bool, "outcome": ...}.',
  })
  @ApiProblem(
    400,
    `validation_failed: not {"event": string, "data": object}, nested deeper than ${MAX_JSON_DEPTH} levels, or content the ` +
      'database refuses; nothing stored, other callbacks unaffected. (NUL and lone surrogates are not refused: ' +
      'they are stored as U+FFFD.)',
  )
  @ApiProblem(401, 'Missing or wrong signature; nothing stored.')
  async receive(
    @Req() request: RawBodyRequest<FastifyRequest>,
  ): Promise<{ received: true; duplicate: boolean; outcome: string }> {
    const header = SIGNATURE_HEADERS.find((name) => typeof request.headers[name] === 'string');
    const signature = header ? String(request.headers[header]) : '';
    const raw = request.rawBody ?? Buffer.from('');
    if (
      !header ||
      !verifyWebhookSignature(raw, request.body, signature, this.config.get('PROVIDER_WEBHOOK_SECRET', { infer: true }))
    ) {
      this.metrics.webhookSignatureFailures.inc();
      this.logger.warn(
        { header: header ?? null, bytes: raw.length },
        'provider callback refused: missing or invalid signature',
      );
      throw new DomainError(ErrorCode.Unauthorized, 'Missing or invalid webhook signature.');
    }
    const event = this.webhooks.parse(request.body);
    const result = await this.webhooks.receive(event, raw.toString('utf8'), header, headersOfInterest(request));
    return { received: true, ...result };
  }
}
