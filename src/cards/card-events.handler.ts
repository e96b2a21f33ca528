import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { PrismaService } from '../database/prisma.service';
import type { Prisma, TransactionKind, TransactionStatus } from '../generated/prisma/client';
import { ProviderUnits } from '../provider';
import { LedgerService } from '../transactions/ledger.service';
import type { InboxEvent, WebhookOutcome } from '../webhooks/webhook-handlers';
import { WebhookHandlerRegistry } from '../webhooks/webhook-handlers';
import { CardLedgerService } from './card-ledger.service';
import { ledgerStatusOfCardTransaction } from './card-rules';
import { CardsRepository } from './cards.repository';
import { CardsService } from './cards.service';

/** Card creation results (provider-webhooks.md "Event names": id, reference, status, createdStatus / reason). */
export const CARD_CREATED_EVENTS = ['virtualcard.created.success', 'virtualcard.created.failed'] as const;

/** Settlements of the gateway's top-ups and withdrawals (id, cardId, amount, status, reference, narrative). */
export const CARD_MONEY_EVENTS: Record<string, { kind: TransactionKind; to: TransactionStatus }> = {
  'virtualcard.topup.success': { kind: 'card_topup', to: 'success' },
  'virtualcard.topup.failed': { kind: 'card_topup', to: 'failed' },
  'virtualcard.withdrawal.success': { kind: 'card_withdrawal', to: 'success' },
  'virtualcard.withdrawal.failed': { kind: 'card_withdrawal', to: 'failed' },
};

/** Card spending the provider starts (id, cardId, amount, narrative, status, reason). */
export const CARD_SPEND_EVENTS = [
  'virtualcard.transaction.debit',
  'virtualcard.transaction.credit',
  'virtualcard.transaction.reversed',
  'virtualcard.transaction.declined',
] as const;

/** KYC results of a card holder (id = the provider's card user id, customerEmail, status, reason). */
export const CARD_KYC_EVENTS = ['virtualcard.user.kyc.success', 'virtualcard.user.kyc.failed'] as const;

/** A string field of an event's data (ids may come as numbers: never validated as UUIDs). */
function text(data: Record<string, unknown>, key: string): string | null {
  const value = data[key];
  if (typeof value === 'string' && value.trim()) return value.trim();
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return null;
}

/**
 * Applies the provider's card callbacks (created, money, spend and KYC events above) to cards, card holders and the ledger.
 * Every handler is idempotent and forward-only: ledger rows move through `LedgerService.transition`
 * with source `webhook` (via CardLedgerService, which also moves the card balance once per settlement),
 * cards through the table in card-state.ts. An event naming a card, transaction or card user the
 * gateway does not know is `unmatched` (kept for reconciliation). Card-event `amount` is read with
 * `ProviderUnits.cardEventAmountToMinor`, in the unit the provider unit table gives card events: the
 * setting CARD_EVENT_AMOUNT_UNIT (src/config/env.ts; major by default; provider-webhooks.md "Event
 * names": dollars or cents "not documented").
 */
@Injectable()
export class CardEventsHandler implements OnModuleInit {
  private readonly logger = new Logger('CardEvents');

  constructor(
    private readonly prisma: PrismaService,
    private readonly registry: WebhookHandlerRegistry,
    private readonly cards: CardsRepository,
    private readonly cardsService: CardsService,
    private readonly cardLedger: CardLedgerService,
    private readonly ledger: LedgerService,
    private readonly units: ProviderUnits,
  ) {}

  onModuleInit(): void {
    this.registry.register([...CARD_CREATED_EVENTS], (event) => this.applyCreated(event));
    this.registry.register(Object.keys(CARD_MONEY_EVENTS), (event) => this.applyMoney(event));
    this.registry.register([...CARD_SPEND_EVENTS], (event) => this.applySpend(event));
    this.registry.register([...CARD_KYC_EVENTS], (event) => this.applyKyc(event));
  }

  /** virtualcard.created.success|failed → card `active` (with last4, brand, expiry) or `failed`, and its initial funding. */
  async applyCreated({ row, event, data }: InboxEvent): Promise<WebhookOutcome> {
    const card = await this.cards.findByProvider(row.providerId, row.reference);
    if (!card) return 'unmatched';
    const success = event === 'virtualcard.created.success';
    // A creation still in progress is no result: a late `pending` changes nothing.
    const progress = (text(data, 'createdStatus') ?? text(data, 'status'))?.toLowerCase();
    if (success && progress === 'pending') return 'unchanged';
    return this.cardsService.settleCreation(card.id, success ? 'success' : 'failed', 'webhook', {
      providerId: row.providerId,
      reason: text(data, 'reason'),
      payload: row.payload as Prisma.InputJsonValue,
      details: success
        ? {
            last4: text(data, 'last4'),
            brand: text(data, 'cardBrand'),
            nameOnCard: text(data, 'cardName'),
            validThru: text(data, 'valid'),
            expiresAt: text(data, 'expiry') ? new Date(text(data, 'expiry') as string) : null,
            billingAddress:
              data.billingAddress && typeof data.billingAddress === 'object'
                ? (data.billingAddress as Record<string, unknown>)
                : null,
          }
        : undefined,
    });
  }

