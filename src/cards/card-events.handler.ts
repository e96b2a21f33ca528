import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import type { Prisma, TransactionKind } from '../generated/prisma/client';
import { MetricsService } from '../metrics/metrics.service';
import { answerMismatch, CARD_CURRENCY, CARD_EVENTS, type CardEvent, ProviderUnits, readCardEvent } from '../provider';
import { LedgerService } from '../transactions/ledger.service';
import type { InboxEvent, WebhookOutcome } from '../webhooks/webhook-handlers';
import { RefusedEventError, WebhookHandlerRegistry } from '../webhooks/webhook-handlers';
import { CardLedgerService } from './card-ledger.service';
import { CardsRepository } from './cards.repository';
import { CardsService } from './cards.service';

/** The ledger kind of the gateway's movement a `card.topup` / `card.withdrawal` event settles. */
const MONEY_EVENT_KINDS: Record<'card.topup' | 'card.withdrawal', TransactionKind> = {
  'card.topup': 'card_topup',
  'card.withdrawal': 'card_withdrawal',
};

/**
 * Applies the provider's card callbacks to cards, card holders and the ledger. The provider's
 * dialect stops in `src/provider`: each event's `data` is read there (`readCardEvent`: field names,
 * status spellings, the amount's unit CARD_EVENT_AMOUNT_UNIT) into a typed `CardEvent`.
 * Every handler is idempotent and forward-only: ledger rows move through `LedgerService.transition`
 * with source `webhook` (via CardLedgerService, which also moves the card balance once per settlement),
 * cards through the table in card-state.ts. An event naming a card, transaction or card user the
 * gateway does not know is `unmatched` (kept for reconciliation).
 */
@Injectable()
export class CardEventsHandler implements OnModuleInit {
  private readonly logger = new Logger('CardEvents');

  constructor(
    private readonly registry: WebhookHandlerRegistry,
    private readonly cards: CardsRepository,
    private readonly cardsService: CardsService,
    private readonly cardLedger: CardLedgerService,
    private readonly ledger: LedgerService,
    private readonly units: ProviderUnits,
    private readonly metrics: MetricsService,
  ) {}

  onModuleInit(): void {
    this.registry.register([...CARD_EVENTS], (event) => this.apply(event));
  }

  /** Reads one card callback (`readCardEvent`) and applies it. @throws ValidationError for a malformed amount. */
  async apply(inbox: InboxEvent): Promise<WebhookOutcome> {
    const event = readCardEvent(this.units, inbox.event, inbox.data);
    if (!event) return 'unhandled';
    switch (event.type) {
      case 'card.created':
        return this.applyCreated(inbox, event);
      case 'card.topup':
      case 'card.withdrawal':
        return this.applyMoney(inbox, event);
      case 'card.spend':
      case 'card.spend_reversed':
        return this.applySpend(inbox, event);
      case 'card_holder.kyc':
        return this.applyKyc(event);
    }
  }

  /** `card.created` → card `active` (with last4, brand, expiry) or `failed`, and its initial funding; one in progress changes nothing. */
  private async applyCreated(
    { row }: InboxEvent,
    event: Extract<CardEvent, { type: 'card.created' }>,
  ): Promise<WebhookOutcome> {
    const card = await this.cards.findByProvider(row.providerId, row.reference);
    if (!card) return 'unmatched';
    if (event.inProgress) return 'unchanged';
    return this.cardsService.settleCreation(card.id, event.result, 'webhook', {
      providerId: row.providerId,
      reason: event.reason,
      payload: row.payload as Prisma.InputJsonValue,
      details: event.details ?? undefined,
    });
  }

