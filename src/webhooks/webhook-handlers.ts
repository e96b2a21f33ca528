import { Injectable } from '@nestjs/common';
import type { WebhookEvent } from '../generated/prisma/client';

/** What happened to one callback. */
export type WebhookOutcome = 'applied' | 'unchanged' | 'refused' | 'unmatched' | 'unhandled' | 'failed';

/** A stored provider event handed to a handler: the inbox row plus its `data` object (card secrets already stripped). */
export interface InboxEvent {
  row: WebhookEvent;
  event: string;
  data: Record<string, unknown>;
}

/**
 * Thrown by a handler that refuses an event for good (never retried, never dropped): the inbox keeps
 * it `refused` with this message as its `error`. E.g. a move the row's state machine refuses, or a
 * callback stating other money than its ledger row holds (the row then held for review).
 */
export class RefusedEventError extends Error {}

/**
 * Applies one event to local state and says what happened. Must be idempotent (a retried event
 * must not apply twice) and should return `unmatched` when the record it names is not known yet
 * (reconciliation retries those). Throwing marks the event `failed`; it is retried with backoff (a `RefusedEventError` marks it `refused`).
 */
export type WebhookHandler = (event: InboxEvent) => Promise<WebhookOutcome>;

/**
 * Event name → handler. Each domain module registers the events it owns (docs/provider.md#events) in its `onModuleInit`; the webhooks module stays free of domain rules.
 */
@Injectable()
export class WebhookHandlerRegistry {
  private readonly handlers = new Map<string, WebhookHandler>();

  /** @throws Error when an event name already has a handler (two owners would be a bug). */
  register(events: string[], handler: WebhookHandler): void {
    for (const name of events) {
      if (this.handlers.has(name)) throw new Error(`webhook event ${name} already has a handler`);
      this.handlers.set(name, handler);
    }
  }

  /** The handler for an event name, if any. */
  get(event: string): WebhookHandler | undefined {
    return this.handlers.get(event);
  }

  /** Every event name with a handler. */
  events(): string[] {
    return [...this.handlers.keys()].sort();
  }
}
