import { randomUUID } from 'node:crypto';

/**
 * A unique reference for one provider call that moves money (or registers a resource), generated
 * by the gateway and stored before the call, so that a retried or timed-out call and the
 * provider's callbacks can be matched to the local row. Example: `wg-payout-3f0c…`.
 * @param id a UUID to build it from (a payout passes its own row id, so that its reference names it:
 *   the simulator's admin API finds a payout by the gateway's id this way); a random one by default.
 */
export function newReference(kind: string, id: string = randomUUID()): string {
  return `wg-${kind}-${id.replace(/-/g, '')}`;
}
