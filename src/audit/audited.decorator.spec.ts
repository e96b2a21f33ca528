import { type CallHandler, type ExecutionContext, type NestInterceptor, UseInterceptors } from '@nestjs/common';
import { INTERCEPTORS_METADATA } from '@nestjs/common/constants';
import type { Observable } from 'rxjs';
import { AuditInterceptor } from './audit.interceptor';
import { Audited } from './audited.decorator';

class OtherInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle();
  }
}

class Routes {
  @Audited('thing.create', 'thing')
  @UseInterceptors(OtherInterceptor)
  auditedAbove(): void {}

  @UseInterceptors(OtherInterceptor)
  @Audited('thing.update', 'thing')
  auditedBelow(): void {}

  @Audited('thing.read', 'thing')
  auditedAlone(): void {}

  plain(): void {}
}

const interceptorsOf = (method: keyof Routes) =>
  Reflect.getMetadata(
    INTERCEPTORS_METADATA,
    Object.getOwnPropertyDescriptor(Routes.prototype, method)?.value as object,
  ) as unknown[] | undefined;

describe('@Audited', () => {
  it('puts AuditInterceptor first (outermost) whatever the order of the decorators, once', () => {
    expect(interceptorsOf('auditedAbove')).toEqual([AuditInterceptor, OtherInterceptor]);
    expect(interceptorsOf('auditedBelow')).toEqual([AuditInterceptor, OtherInterceptor]);
    expect(interceptorsOf('auditedAlone')).toEqual([AuditInterceptor]);
  });

  it('leaves a route without it with no interceptor', () => {
    expect(interceptorsOf('plain')).toBeUndefined();
  });
});