  /** `card.topup` / `card.withdrawal` → the gateway's ledger row (by provider id, else reference). */
  private async applyMoney(
    inbox: InboxEvent,
    event: Extract<CardEvent, { type: 'card.topup' | 'card.withdrawal' }>,
  ): Promise<WebhookOutcome> {
    const { row, event: name } = inbox;
    const transaction = await this.ledger.findByProviderIdOrReference(
      MONEY_EVENT_KINDS[event.type],
      row.providerId,
      row.reference,
    );
    if (!transaction) return 'unmatched';
    // The event's own status wins when it says the movement is still in progress (forward-only refuses it).
    const to = event.status === 'pending' ? 'pending' : event.result;
    const mismatch =
      event.amountMinor === null
        ? null
        : answerMismatch(
            name,
            { amountMinor: transaction.amount, currency: transaction.currency },
            { amountMinor: event.amountMinor, currency: CARD_CURRENCY },
            { id: row.providerId, raw: inbox.data },
          );
    if (mismatch) {
      // Not applied as sent: the row goes to a person (no balance effect until resolved), as a
      // mismatched answer does (docs/money-safety.md); a final row stays where it is.
      this.metrics.countProviderAmountMismatch(name);
      const review = await this.cardLedger.settle(transaction.id, 'needs_review', 'webhook', {
        payload: row.payload as Prisma.InputJsonValue,
        patch: { failureReason: mismatch.message },
      });
      this.logger.warn(
        {
          event: name,
          transactionId: transaction.id,
          expected: transaction.amount.toString(),
          got: String(event.amountMinor),
        },
        'card event states another amount than the ledger row; not applied',
      );
      throw new RefusedEventError(
        `${mismatch.message} ${transaction.kind} ${transaction.id} ${review.transaction.status === 'needs_review' ? 'held needs_review for a person to resolve' : `left ${review.transaction.status}`}; the event was not applied.`,
      );
    }
    const { outcome } = await this.cardLedger.settle(transaction.id, to, 'webhook', {
      known: transaction,
      payload: row.payload as Prisma.InputJsonValue,
      patch: {
        ...(row.providerId && !transaction.providerId ? { providerId: row.providerId } : {}),
        ...(to === 'failed' ? { failureReason: event.reason ?? 'failed' } : {}),
      },
    });
    return outcome;
  }

  /**
   * `card.spend` (debit, credit, declined) → a `card_spend` row (balance − / +; a decline a `failed`
   * one, no money moved), upserted by the provider's id; `card.spend_reversed` → the spend it names
   * (by provider id, else reference) `reversed`: the spend given back.
   */
  private async applySpend(
    { row }: InboxEvent,
    event: Extract<CardEvent, { type: 'card.spend' | 'card.spend_reversed' }>,
  ): Promise<WebhookOutcome> {
    const card = event.cardProviderId ? await this.cards.findByProvider(event.cardProviderId, null) : null;
    if (!card) return 'unmatched';
    const payload = row.payload as Prisma.InputJsonValue;
    if (event.type === 'card.spend') {
      return event.movement
        ? this.cardLedger.applyProviderMovement(card, event.movement, 'webhook', payload)
        : 'unmatched';
    }
    const spend = event.providerId ? await this.ledger.findCardSpend(card.id, event.providerId, event.reference) : null;
    if (!spend) return 'unmatched';
    const { outcome } = await this.cardLedger.settle(spend.id, 'reversed', 'webhook', { payload });
    return outcome;
  }

  /**
   * `card_holder.kyc` → the card holder `active` or `failed` (from `pending`, or from `created` /
   * `unknown`: a registration whose answer was overtaken or never came).
   */
  private async applyKyc(event: Extract<CardEvent, { type: 'card_holder.kyc' }>): Promise<WebhookOutcome> {
    const holder = await this.cards.findHolderForKyc(event.providerUserId, event.email);
    if (!holder) return 'unmatched';
    if (event.result === 'success') {
      return this.cards.moveHolder(
        holder,
        'kycPassed',
        event.providerUserId && !holder.providerUserId ? { providerUserId: event.providerUserId } : {},
      );
    }
    return this.cards.moveHolder(holder, 'kycFailed', { failureReason: event.reason ?? 'KYC failed' });
  }
}
