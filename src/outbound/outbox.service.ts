import { Injectable } from '@nestjs/common';
import type { Prisma, Transaction } from '../generated/prisma/client';
import type { LedgerRow } from '../transactions/ledger-row';
import { toTransactionEventData } from '../transactions/transaction.mapper';
import {
  type GatewayEventType,
  isGatewayEventType,
  ledgerEventType,
  type TransactionEventData,
} from './gateway-events';
import { OutboxRepository } from './outbox.repository';

/** Who receives an event (SQL condition on `webhook_subscriptions s`); the ledger's move uses it inside its own statement. */
export { subscribedTo } from './outbox.repository';

/** The body delivered to subscribers (Standard Webhooks' recommended shape). */
export interface GatewayEvent<T = unknown> {
  type: GatewayEventType;
  /** ISO 8601 UTC: when the event happened (not when an attempt was made). */
  timestamp: string;
  data: T;
}

/**
 * The outbox's writing side. `publish` writes one OutboxMessage per active subscription that takes
 * the event type, inside the caller's database transaction (so the event exists exactly when the
 * change it announces was committed). It never calls the network: OutboxDeliveryService delivers.
 */
@Injectable()
export class OutboxService {
  constructor(private readonly outbox: OutboxRepository) {}

  /**
   * Publishes `data` as event `type` to every active subscription taking it. Pass the caller's
   * transaction client as `tx`; without it the messages are written on their own.
   * `data` must be JSON (amounts as minor-unit numbers or strings, never bigint).
   * Returns how many messages were written (0 when nobody subscribes).
   * @throws Error for an event type missing from GATEWAY_EVENT_TYPES (a programming error).
   */
  async publish(type: GatewayEventType, data: unknown, tx?: Prisma.TransactionClient): Promise<number> {
    if (!isGatewayEventType(type)) throw new Error(`Unknown gateway event type: ${String(type)}`);
    const event: GatewayEvent = { type, timestamp: new Date().toISOString(), data };
    return this.outbox.insertForEvent(type, event as unknown as Prisma.InputJsonValue, tx);
  }

  /**
   * The gateway event a ledger row in its current status announces, as delivered (`{type,
   * timestamp, data}`), or null when that status has none. For LedgerService's one-statement move,
   * which writes the outbox messages in the same SQL statement as the move.
   */
  ledgerEvent(row: LedgerRow): GatewayEvent<TransactionEventData> | null {
    const type = ledgerEventType(row.kind, row.status);
    return type ? { type, timestamp: new Date().toISOString(), data: toTransactionEventData(row) } : null;
  }

  /**
   * Called by LedgerService, in its transaction, after a ledger row reached a new status: publishes
   * the event of gateway-events.ts LEDGER_EVENT_TYPES for (kind, status), if any, with the row's public view.
   */
  async publishLedgerStatus(row: Transaction, tx?: Prisma.TransactionClient): Promise<number> {
    const type = ledgerEventType(row.kind, row.status);
    return type ? this.publish(type, toTransactionEventData(row), tx) : 0;
  }
}
