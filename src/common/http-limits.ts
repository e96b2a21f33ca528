import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, ErrorCode, ValidationError } from './errors';
import { sendProblem, toProblem } from './problem-details.filter';

/**
 * Limits on the shape of a request, checked before anything reads it, each answered with an
 * `application/problem+json` problem like every other error:
 * - URL longer than MAX_URL_LENGTH characters → 414 `uri_too_long` (an `onRequest` hook; above
 *   Node's header limit the socket handler below answers instead);
 * - one path parameter longer than MAX_PARAM_LENGTH → 414 `uri_too_long` (Fastify's router);
 * - request line + headers over Node's `--max-http-header-size` (16 KiB by default) → 414 when the
 *   request line alone is over MAX_URL_LENGTH, else 431 `request_headers_too_large`;
 * - JSON nested deeper than MAX_JSON_DEPTH → 400 `validation_failed` (before JSON.parse).
 */
export const MAX_URL_LENGTH = 8192;
export const MAX_PARAM_LENGTH = 100;
export const MAX_JSON_DEPTH = 32;

const OPEN_SQUARE = 0x5b;
const OPEN_CURLY = 0x7b;
const CLOSE_SQUARE = 0x5d;
const CLOSE_CURLY = 0x7d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * True when the JSON text in `body` nests arrays/objects deeper than `limit` (`[[1]]` has depth 2).
 * One pass over the bytes, brackets inside strings ignored (escapes honoured). UTF-8 continuation
 * bytes are >= 0x80, so they never look like a bracket or a quote. Malformed JSON is left to the parser.
 */
export function exceedsJsonDepth(body: Buffer, limit = MAX_JSON_DEPTH): boolean {
  if (body.length <= limit) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < body.length; i++) {
    const byte = body[i];
    if (inString) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) inString = true;
    else if (byte === OPEN_SQUARE || byte === OPEN_CURLY) {
      if (++depth > limit) return true;
    } else if (byte === CLOSE_SQUARE || byte === CLOSE_CURLY) depth--;
  }
  return false;
}

/** The 400 answered for a JSON body nested deeper than MAX_JSON_DEPTH. */
export function jsonTooDeep(limit = MAX_JSON_DEPTH): ValidationError {
  return new ValidationError([{ field: 'body', message: `JSON must not be nested deeper than ${limit} levels` }]);
}

function uriTooLong(what: string): DomainError {
  return new DomainError(ErrorCode.UriTooLong, what);
}

/** `onRequest` check: a URL over MAX_URL_LENGTH characters → 414 problem, before routing work or hooks that read it. */
export function checkUrlLength(request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  if ((request.raw.url ?? '').length > MAX_URL_LENGTH) {
    sendProblem(reply, request, uriTooLong(`The URL is longer than ${MAX_URL_LENGTH} characters.`));
    return;
  }
  done();
}

/**
 * Fastify's `frameworkErrors`: what the router refuses before any hook runs, as problem+json.
 * A path parameter over MAX_PARAM_LENGTH → 414; a path that is not valid percent-encoded UTF-8
 * (`%ED%A0%80`, a lone surrogate) → 400 naming `path`. The offending path is not echoed.
 */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  let problem: unknown = error;
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH')
    problem = uriTooLong(`A path segment of the URL is longer than ${MAX_PARAM_LENGTH} characters.`);
  else if (error.code === 'FST_ERR_BAD_URL')
    problem = new ValidationError([{ field: 'path', message: 'the URL path must be valid percent-encoded UTF-8' }]);
  sendProblem(reply, request, problem);
}

/** Request line of a raw HTTP packet longer than MAX_URL_LENGTH (or not even ended within the packet). */
function requestLineTooLong(packet: unknown): boolean {
  if (!Buffer.isBuffer(packet)) return false;
  const end = packet.indexOf('\n');
  return end === -1 ? packet.length > MAX_URL_LENGTH : end > MAX_URL_LENGTH;
}

/**
 * Fastify's `clientErrorHandler`: Node's HTTP parser refused the request before Fastify saw it, so
 * the answer is written on the socket: an over-long request line → 414, other header overflow →
 * 431, a request that did not arrive in time → 408, anything else malformed → 400; always
 * problem+json, then the connection is closed. A reset connection gets nothing.
 */
export function clientErrorHandler(error: Error & { code?: string; rawPacket?: unknown }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  let status: number;
  let problem: DomainError;
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    if (requestLineTooLong(error.rawPacket)) {
      status = 414;
      problem = uriTooLong(`The URL is longer than ${MAX_URL_LENGTH} characters.`);
    } else {
      status = 431;
      problem = new DomainError(ErrorCode.HeadersTooLarge, 'The request line and headers are over the size limit.');
    }
  } else if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    // No code of its own: a client too slow to send its request is told so with status 408.
    status = 408;
    problem = new DomainError(ErrorCode.ValidationFailed, 'The request did not arrive in time.');
  } else {
    status = 400;
    problem = new DomainError(ErrorCode.ValidationFailed, 'The request is not valid HTTP.');
  }
  const body = JSON.stringify({ ...toProblem(problem), status });
  if (socket.writable) {
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        'Connection: close\r\n' +
        'Content-Type: application/problem+json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  }
  socket.destroySoon();
}
