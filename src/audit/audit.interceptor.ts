import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { catchError, from, mergeMap, Observable, throwError } from 'rxjs';
import { DomainError, ErrorCode } from '../common/errors';
import { currentRequestContext } from '../common/request-context';
import { AuditTrailService } from './audit-trail.service';

export const AUDITED_ACTION = 'audit:action';

/** What an audited route does: its action (e.g. `payout.confirm`) and the type of resource it changes. */
export interface AuditedAction {
  action: string;
  targetType: string;
}

/** The id a request's answer or path names (the resource created, or the one in `/:id`). */
function targetIdOf(request: FastifyRequest, body?: unknown): string | null {
  const fromBody = (body as { id?: unknown } | undefined)?.id;
  if (typeof fromBody === 'string') return fromBody;
  const param = (request.params as Record<string, unknown> | undefined)?.id;
  return typeof param === 'string' ? param : null;
}

/**
 * The interceptor of every `@Audited` route (put there by the decorator, outermost): puts the
 * route's action on the request context (for `recordAuditedChange` in the change's transaction),
 * then makes sure the request leaves an event: after success, one written on its own if no change's
 * transaction wrote it (a replayed Idempotency-Key answer changes nothing and writes none); after an
 * error, one with outcome `refused` (4xx: the gateway or the provider said no) or `failed` (5xx),
 * with the error's code. The authenticated client (and, with OWNERSHIP=client, the ownership rule)
 * is already on the context: ApiKeyGuard puts it there for every route.
 */
@Injectable()
export class AuditInterceptor implements NestInterceptor {
  constructor(
    private readonly reflector: Reflector,
    private readonly trail: AuditTrailService,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const store = currentRequestContext();
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const audited = this.reflector.get<AuditedAction | undefined>(AUDITED_ACTION, context.getHandler());
    if (!audited || !store) return next.handle();
    store.action = audited.action;
    store.targetType = audited.targetType;
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    return next.handle().pipe(
      mergeMap(async (body: unknown) => {
        if (!store.recorded && reply.getHeader('idempotent-replayed') !== 'true') {
          await this.trail.recordRequest(store, targetIdOf(request, body), 'succeeded');
        }
        return body;
      }),
      catchError((error: unknown) => {
        const code = error instanceof DomainError ? error.code : ErrorCode.InternalError;
        const status = error instanceof DomainError ? error.status : 500;
        return from(
          this.trail.recordRequest(store, targetIdOf(request), status < 500 ? 'refused' : 'failed', { code, status }),
        ).pipe(mergeMap(() => throwError(() => error)));
      }),
    );
  }
}
