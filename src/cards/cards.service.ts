import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { recordAuditedChange } from '../audit/audit-chain';
import { creatorId, ownedByCurrentClient, ownedOrNotFound, ownerRestriction } from '../audit/ownership';
import {
  ConflictError,
  DomainError,
  ErrorCode,
  InvalidStateTransitionError,
  providerDidNotAct,
  ValidationError,
} from '../common/errors';
import { noteIdempotentResource } from '../common/idempotency/idempotency-context';
import { minorToNumber } from '../common/money';
import { Page, toPage } from '../common/pagination';
import { newReference } from '../common/reference';
import { CustomersService } from '../customers/customers.service';
import { isUniqueViolation } from '../database/unique-violation';
import type { Card, CardStatus, Prisma, StatusChangeSource } from '../generated/prisma/client';
import { OutboxService } from '../outbound/outbox.service';
import {
  CARD_CURRENCY,
  ProviderAmountMismatchError,
  ProviderCard,
  ProviderClient,
  stripCardSecrets,
} from '../provider';
import { LedgerService } from '../transactions/ledger.service';
import { CardLedgerService } from './card-ledger.service';
import { cardExpiry, topUpAmountProblems } from './card-rules';
import { CARD_ISSUING_HOLDER_STATUSES, CARD_MOVES, CardAction, cardMoveOutcome } from './card-state';
import { CardBillingAddressDto, CardDto, CreateCardDto, ListCardsQueryDto } from './card.dto';
import { CardMoveResult, CardPatch, type CardRow, CardsRepository } from './cards.repository';

