import { createHash } from 'node:crypto';
import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { DomainError, ErrorCode } from '../common/errors';
import { PrismaService } from '../database/prisma.service';
import { Prisma, type TransactionKind, type TransactionStatus, type WebhookEvent } from '../generated/prisma/client';
import { stripCardSecrets } from '../provider';
import { LedgerService } from '../transactions/ledger.service';
import { type InboxEvent, WebhookHandlerRegistry, type WebhookOutcome } from './webhook-handlers';

export type { WebhookOutcome } from './webhook-handlers';

/** A verified callback body: `{event, data}` (provider-webhooks.md). */
export interface ProviderEvent {
  event: string;
  data: Record<string, unknown>;
}

/** Ledger events: event name → the kind of ledger row it concerns and the status it means (provider-webhooks.md "Event names"). */
const LEDGER_EVENTS: Record<string, { kind: TransactionKind; to: TransactionStatus }> = {
  'payout.transfer.success': { kind: 'payout', to: 'success' },
  'payout.transfer.failed': { kind: 'payout', to: 'failed' },
  'transaction.deposit.success': { kind: 'collection', to: 'success' },
};

/** The inbox key: event name + data.id + data.status (the provider sends no event id). */
export function dedupeKey(event: ProviderEvent): string {
  return createHash('sha256')
    .update(`${event.event}\n${String(event.data.id ?? '')}\n${String(event.data.status ?? '')}`)
    .digest('hex');
}

/**
 * Provider callbacks: each is stored once in the inbox (WebhookEvent), then applied through the
 * entity's state machine (LedgerService.transition, source `webhook`). A duplicate changes nothing;
 * an event for an unknown record is kept as `unmatched`; an event without a handler yet is kept
 * as `unhandled`. Handled so far: payout.transfer.success|failed and transaction.deposit.success
 * (a collection paid: matched by the collection's provider id or the reference the gateway sent).
 */
@Injectable()
export class WebhooksService implements OnModuleInit {
  private readonly logger = new Logger('Webhooks');

  constructor(
    private readonly prisma: PrismaService,
    private readonly ledger: LedgerService,
    private readonly handlers: WebhookHandlerRegistry,
  ) {}

  /** Registers the ledger events (payouts, deposits) this module applies itself. */
  onModuleInit(): void {
    this.handlers.register(Object.keys(LEDGER_EVENTS), (event) => this.applyLedgerEvent(event));
  }

  /** Parses a verified body. @throws DomainError 400 when it is not `{event: string, data: object}`. */
  parse(body: unknown): ProviderEvent {
    const candidate = body as Partial<ProviderEvent> | null;
    if (!candidate || typeof candidate.event !== 'string' || !candidate.data || typeof candidate.data !== 'object') {
      throw new DomainError(ErrorCode.ValidationFailed, 'A callback body is {"event": string, "data": object}.');
    }
    return { event: candidate.event, data: candidate.data as Record<string, unknown> };
  }

  /**
   * Stores the event (once) and applies it. Returns whether it was a duplicate and the outcome.
   * Never throws for a failed application: the inbox row records it (`failed`, with the error).
   */
  async receive(
    event: ProviderEvent,
    rawBody: string,
    signatureHeader: string,
  ): Promise<{ duplicate: boolean; outcome: WebhookOutcome | 'pending' }> {
    const data = stripCardSecrets(event.data) as Record<string, unknown>;
    const stripped = JSON.stringify(data) !== JSON.stringify(event.data);
    const created = await this.prisma.webhookEvent.createMany({
      data: [
        {
          dedupeKey: dedupeKey(event),
          event: event.event,
          providerId: typeof data.id === 'string' ? data.id : null,
          reference: typeof data.reference === 'string' ? data.reference : null,
          rawBody: stripped ? JSON.stringify({ event: event.event, data }) : rawBody,
          payload: { event: event.event, data } as Prisma.InputJsonValue,
          signatureHeader,
        },
      ],
      skipDuplicates: true,
    });
    if (created.count === 0) return { duplicate: true, outcome: 'pending' };
    const row = await this.prisma.webhookEvent.findUniqueOrThrow({ where: { dedupeKey: dedupeKey(event) } });
    return { duplicate: false, outcome: await this.process(row) };
  }

  /** Applies one stored event and records the outcome on its inbox row. */
  async process(row: WebhookEvent): Promise<WebhookOutcome> {
    let outcome: WebhookOutcome;
    let error: string | null = null;
    try {
      outcome = await this.apply(row);
    } catch (e) {
      outcome = 'failed';
      error = e instanceof Error ? e.message : String(e);
      this.logger.error({ event: row.event, inboxId: row.id, error }, 'webhook processing failed');
    }
    await this.prisma.webhookEvent.update({
      where: { id: row.id },
      data: { outcome, error, processedAt: new Date(), attempts: { increment: 1 } },
    });
    return outcome;
  }

  private async apply(row: WebhookEvent): Promise<WebhookOutcome> {
    const handler = this.handlers.get(row.event);
    if (!handler) return 'unhandled';
    const data = (row.payload as { data?: Record<string, unknown> }).data ?? {};
    return handler({ row, event: row.event, data });
  }

  /** payout.transfer.success|failed and transaction.deposit.success → the ledger row's state machine. */
  private async applyLedgerEvent({ row, event, data }: InboxEvent): Promise<WebhookOutcome> {
    const rule = LEDGER_EVENTS[event];
    const transactionId = await this.matchTransaction(rule.kind, row);
    if (!transactionId) return 'unmatched';
    const { outcome } = await this.ledger.transition(transactionId, rule.to, 'webhook', {
      payload: row.payload as Prisma.InputJsonValue,
      patch: rule.to === 'failed' && typeof data.reason === 'string' ? { failureReason: data.reason } : undefined,
    });
    return outcome;
  }

  /** The ledger row an event is about: by the provider's id or by the reference the gateway sent. */
  private async matchTransaction(kind: TransactionKind, row: WebhookEvent): Promise<string | null> {
    if (kind === 'collection' && row.providerId) {
      const collection = await this.prisma.collection.findUnique({ where: { providerId: row.providerId } });
      if (collection) return collection.transactionId;
    }
    const match = [
      ...(row.providerId ? [{ providerId: row.providerId }] : []),
      ...(row.reference ? [{ reference: row.reference }] : []),
    ];
    if (match.length === 0) return null;
    const transaction = await this.prisma.transaction.findFirst({ where: { kind, OR: match }, select: { id: true } });
    return transaction?.id ?? null;
  }
}
