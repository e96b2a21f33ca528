import type { AsyncLocalStorage } from 'node:async_hooks';
import path from 'node:path';
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Params } from 'nestjs-pino';
import pino from 'pino';

/**
 * Paths removed from every log line, whatever logs them: client and provider keys, webhook
 * signatures, and card data (docs/design.md#security-and-personal-data).
 */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-brails-signature"]',
  'req.headers["x-bitnob-signature"]',
  'headers.authorization',
  'headers.Authorization',
  '*.authorization',
  '*.apiKey',
  '*.cardNumber',
  '*.cvv2',
  '*.cvv',
  '*.pan',
  '*.*.cardNumber',
  '*.*.cvv2',
  '*.*.cvv',
];

/** Request paths not logged (probes and scrapes would drown the rest). */
function quiet(url: string): boolean {
  return url === '/metrics' || url.startsWith('/health');
}

/**
 * Fastify's request logging, reduced to one line per request: `request completed` with the request
 * id (`reqId`, bound to every line logged while the request runs), method, URL (no headers, no
 * body), status and response time; `warn` for 4xx and `error` for 5xx. Fastify's built-in logging
 * is used instead of the pino-http middleware, which cost about a third of a request's time.
 */
export class RequestLogController extends LogController {
  constructor() {
    super({ requestIdLogLabel: 'reqId' });
  }

  override incomingRequest(): void {
    // One line per request, written when it completes.
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (quiet(request.url)) return;
    const status = reply.statusCode;
    const level = error || status >= 500 ? 'error' : status >= 400 ? 'warn' : 'info';
    // Below the configured level (LOG_LEVEL=warn: every 2xx), nothing is built.
    // (request.log is a child of the pino logger given to Fastify, createRootLogger.)
    if (!(request.log as pino.Logger).isLevelEnabled(level)) return;
    request.log[level](
      {
        req: { id: request.id, method: request.method, url: request.url },
        res: { statusCode: status },
        responseTime: reply.elapsedTime,
        ...(error ? { err: error } : {}),
      },
      'request completed',
    );
  }
}

/** The pino options shared by Fastify's logger and nestjs-pino's out-of-request logger. */
function pinoOptions(level: string): pino.LoggerOptions {
  return { level, redact: { paths: REDACTED_PATHS, censor: '[REDACTED]' } };
}

/**
 * The root logger, given to Fastify (`loggerInstance`): JSON lines to stdout, or to LOG_FILE
 * (synchronous writes, so nothing is lost), secrets redacted.
 */
export function createRootLogger(level: string, file?: string): pino.Logger {
  return pino(pinoOptions(level), pino.destination({ dest: file ?? 1, sync: true }));
}

/**
 * nestjs-pino options: Nest's `Logger` writes through Fastify's per-request logger
 * (`useExisting`), so every line logged while a request runs carries its `reqId`; outside
 * requests (start-up, jobs) it uses a pino logger with the same options and destination. The
 * request logger is bound by `enterRequestScope` (a Fastify hook), not by nestjs-pino's Nest
 * middleware: going through Nest's middleware layer cost about a fifth of a simple read.
 */
export function loggerOptions(level: string, file?: string): Params {
  return {
    useExisting: true,
    forRoutes: [],
    pinoHttp: [pinoOptions(level), pino.destination({ dest: file ?? 1, sync: true })],
  };
}

/**
 * nestjs-pino's request store: the AsyncLocalStorage its `Logger` reads the current request's
 * logger from (`getStore()?.logger`, the root logger when there is none). The package does not
 * export it, so it is loaded by file path (nestjs-pino is pinned; test/platform.e2e-spec.ts fails if
 * a service's log line loses the request id). The request context lives in it too
 * (common/request-context.ts `enterRequestScope`).
 */
export const pinoStorage = (
  require(path.join(path.dirname(require.resolve('nestjs-pino')), 'storage.js')) as {
    storage: AsyncLocalStorage<unknown>;
  }
).storage;