export function toCardDto(row: CardRow): CardDto {
  return {
    id: row.id,
    providerId: row.providerId,
    customerId: row.customerId,
    cardHolderId: row.cardHolderId,
    status: row.status,
    createdStatus: row.createdStatus,
    brand: row.brand,
    type: row.type,
    nameOnCard: row.nameOnCard,
    last4: row.last4,
    expiryMonth: row.expiryMonth,
    expiryYear: row.expiryYear,
    balance: minorToNumber(row.balance),
    currency: row.currency,
    initialAmount: minorToNumber(row.initialAmount),
    reference: row.reference,
    billingAddress: (row.billingAddress as CardBillingAddressDto | null) ?? null,
    failureReason: row.failureReason,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** Card details worth keeping from a provider answer or callback; never the number or CVV. */
export interface CardDetails {
  last4?: string | null;
  brand?: string | null;
  nameOnCard?: string | null;
  validThru?: string | null;
  expiresAt?: Date | null;
  billingAddress?: Record<string, unknown> | null;
  createdStatus?: string | null;
}

/** The card columns `details` sets (only what it carries; a malformed last4 is ignored). */
export function cardDetailsPatch(details: CardDetails): CardPatch {
  const expiry = cardExpiry(details.validThru, details.expiresAt);
  return {
    ...(details.last4 && /^\d{4}$/.test(details.last4) ? { last4: details.last4 } : {}),
    ...(details.brand ? { brand: details.brand.toLowerCase() } : {}),
    ...(details.nameOnCard ? { nameOnCard: details.nameOnCard } : {}),
    ...(expiry ? { expiryMonth: expiry.month, expiryYear: expiry.year } : {}),
    ...(details.billingAddress
      ? { billingAddress: stripCardSecrets(details.billingAddress) as Prisma.InputJsonValue }
      : {}),
    ...(details.createdStatus ? { createdStatus: details.createdStatus } : {}),
  };
}

/**
 * Virtual cards (docs/provider.md#cards). Write-ahead like payouts: the
 * Card row (`created`) and, for a non-zero initial funding, its `card_topup` ledger row exist before
 * the provider's create call and hold its answer after (`pending`); a refusal makes both `failed`
 * (422), a timeout or 5xx `unknown` (504/502), settled by `virtualcard.created.success|failed`.
 * Reaching `active` publishes the gateway event `card.created`, reaching `failed`
 * `card.creation_failed` (outbox, same database transaction; data: the masked card).
 * Statuses move only by the table in card-state.ts; freeze, unfreeze and terminate are checked
 * and claimed locally first (409 `invalid_state_transition`, provider not called; see `act`).
 *
 * Card secrets: the provider has no read-card endpoint; its freeze/unfreeze/terminate answers
 * carry the full number and CVV, which `src/provider` drops (`stripCardSecrets`) before anything
 * here sees them. The gateway keeps `last4`, brand, expiry and name only. Revealing full card
 * details is NOT offered: it would mean storing the number (or freezing and unfreezing a card to
 * read it), which the security rules forbid; the `cards:reveal` scope stays reserved for a
 * provider endpoint that reads a card on demand (README "Cards").
 */
@Injectable()
export class CardsService {
  private readonly logger = new Logger('Cards');

  constructor(
    private readonly ledger: LedgerService,
    private readonly provider: ProviderClient,
    private readonly customers: CustomersService,
    private readonly cards: CardsRepository,
    private readonly cardLedger: CardLedgerService,
    private readonly outbox: OutboxService,
  ) {}

  /**
   * Creates a card for a registered card holder, funded with `amount` USD minor units (0, or
   * 300–250000). Answers the card `pending` (the provider's createdStatus) with no last4 yet: the
   * creation callback brings it.
   * @throws ValidationError (400) amount outside the bounds; NotFoundError (404) customer;
   * ConflictError (409) no card holder, a holder whose KYC failed, or a reference already used;
   * ProviderError (422 → card `failed`; 502/504 → card `unknown`), the rows kept;
   * ProviderAmountMismatchError (502) when the answer states another funding → card `failed`, funding `needs_review`.
   * Ownership (OWNERSHIP=client): the customer must be the client's (else 404), and a holder another
   * client registered counts as none (409). The card takes its holder's `created_by` (the request's
   * client for a holder without one), its funding the card's; the request's audit event
   * (`card.create`, target the card) is written with the card.
   */
  async create(input: CreateCardDto): Promise<CardDto> {
    const amount = BigInt(input.amount);
    if (amount > 0n) {
      const problems = topUpAmountProblems(amount);
      if (problems.length) throw new ValidationError(problems);
    }
    const customer = await this.customers.requireRow(input.customerId);
    const found = await this.cards.holderOf(customer.id);
    const holder = found && ownedByCurrentClient(found) ? found : null;
    if (!holder) {
      throw new ConflictError(
        `Customer ${customer.id} is not a card holder yet: register it with POST /v1/card-holders first.`,
      );
    }
    if (!CARD_ISSUING_HOLDER_STATUSES.includes(holder.status)) {
      throw new ConflictError(`The card holder of customer ${customer.id} is ${holder.status}: no card can be issued.`);
    }
    const reference = input.reference ?? newReference('card');
    const type = input.type ?? 'virtual';
    const owner = holder.createdBy ?? creatorId();

    let written: { card: Card; fundingId: string | null };
    try {
      written = await this.cards.withTransaction(async (tx) => {
        const card = await this.cards.createCard(
          {
            customerId: customer.id,
            cardHolderId: holder.id,
            brand: input.brand,
            type,
            currency: CARD_CURRENCY,
            initialAmount: amount,
            reference,
            createdBy: owner,
          },
          tx,
        );
        // Under an Idempotency-Key, a retry after a crash is answered from this card (not its funding).
        await noteIdempotentResource(tx, 'card', card.id);
        const fundingId = amount > 0n ? randomUUID() : null;
        // The request's event names the card: written before the funding's ledger row, which then writes none.
        await recordAuditedChange(tx, card.id, { fundingId });
        const funding =
          fundingId !== null
            ? await this.ledger.record(
                {
                  id: fundingId,
                  kind: 'card_topup',
                  direction: 'credit',
                  amount,
                  currency: CARD_CURRENCY,
                  customerId: customer.id,
                  cardId: card.id,
                  // The card's own reference: the creation callback names it.
                  reference,
                  description: 'Initial card funding',
                  createdBy: owner,
                },
                'api',
                tx,
              )
            : null;
        return { card, fundingId: funding?.id ?? null };
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw new ConflictError(`The reference ${reference} is already used.`);
      throw error;
    }
    const { card, fundingId } = written;

    try {
      const upstream = await this.provider.createCard({
        customerEmail: customer.email,
        cardType: type,
        cardBrand: input.brand,
        reference,
        amountMinor: amount,
        firstName: holder.firstName,
        lastName: holder.lastName,
      });
      await this.cards.withTransaction(async (tx) => {
        const patch: CardPatch = {
          createdStatus: upstream.createdStatus,
          providerPayload: upstream.raw as Prisma.InputJsonValue,
          ...(upstream.brand ? { brand: upstream.brand } : {}),
          ...(upstream.cardType ? { type: upstream.cardType } : {}),
        };
        const moved = await this.cards.move(card.id, 'accept', { ...patch, providerId: upstream.id }, tx);
        if (moved.outcome === 'refused' && !moved.card.providerId) {
          // The creation callback overtook this answer: keep its status, add the provider's id.
          await this.cards.attachProviderId(card.id, upstream.id, tx);
        }
        if (fundingId) {
          await this.cardLedger.settle(fundingId, 'pending', 'api', {
            tx,
            patch: { providerPayload: upstream.raw as Prisma.InputJsonValue },
          });
        }
      });
      if (upstream.createdStatus === 'success' || upstream.createdStatus === 'failed') {
        // Created (or refused) at once: settle as the callback would.
        await this.settleCreation(card.id, upstream.createdStatus, 'api', {
          payload: upstream.raw as Prisma.InputJsonValue,
        });
      }
    } catch (error) {
      // A funding the provider states otherwise than asked (502 provider_amount_mismatch) leaves a card
      // nothing may use: `failed` (final, so no late callback activates it), its funding `needs_review`.
      const refused = providerDidNotAct(error) || error instanceof ProviderAmountMismatchError;
      await this.cards.withTransaction(async (tx) => {
        const moved = await this.cards.move(
          card.id,
          refused ? 'refuse' : 'lose',
          { failureReason: messageOf(error) },
          tx,
        );
        if (fundingId) await this.ledger.recordProviderFailure(fundingId, error, tx);
        if (refused && moved.outcome === 'applied') {
          await this.outbox.publish('card.creation_failed', toCardDto(moved.card), tx);
        }
      });
      throw error;
    }
    return toCardDto(await this.cards.requireCard(card.id));
  }

  /**
   * Settles a card's creation: `success` → card `active` (with the details the callback carries)
   * and its initial funding `success` (balance credited); `failed` → card and funding `failed`.
   * Forward-only and idempotent: a repeated or late callback changes nothing.
   * Returns the card move's outcome, `applied` when only the funding moved.
   */
  async settleCreation(
    cardId: string,
    result: 'success' | 'failed',
    source: StatusChangeSource,
    opts: {
      details?: CardDetails;
      reason?: string | null;
      providerId?: string | null;
      payload?: Prisma.InputJsonValue;
    },
  ): Promise<CardMoveResult['outcome']> {
    // The initial funding: the card's own reference names it (written with the card, never changed).
    const card = await this.cards.requireCard(cardId);
    const found = await this.ledger.findByProviderIdOrReference('card_topup', null, card.reference);
    const funding = found?.cardId === cardId ? found : null;
    return this.cards.withTransaction(async (tx) => {
      const current = await this.cards.requireCard(cardId, tx);
      const patch: CardPatch = {
        ...cardDetailsPatch({ ...opts.details, createdStatus: result }),
        ...(opts.providerId && !current.providerId ? { providerId: opts.providerId } : {}),
        ...(result === 'failed' ? { failureReason: opts.reason ?? 'The provider could not create the card.' } : {}),
        ...(opts.payload ? { providerPayload: opts.payload } : {}),
      };
      const moved = await this.cards.move(cardId, result === 'success' ? 'activate' : 'fail', patch, tx);
      if (moved.outcome === 'refused') return 'refused';
      const settled = funding
        ? await this.cardLedger.settle(funding.id, result, source, {
            tx,
            payload: opts.payload,
            patch: result === 'failed' ? { failureReason: opts.reason ?? 'Card creation failed.' } : undefined,
          })
        : null;
      if (moved.outcome === 'applied') {
        // Announced to subscribed apps in this transaction (masked view, balance after the funding).
        const card = await this.cards.requireCard(cardId, tx);
        await this.outbox.publish(result === 'success' ? 'card.created' : 'card.creation_failed', toCardDto(card), tx);
      }
      return moved.outcome === 'unchanged' && settled?.outcome === 'applied' ? 'applied' : moved.outcome;
    });
  }

  /** One card, masked. @throws NotFoundError (404), also for another client's under OWNERSHIP=client. */
  async get(id: string): Promise<CardDto> {
    return toCardDto(await this.requireOwnCard(id));
  }

  /**
   * Card `id` when the current request may see it (OWNERSHIP=client: its client's own).
   * @throws NotFoundError (404) when absent or another client's.
   */
  async requireOwnCard(id: string): Promise<CardRow> {
    return ownedOrNotFound(await this.cards.requireCard(id), 'Card', id);
  }

  /** Newest first, keyset-paginated; optionally one customer's, optionally in one status; only the client's own under OWNERSHIP=client. */
  async list(query: ListCardsQueryDto): Promise<Page<CardDto>> {
    const limit = query.limit ?? 20;
    const rows = await this.cards.listCards(
      { customerId: query.customerId, status: query.status as CardStatus | undefined, cursor: query.cursor },
      limit,
    );
    return toPage(rows, limit, toCardDto);
  }

  /**
   * Freezes, unfreezes or terminates a card at the provider, then locally. Allowed: active →
   * frozen, frozen → active, active | frozen → terminated (card-state.ts). The provider's answer
   * carries the full number and CVV; they are dropped in `src/provider`, and only last4, name,
   * expiry and billing address are kept.
   *
   * The card is claimed before the provider is called (`CardsRepository.claimTransition`: one
   * conditional UPDATE of `cards.transition`), so of concurrent requests for one card exactly one
   * reaches the provider; the others answer 409 at once. The claim is released after the answer:
   * accepted → the status moves and the claim clears in one database transaction; refused (422),
   * 5xx or timeout → the claim clears and the status stays. A claim left by a process that died
   * mid-call lapses after CARD_TRANSITION_LEASE_TIMEOUTS × PROVIDER_TIMEOUT_MS.
   * @throws NotFoundError (404); InvalidStateTransitionError (409 `invalid_state_transition`) for a
   * move the table forbids — the provider is not called; DomainError (409 `invalid_state_transition`
   * with `transitionInFlight`: the move another request is making) — the provider is not called;
   * ProviderError (422/502/504): card unchanged. Under OWNERSHIP=client another client's card is a
   * 404, checked before anything is claimed.
   * After a timeout the provider may have made the move while the card here has not: the provider
   * has no read-card endpoint to settle it by, and no callback for these moves (a repeated request
   * then answers the provider's 422).
   */
  async act(id: string, action: CardAction): Promise<CardDto> {
    const rule = CARD_MOVES[action];
    if (ownerRestriction() !== undefined) await this.requireOwnCard(id);
    const claim = await this.cards.claimTransition(id, action);
    if (claim.outcome === 'refused') {
      const { card } = claim;
      const inFlight = this.cards.liveTransition(card);
      if (cardMoveOutcome(action, card.status) === 'apply' && card.providerId && inFlight) {
        throw new DomainError(
          ErrorCode.InvalidStateTransition,
          `Card ${card.id} has a ${inFlight} in flight: it cannot ${action} until that is answered.`,
          { from: card.status, to: rule.to, transitionInFlight: inFlight },
        );
      }
      throw new InvalidStateTransitionError('card', card.status, rule.to);
    }
    const card = await this.cards.requireCard(id);
    const call: Record<CardAction, (cardId: string) => Promise<ProviderCard>> = {
      freeze: (cardId) => this.provider.freezeCard(cardId),
      unfreeze: (cardId) => this.provider.unfreezeCard(cardId),
      terminate: (cardId) => this.provider.terminateCard(cardId),
    };
    let upstream: ProviderCard;
    try {
      upstream = await call[action](card.providerId as string);
    } catch (error) {
      // Refused, failed or timed out: the card keeps its status, the claim goes.
      await this.cards.releaseTransition(id, action, claim.startedAt);
      throw error;
    }
    const { outcome, card: moved } = await this.cards.releaseTransition(id, action, claim.startedAt, {
      ...cardDetailsPatch({
        last4: upstream.last4,
        nameOnCard: upstream.cardName,
        validThru: upstream.validThru,
        expiresAt: upstream.expiresAt,
        billingAddress: upstream.billingAddress,
      }),
      providerPayload: upstream.raw as Prisma.InputJsonValue,
    });
    if (outcome === 'refused') {
      // Only a callback can have moved the card meanwhile (e.g. its creation failed late).
      this.logger.warn({ cardId: id, action, status: moved.status }, 'card moved while its transition was in flight');
      throw new InvalidStateTransitionError('card', moved.status, rule.to);
    }
    return toCardDto(moved);
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
