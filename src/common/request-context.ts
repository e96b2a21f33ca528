import { AsyncLocalStorage } from 'node:async_hooks';
import type { FastifyInstance } from 'fastify';

/** The API client a request acts for, as the audit trail names it. */
export interface AuditActor {
  id: string;
  name: string;
}

/**
 * What code running for an HTTP request knows of it without being handed it (AsyncLocalStorage,
 * entered once per request by an onRequest hook, app.ts): its id (the `x-request-id` answered, sent
 * upstream to the provider), the authenticated client (set by ApiKeyGuard once the key is checked),
 * and the action its route declares with `@Audited` (set by AuditInterceptor). `recorded` turns true once a
 * change's own database transaction wrote the request's event (recordAuditedChange).
 */
export interface RequestContext {
  requestId: string;
  actor?: AuditActor;
  action?: string;
  targetType?: string;
  recorded: boolean;
  /** OWNERSHIP=client: the request sees only rows its client created (audit/ownership.ts). */
  ownerOnly?: boolean;
}

const storage = new AsyncLocalStorage<RequestContext>();

/** Runs each HTTP request inside its own context (a Fastify hook, like the request logger's). */
export function bindRequestContext(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request, _reply, done) => {
    storage.run({ requestId: request.id, recorded: false }, done);
  });
}

/** Runs `work` inside `context` (a CLI command, a test). */
export function runWithRequestContext<T>(context: RequestContext, work: () => Promise<T>): Promise<T> {
  return storage.run(context, work);
}

/** The context of the request running now, if any (none in jobs, callbacks applied in the background, the CLI). */
export function currentRequestContext(): RequestContext | undefined {
  return storage.getStore();
}

/** The API client the current request acts for, if any. */
export function currentActor(): AuditActor | undefined {
  return storage.getStore()?.actor;
}

/** The id of the HTTP request this code runs for (sent upstream as `x-request-id`); undefined outside a request. */
export function currentRequestId(): string | undefined {
  return storage.getStore()?.requestId;
}
