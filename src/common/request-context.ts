import type { FastifyRequest } from 'fastify';
import { pinoStorage } from '../logging';

/** Who a request acts for, as the audit trail names it: an API client (its id), or a person (id null, named). */
export interface AuditActor {
  id: string | null;
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
  /**
   * The database transaction (its client) that wrote the request's event and has not committed yet
   * (recordAuditedChange): a second call in it writes none; `recorded` turns true at its commit.
   */
  auditedIn?: object;
  /** OWNERSHIP=client: the request sees only rows its client created (audit/ownership.ts). */
  ownerOnly?: boolean;
}

/**
 * What a request runs inside, in nestjs-pino's store (logging.ts `pinoStorage`): one
 * AsyncLocalStorage per request, not two (under Node 20 every promise created while a store is
 * enabled copies each enabled store, so a second one costs on every await of every request).
 * It has nestjs-pino's `Store` shape (`logger`, reassigned by `PinoLogger.assign`) plus the context.
 */
class RequestScope {
  responseLogger: undefined;

  constructor(
    readonly context: RequestContext,
    public logger: unknown,
  ) {}
}

/**
 * Runs the rest of an HTTP request inside its own scope (called from the app's onRequest hook,
 * app.ts): its context, and Fastify's request logger (`request.log`, which binds `reqId`) for every
 * line Nest's `Logger` writes while it runs (what nestjs-pino's middleware would do, without Nest's
 * middleware layer). `next` runs inside the scope, and so does everything it continues to.
 */
export function enterRequestScope(request: FastifyRequest, next: () => void): void {
  pinoStorage.run(new RequestScope({ requestId: request.id, recorded: false }, request.log), next);
}

/** Runs `work` inside `context` (a CLI command, a test); Nest's `Logger` writes through the root logger there. */
export function runWithRequestContext<T>(context: RequestContext, work: () => Promise<T>): Promise<T> {
  return pinoStorage.run(new RequestScope(context, undefined), work);
}

/** The context of the request running now, if any (none in jobs, callbacks applied in the background, the CLI). */
export function currentRequestContext(): RequestContext | undefined {
  const scope = pinoStorage.getStore();
  return scope instanceof RequestScope ? scope.context : undefined;
}

/** The API client the current request acts for, if any. */
export function currentActor(): AuditActor | undefined {
  return currentRequestContext()?.actor;
}

/** The id of the HTTP request this code runs for (sent upstream as `x-request-id`); undefined outside a request. */
export function currentRequestId(): string | undefined {
  return currentRequestContext()?.requestId;
}
