import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Type } from '@nestjs/common';
import { ModulesContainer, NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type { RawServerDefault } from 'fastify';
import { Logger } from 'nestjs-pino';
import { AppModule } from './app.module';
import { ACCESS_TOKEN_SCHEME } from './auth/auth.decorators';
import { DomainError, ErrorCode } from './common/errors';
import {
  checkUrlLength,
  clientErrorHandler,
  exceedsJsonDepth,
  frameworkErrors,
  jsonTooDeep,
  MAX_PARAM_LENGTH,
} from './common/http-limits';
import { answerMethodNotAllowed } from './common/method-not-allowed';
import { finishOpenApiDocument, operationIdOf } from './common/openapi-document';
import { closeRequestSchemas, describePathPipes, describeValidators } from './common/openapi-validators';
import { sendProblem } from './common/problem-details.filter';
import { enterRequestScope } from './common/request-context';
import { createValidationPipe } from './common/validation';
import { validateEnv } from './config/env';
import { ShutdownService } from './lifecycle/shutdown.service';
import { createRootLogger, RequestLogController } from './logging';
import { MetricsService } from './metrics/metrics.service';

/** Retry-After (seconds) on the 503 a closing instance answers: another instance takes the retry. */
const SHUTDOWN_RETRY_AFTER_SECONDS = 1;

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Request ids: the caller's `x-request-id` when it is a sane token, otherwise a new UUID. The id
 * is also put on the raw request, so logs (`reqId`) and answers (`x-request-id`) agree.
 */
function genReqId(raw: IncomingMessage): string {
  const header = raw.headers['x-request-id'];
  const id = typeof header === 'string' && REQUEST_ID.test(header) ? header : randomUUID();
  (raw as IncomingMessage & { id?: string }).id = id;
  return id;
}

/** The OpenAPI document of the running app (also written to openapi.json by `npm run openapi`). */
export function buildOpenApiDocument(app: NestFastifyApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Wallet gateway')
    .setDescription(
      "Backend-for-frontend in front of the fintech provider. Amounts are integers in the currency's minor unit; " +
        'errors are application/problem+json (RFC 9457) with a stable `code`; lists use keyset cursors.',
    )
    .setVersion('1')
    // Where `npm start` serves it; a deployment's clients set their own base URL (docs/api.md "Typed client").
    .addServer('http://127.0.0.1:3000', 'Local gateway (npm start)')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'Gateway API key (npm run api-key -- create)' })
    // People's routes (`@ForUsers`) take another credential in the same header: an API key gets 403 there.
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'JWT',
        description: "A signed-in person's access token from OIDC_ISSUER (docs/auth.md); not an API key",
      },
      ACCESS_TOKEN_SCHEME,
    )
    .build();
  // The validators' rules go into the properties' swagger options first (one source, openapi-validators.ts).
  const validated = describeValidators();
  const doc = SwaggerModule.createDocument(app, config, { operationIdFactory: operationIdOf });
  closeRequestSchemas(doc, validated);
  const controllers = [...app.get(ModulesContainer).values()].flatMap((module) =>
    [...module.controllers.values()].map((wrapper) => wrapper.metatype as Type),
  );
  describePathPipes(doc, controllers, operationIdOf);
  return finishOpenApiDocument(doc);
}

/**
 * Creates and initialises the gateway (not listening). Reads the environment from process.env
 * (validated; a bad variable throws naming it). Used by main.ts, the tests and scripts.
 */
export async function createApp(options: { bufferLogs?: boolean } = {}): Promise<NestFastifyApplication> {
  const env = validateEnv(process.env);
  const adapter = new FastifyAdapter({
    bodyLimit: env.BODY_LIMIT_BYTES,
    genReqId,
    trustProxy: true,
    loggerInstance: createRootLogger(env.LOG_LEVEL, env.LOG_FILE),
    logController: new RequestLogController(),
    // Oversized URLs, headers and path parameters answer problem+json too (common/http-limits.ts).
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors,
    clientErrorHandler,
    // While closing, requests still arriving on open connections are answered by our own hook
    // below (problem+json with Retry-After), not by Fastify's plain 503.
    return503OnClosing: false,
  });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(), adapter, {
    bufferLogs: options.bufferLogs ?? true,
    rawBody: true,
  });
  app.useLogger(app.get(Logger));
  app.useGlobalPipes(createValidationPipe());
  // JSON bodies as Fastify parses them (safe against prototype poisoning), except that an empty body
  // with a JSON content type (clients that send the header on every request, GETs included) reads
  // as no body instead of a 400, and that JSON nested deeper than MAX_JSON_DEPTH is refused (400)
  // from one pass over the bytes, before parsing (every route, the provider's callbacks included).
  // The raw bytes stay on the request for webhook signatures.
  const defaultJson = adapter.getInstance().getDefaultJsonParser('error', 'error');
  app.useBodyParser<RawServerDefault>(
    'application/json',
    { bodyLimit: env.BODY_LIMIT_BYTES },
    (request, body, done) => {
      if (body.length === 0) return done(null, undefined);
      if (exceedsJsonDepth(body)) return done(jsonTooDeep(), undefined);
      return defaultJson(request, body.toString('utf8'), done);
    },
  );
  // No Nest signal hooks: main.ts stops the app in order on SIGTERM (lifecycle/stop-signals.ts).

  const fastify = app.getHttpAdapter().getInstance();
  const metrics = app.get(MetricsService);
  const shutdown = app.get(ShutdownService);
  // One callback-style onRequest hook for all of the below (an async hook costs a promise per
  // request, and each hook a turn of Fastify's hook runner), in this order:
  // 1. the request's scope (common/request-context.ts): everything after runs inside it;
  // 2. shutdown. Draining (SHUTDOWN_DELAY_MS after the stop signal): requests are served, but each
  //    connection is closed after its answer, so that none is left kept alive when the server stops
  //    accepting (a load balancer that sent a request on an idle connection just as it closed would
  //    see it cut). Closing: a request that still reaches this instance, on a connection opened
  //    before, gets 503 `shutting_down` with Retry-After and the connection is closed, so the client
  //    or load balancer retries on another instance. Never a 500, never a reset;
  // 3. the `x-request-id` answered, and the URL's length (414 over MAX_URL_LENGTH);
  // 4. a request no route matches whose path has routes for other methods: 405 with Allow (OPTIONS:
  //    204 with Allow), common/method-not-allowed.ts; an unknown path goes on to the 404.
  fastify.addHook('onRequest', (request, reply, done) => {
    enterRequestScope(request, () => {
      const phase = shutdown.phase;
      if (phase !== 'serving') {
        void reply.header('connection', 'close');
        if (phase === 'closing') {
          void reply.header('retry-after', String(SHUTDOWN_RETRY_AFTER_SECONDS));
          sendProblem(
            reply,
            request,
            new DomainError(ErrorCode.ShuttingDown, 'This instance is shutting down; retry.'),
          );
          return;
        }
      }
      void reply.header('x-request-id', request.id);
      checkUrlLength(request, reply, () => {
        if (request.is404 && answerMethodNotAllowed(fastify, request, reply)) return;
        done();
      });
    });
  });
  fastify.addHook('onResponse', (request, reply, done) => {
    metrics.observeHttpRequest(
      request.method,
      request.routeOptions.url ?? 'unmatched',
      reply.statusCode,
      reply.elapsedTime / 1000,
    );
    done();
  });

  SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app), { jsonDocumentUrl: 'docs-json' });
  await app.init();
  await fastify.ready();
  return app;
}
