import { Injectable, OnModuleInit } from '@nestjs/common';
import type { InboxEvent, WebhookOutcome } from '../webhooks/webhook-handlers';
import { WebhookHandlerRegistry } from '../webhooks/webhook-handlers';
import { BeneficiariesRepository } from './beneficiaries.repository';

/** Beneficiary events (docs/provider.md#events: id, reference, status). */
export const BENEFICIARY_EVENTS = [
  'beneficiary.status.changed',
  'beneficiary.status.pending',
  'beneficiary.status.success',
] as const;

/**
 * Forward-only order of beneficiary statuses: a status may only replace one of lower rank, so a late
 * `pending` after `success` changes nothing. `success` and `failed` are both final. Statuses the
 * provider documents nowhere are ignored (`refused`) rather than guessed.
 */
const RANK: Record<string, number> = { pending: 0, processing: 1, success: 2, active: 2, failed: 2, inactive: 2 };

/** The status an event carries: `data.status`, else the one in the event name. */
function statusOf({ event, data }: InboxEvent): string | null {
  const given = typeof data.status === 'string' ? data.status.toLowerCase() : null;
  return given ?? (event === 'beneficiary.status.changed' ? null : event.slice('beneficiary.status.'.length));
}

/**
 * Applies beneficiary status callbacks to the local Beneficiary (matched by provider id, else by
 * the reference the gateway sent), forward-only by RANK. A conditional update makes a duplicate or
 * concurrent delivery `unchanged`.
 */
@Injectable()
export class BeneficiaryEventsHandler implements OnModuleInit {
  constructor(
    private readonly repository: BeneficiariesRepository,
    private readonly registry: WebhookHandlerRegistry,
  ) {}

  onModuleInit(): void {
    this.registry.register([...BENEFICIARY_EVENTS], (event) => this.apply(event));
  }

  async apply(event: InboxEvent): Promise<WebhookOutcome> {
    const status = statusOf(event);
    if (!status || RANK[status] === undefined) return 'refused';
    const beneficiary = await this.repository.findByProviderIdOrReference(event.row.providerId, event.row.reference);
    if (!beneficiary) return 'unmatched';
    if (beneficiary.status === status) return 'unchanged';
    const lower = Object.keys(RANK).filter((s) => RANK[s] < RANK[status]);
    // Statuses unknown to RANK (set by an older provider answer) may be replaced by any known one.
    const replaceable = RANK[beneficiary.status] === undefined ? [beneficiary.status, ...lower] : lower;
    return (await this.repository.moveStatus(beneficiary.id, replaceable, status)) ? 'applied' : 'refused';
  }
}
