import { SetMetadata } from '@nestjs/common';

export const AUDITED_ACTION = 'audit:action';

/** What an audited route does: its action (e.g. `payout.confirm`) and the type of resource it changes. */
export interface AuditedAction {
  action: string;
  targetType: string;
}

/**
 * Marks a route that changes something: every request to it leaves an audit event (AuditInterceptor),
 * written in the change's own database transaction where the change calls `recordAuditedChange`.
 */
export const Audited = (action: string, targetType: string) =>
  SetMetadata(AUDITED_ACTION, { action, targetType } satisfies AuditedAction);