  /** virtualcard.topup|withdrawal.success|failed → the gateway's ledger row (by provider id, else reference). */
  async applyMoney({ row, event, data }: InboxEvent): Promise<WebhookOutcome> {
    const rule = CARD_MONEY_EVENTS[event];
    const transaction = await this.ledger.findByProviderIdOrReference(rule.kind, row.providerId, row.reference);
    if (!transaction) return 'unmatched';
    // The event's own status wins when it says the movement is still in progress (forward-only refuses it).
    const to = ledgerStatusOfCardTransaction(text(data, 'status')) === 'pending' ? 'pending' : rule.to;
    const amount = data.amount === undefined || data.amount === null ? null : this.amountOf(event, data);
    if (amount !== null && amount !== transaction.amount) {
      this.logger.warn(
        { event, transactionId: transaction.id, expected: transaction.amount.toString(), got: amount.toString() },
        'card event amount differs from the ledger row; the ledger amount is kept',
      );
    }
    const { outcome } = await this.cardLedger.settle(transaction.id, to, 'webhook', {
      payload: row.payload as Prisma.InputJsonValue,
      patch: {
        ...(row.providerId && !transaction.providerId ? { providerId: row.providerId } : {}),
        ...(to === 'failed' ? { failureReason: text(data, 'reason') ?? text(data, 'narrative') ?? 'failed' } : {}),
      },
    });
    return outcome;
  }

  /**
   * virtualcard.transaction.* (card spending): `debit` and `credit` record a `card_spend` row
   * (balance − / +), `declined` records a `failed` one (no money moved), `reversed` moves the
   * spend it names to `reversed` (the spend given back). Upserted by the provider's id.
   */
  async applySpend({ row, event, data }: InboxEvent): Promise<WebhookOutcome> {
    const cardProviderId = text(data, 'cardId');
    const card = cardProviderId ? await this.cards.findByProvider(cardProviderId, null) : null;
    const id = text(data, 'id');
    if (!card || !id) return 'unmatched';
    const payload = row.payload as Prisma.InputJsonValue;

    if (event === 'virtualcard.transaction.reversed') {
      const spend =
        (await this.prisma.transaction.findFirst({ where: { cardId: card.id, providerId: id } })) ??
        (await this.findByReference(card.id, text(data, 'reference')));
      if (!spend) return 'unmatched';
      const { outcome } = await this.cardLedger.settle(spend.id, 'reversed', 'webhook', { payload });
      return outcome;
    }

    const declined = event === 'virtualcard.transaction.declined';
    const status: TransactionStatus = declined
      ? 'failed'
      : (ledgerStatusOfCardTransaction(text(data, 'status')) ?? 'success');
    return this.cardLedger.applyProviderMovement(
      card,
      {
        providerId: id,
        reference: text(data, 'reference'),
        kind: 'card_spend',
        direction: event === 'virtualcard.transaction.credit' ? 'credit' : 'debit',
        status: status === 'reversed' ? 'success' : status,
        // A decline may name no amount: nothing moved either way.
        amount: declined && (data.amount === undefined || data.amount === null) ? 0n : this.amountOf(event, data),
        narrative: text(data, 'narrative'),
        failureReason: declined ? (text(data, 'reason') ?? 'declined') : null,
        payload,
      },
      'webhook',
    );
  }

  /**
   * virtualcard.user.kyc.success|failed → the card holder `active` or `failed` (from `pending`, or
   * from `created` / `unknown`: a registration whose answer was overtaken or never came).
   */
  async applyKyc({ event, data }: InboxEvent): Promise<WebhookOutcome> {
    const userId = text(data, 'id');
    const email = text(data, 'customerEmail')?.toLowerCase();
    const holder = await this.cards.holderOfCallback(userId ?? null, email ?? null);
    if (!holder) return 'unmatched';
    if (event === 'virtualcard.user.kyc.success') {
      return this.cards.moveHolder(
        holder,
        'kycPassed',
        userId && !holder.providerUserId ? { providerUserId: userId } : {},
      );
    }
    return this.cards.moveHolder(holder, 'kycFailed', { failureReason: text(data, 'reason') ?? 'KYC failed' });
  }

  private amountOf(event: string, data: Record<string, unknown>): bigint {
    return this.units.cardEventAmountToMinor(event, data.amount as string | number);
  }

  private async findByReference(cardId: string, reference: string | null) {
    if (!reference) return null;
    return this.prisma.transaction.findFirst({ where: { cardId, reference } });
  }
}
