import { AsyncLocalStorage } from 'node:async_hooks';
import type { FastifyInstance } from 'fastify';

/** What code running for an HTTP request may learn about it without being handed it. */
export interface RequestContext {
  /** The request id (the caller's sane `x-request-id`, else a new UUID; see app.ts). */
  requestId: string;
}

/**
 * The current HTTP request's context, kept across awaits (AsyncLocalStorage). Entered once per
 * request by an onRequest hook (app.ts `bindRequestContext`); empty outside requests (jobs, start-up).
 */
export const requestContext = new AsyncLocalStorage<RequestContext>();

/** The id of the HTTP request this code runs for; undefined outside a request. */
export function currentRequestId(): string | undefined {
  return requestContext.getStore()?.requestId;
}

/** Runs each request inside `requestContext` holding its id (an onRequest hook, before any handler). */
export function bindRequestContext(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request, _reply, done) => {
    requestContext.run({ requestId: String(request.id) }, done);
  });
}
