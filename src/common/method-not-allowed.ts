import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, ErrorCode } from './errors';
import { sendProblem } from './problem-details.filter';

/** The methods a path may be asked for with; HEAD is served wherever GET is (Fastify's exposeHeadRoutes). */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/**
 * The methods the app's router serves at `path` (a request path without its query), in METHODS
 * order, asked of the router itself (`findRoute`, which matches a concrete path as a request is
 * matched): never a list kept by hand. Empty for a path no route matches.
 */
export function allowedMethods(fastify: FastifyInstance, path: string): string[] {
  return METHODS.filter((method) => fastify.findRoute({ method, url: path }) !== null);
}

/**
 * For a request the router found no route for (`request.is404`): when its path has routes with other
 * methods, answers it and returns true; otherwise returns false (a 404 follows, as for an unknown path).
 * - OPTIONS → 204 with `Allow` (what the path serves, OPTIONS included): RFC 9110 §9.3.7;
 * - any other method → 405 problem+json `method_not_allowed` with the same `Allow` (RFC 9110 §15.5.6).
 */
export function answerMethodNotAllowed(
  fastify: FastifyInstance,
  request: FastifyRequest,
  reply: FastifyReply,
): boolean {
  const path = (request.raw.url ?? '/').split('?')[0];
  const allowed = allowedMethods(fastify, path);
  if (!allowed.length) return false;
  const allow = [...allowed, 'OPTIONS'].join(', ');
  void reply.header('allow', allow);
  if (request.method === 'OPTIONS') {
    void reply.status(204).send();
    return true;
  }
  sendProblem(
    reply,
    request,
    new DomainError(ErrorCode.MethodNotAllowed, `${request.method} is not allowed here; this path serves ${allow}.`, {
      allow: allow.split(', '),
    }),
  );
  return true;
}
