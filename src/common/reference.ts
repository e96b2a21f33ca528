import { randomUUID } from 'node:crypto';

/**
 * A unique reference for one provider call that moves money (or registers a resource), generated
 * by the gateway and stored before the call, so that a retried or timed-out call and the
 * provider's callbacks can be matched to the local row. Example: `wg-payout-3f0c…`.
 */
export function newReference(kind: string): string {
  return `wg-${kind}-${randomUUID().replace(/-/g, '')}`;
}
