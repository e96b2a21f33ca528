import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DatabaseUnavailableError, isDatabaseUnavailable } from '../database/unavailable';
import { BearerChallengeError, DomainError, ERROR_CODES, ErrorCode, HTTP_STATUS_BY_CODE } from './errors';

/** An RFC 9457 problem body with the gateway's stable `code`. */
export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  instance?: string;
  requestId?: string;
  [extension: string]: unknown;
}

/** Codes for HTTP statuses raised outside our services (Nest, Fastify, throttler). */
const CODE_BY_HTTP_STATUS: Record<number, ErrorCode> = {
  400: ErrorCode.ValidationFailed,
  401: ErrorCode.Unauthorized,
  403: ErrorCode.Forbidden,
  404: ErrorCode.NotFound,
  405: ErrorCode.MethodNotAllowed,
  409: ErrorCode.Conflict,
  413: ErrorCode.PayloadTooLarge,
  414: ErrorCode.UriTooLong,
  415: ErrorCode.ValidationFailed,
  431: ErrorCode.HeadersTooLarge,
  429: ErrorCode.RateLimited,
};

/** Builds the problem body for any thrown value; never leaks a stack trace or an unknown message. */
export function toProblem(thrown: unknown, instance?: string, requestId?: string): ProblemDetails {
  // A lost or refused database connection, from any layer, is the retryable 503, never a 500.
  const error =
    !(thrown instanceof DomainError) && isDatabaseUnavailable(thrown) ? new DatabaseUnavailableError() : thrown;
  let code: ErrorCode;
  let status: number;
  let detail: string;
  let extensions: Record<string, unknown> = {};
  if (error instanceof DomainError) {
    ({ code, status } = error);
    detail = error.message;
    extensions = error.extensions;
  } else if (error instanceof HttpException || isFastifyError(error)) {
    status = error instanceof HttpException ? error.getStatus() : error.statusCode;
    code = CODE_BY_HTTP_STATUS[status] ?? (status >= 500 ? ErrorCode.InternalError : ErrorCode.ValidationFailed);
    detail = status >= 500 ? ERROR_CODES[ErrorCode.InternalError].title : httpMessage(error);
  } else {
    code = ErrorCode.InternalError;
    status = HTTP_STATUS_BY_CODE[code];
    detail = 'An unexpected error occurred.';
  }
  return {
    type: `urn:wallet-gateway:problem:${code}`,
    title: ERROR_CODES[code].title,
    status,
    detail,
    code,
    ...(instance ? { instance } : {}),
    ...(requestId ? { requestId } : {}),
    ...extensions,
  };
}

function isFastifyError(error: unknown): error is Error & { statusCode: number; code?: string } {
  return error instanceof Error && typeof (error as { statusCode?: unknown }).statusCode === 'number';
}

function httpMessage(error: HttpException | (Error & { statusCode: number })): string {
  if (error instanceof HttpException) {
    const response = error.getResponse();
    if (typeof response === 'string') return response;
    const message = (response as { message?: unknown }).message;
    if (Array.isArray(message)) return message.join('; ');
    if (typeof message === 'string') return message;
  }
  return error.message;
}

const MAX_INSTANCE_LENGTH = 1024;

/** Writes a problem to a Fastify reply (also used by Fastify's own error handler in app setup). */
export function sendProblem(reply: FastifyReply, request: FastifyRequest, error: unknown, logger?: Logger): void {
  // `instance` is the path, unless it is too long to be worth echoing (a 414's path, say).
  const path = request.url.split('?')[0];
  const problem = toProblem(error, path.length <= MAX_INSTANCE_LENGTH ? path : undefined, String(request.id));
  if (problem.code === ErrorCode.DatabaseUnavailable && logger) {
    logger.warn(
      { code: problem.code, error: error instanceof Error ? error.message : String(error) },
      'database unavailable',
    );
  } else if (problem.status >= 500 && logger) {
    // Unexpected errors are logged with their stack; DomainErrors only with their code.
    if (error instanceof DomainError) logger.warn({ code: problem.code, detail: problem.detail }, 'request failed');
    else logger.error({ err: error }, 'unhandled error');
  }
  // A problem saying when to come back (`retryAfter`, seconds: provider_retry_later, database_unavailable) says it in the header too.
  if (typeof problem.retryAfter === 'number') void reply.header('retry-after', String(problem.retryAfter));
  // A refused bearer token says why in the RFC 6750 / RFC 9470 challenge too.
  if (error instanceof BearerChallengeError) void reply.header('www-authenticate', error.challenge);
  void reply.status(problem.status).header('content-type', 'application/problem+json; charset=utf-8').send(problem);
}

/**
 * The one exception filter: every error leaving a route becomes `application/problem+json`
 * with a stable `code` (errors.ts maps codes to statuses).
 */
@Catch()
export class ProblemDetailsFilter implements ExceptionFilter {
  private readonly logger = new Logger('ProblemDetails');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    sendProblem(http.getResponse<FastifyReply>(), http.getRequest<FastifyRequest>(), exception, this.logger);
  }
}

export { HttpStatus };
