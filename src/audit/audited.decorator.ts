import { applyDecorators, type NestInterceptor, SetMetadata, type Type } from '@nestjs/common';
import { INTERCEPTORS_METADATA } from '@nestjs/common/constants';
import { AUDITED_ACTION, AuditInterceptor, type AuditedAction } from './audit.interceptor';

export { AUDITED_ACTION, type AuditedAction } from './audit.interceptor';

/**
 * `@UseInterceptors(interceptor)`, but first in the route's interceptors whatever the order of its
 * decorators, so that it wraps the others (the audit sees an Idempotency-Key's replay and its
 * refusals). Route interceptors run in the order of their metadata list, the first outermost.
 */
function outermostInterceptor(interceptor: Type<NestInterceptor>): MethodDecorator {
  return (_target, _key, descriptor) => {
    const current = (Reflect.getMetadata(INTERCEPTORS_METADATA, descriptor.value as object) ?? []) as unknown[];
    Reflect.defineMetadata(
      INTERCEPTORS_METADATA,
      [interceptor, ...current.filter((other) => other !== interceptor)],
      descriptor.value as object,
    );
    return descriptor;
  };
}

/**
 * Marks a route that changes something: every request to it leaves an audit event (AuditInterceptor,
 * the route's outermost interceptor), written in the change's own database transaction where the
 * change calls `recordAuditedChange`. Routes without it have no interceptor at all (a read pays for
 * none: the authenticated client is put on the request context by ApiKeyGuard).
 */
export const Audited = (action: string, targetType: string) =>
  applyDecorators(
    SetMetadata(AUDITED_ACTION, { action, targetType } satisfies AuditedAction),
    outermostInterceptor(AuditInterceptor),
  );
