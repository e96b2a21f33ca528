import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { auditedChangeRecorded, auditedChangeSql } from '../audit/audit-chain';
import { creatorId, ownedOrNotFound, ownerRestriction } from '../audit/ownership';
import { ConflictError, ValidationError } from '../common/errors';
import { idempotentWriteSql, lostClaim } from '../common/idempotency/idempotency-context';
import { Page, toPage } from '../common/pagination';
import { newReference } from '../common/reference';
import type { Prisma } from '../generated/prisma/client';
import { CARD_CURRENCY, cardMovementOfListing, ProviderClient } from '../provider';
import type { CardMovementRow } from '../transactions/ledger-row';
import { INSERTED, LedgerService } from '../transactions/ledger.service';
import { toCardMovementDto } from '../transactions/transaction.mapper';
import { CardLedgerService } from './card-ledger.service';
import { topUpAmountProblems } from './card-rules';
import { MONEY_MOVING_CARD_STATUSES } from './card-state';
import { CardTransactionDto, ListCardTransactionsQueryDto } from './card.dto';
import { CARD_WRITABLE, type CardRow, CardsRepository } from './cards.repository';

/** Page size asked of the provider's card-transaction listing, and the most pages one sync reads. */
export const SYNC_PAGE_SIZE = 100;
export const MAX_SYNC_PAGES = 50;

/** A card movement as the cards API answers it: the ledger's one row view (transaction.mapper.ts). */
export function toCardTransactionDto(row: CardMovementRow): CardTransactionDto {
  return toCardMovementDto(row);
}

/**
 * Card money movements through the API: top-ups and withdrawals (docs/provider.md#cards:
 * topUpCard, withdrawFromCard), written ahead on the ledger like payouts
 * (`created` → `pending` on the provider's answer; refusal `failed` 422; timeout or 5xx `unknown`
 * 504/502), settled by `virtualcard.topup|withdrawal.*` callbacks or by a transaction sync; and the
 * card's transaction list, refreshed from the provider's paged listing.
 */
@Injectable()
export class CardTransactionsService {
  constructor(
    private readonly ledger: LedgerService,
    private readonly provider: ProviderClient,
    private readonly cards: CardsRepository,
    private readonly cardLedger: CardLedgerService,
  ) {}

  /**
   * Cards whose stored balance has drifted from their ledger (CardsRepository.balanceDrift): each
   * should be none. The stored balance is kept in the same database transaction as every card
   * movement's settlement, so a drift means a move that bypassed it (a bug or a hand edit).
   */
  balanceDrift(limit?: number): Promise<Array<{ cardId: string; balance: bigint; ledger: bigint }>> {
    return this.cards.balanceDrift(limit);
  }

  /**
   * Tops a card up by `amount` USD minor units (300–250000, i.e. 3.00–2,500.00 USD).
   * @throws ValidationError (400) outside the bounds, nothing stored; NotFoundError (404);
   * ConflictError (409) the card is not `active` (frozen, terminated, not created yet) or a
   * terminate is in flight (a freeze or unfreeze in flight does not stop it);
   * ProviderError (422 → `failed`; 502/504 → `unknown`), the ledger row kept;
   * ProviderAmountMismatchError (502) when the answer states another amount → `needs_review`.
   * Under OWNERSHIP=client another client's card is a 404. The movement's ledger row takes the
   * card's `created_by` (a sub-resource follows its parent); the request's audit event
   * (`card.top_up`, target the card, the row's id in details) is written with the row.
   */
  async topUp(cardId: string, amount: number): Promise<CardTransactionDto> {
    const problems = topUpAmountProblems(BigInt(amount));
    if (problems.length) throw new ValidationError(problems);
    return this.moveMoney(cardId, 'card_topup', BigInt(amount));
  }

  /**
   * Withdraws `amount` USD minor units from a card back to the wallet (the provider checks the
   * card's balance). @throws as `topUp`, with one bound: at most the provider's int32
   * (ProviderClient.checkAmountFits: 400, nothing stored or sent).
   */
  async withdraw(cardId: string, amount: number): Promise<CardTransactionDto> {
    this.provider.checkAmountFits('withdrawFromCard', BigInt(amount), CARD_CURRENCY);
    return this.moveMoney(cardId, 'card_withdrawal', BigInt(amount));
  }

  private async moveMoney(
    cardId: string,
    kind: 'card_topup' | 'card_withdrawal',
    amount: bigint,
  ): Promise<CardTransactionDto> {
    const topUp = kind === 'card_topup';
    const now = Date.now();
    const id = randomUUID();
    // Write-ahead, ONE statement under a share lock on the card: a terminate claimed before this
    // refuses it (the card is going away), and one claimed after waits until this row exists. A
    // freeze or unfreeze in flight does not refuse it, by design: neither moves money, a frozen card
    // keeps its balance, and whether the provider takes a top-up or withdrawal on a frozen card is
    // its call (docs/provider.md#what-the-provider-leaves-unsaid) — a refusal fails the row (422).
    // The row, its history, the Idempotency-Key's claim (the top-up and withdrawal routes defer it
    // to here) or note, and the request's audit event (naming the card, the row's id in its details)
    // are written together, or nothing when the card refuses it (the key's record is then written
    // alone, so that the refusal is the key's answer).
    const { row: data, entry } = this.ledger.prepareRecord({
      id,
      kind,
      direction: topUp ? 'credit' : 'debit',
      amount,
      cardId,
      reference: newReference(topUp ? 'card-topup' : 'card-withdrawal'),
      description: topUp ? 'Card top-up' : 'Card withdrawal',
    });
    const key = idempotentWriteSql(kind, id, CARD_WRITABLE);
    const written = await this.cards.recordMoneyMove(
      cardId,
      {
        statuses: MONEY_MOVING_CARD_STATUSES,
        liveSince: new Date(now - this.cards.leaseMs),
        owner: ownerRestriction(),
        creator: creatorId(),
      },
      data,
      entry,
      key,
      auditedChangeSql(cardId, INSERTED, { transactionId: id }),
    );
    key.settled(written.keyHeld);
    const card = ownedOrNotFound(written.card, 'Card', cardId);
    if (!MONEY_MOVING_CARD_STATUSES.includes(card.status) || !card.providerId) {
      throw new ConflictError(`Card ${card.id} is ${card.status}: it takes no top-ups or withdrawals.`, undefined, {
        cardStatus: card.status,
      });
    }
    const inFlight = this.cards.liveTransition(card, now);
    if (inFlight === 'terminate') {
      throw new ConflictError(`Card ${card.id} is being terminated: it takes no top-ups or withdrawals.`, undefined, {
        cardStatus: card.status,
        transitionInFlight: inFlight,
      });
    }
    const row = written.row;
    // The card qualified but nothing was written: the Idempotency-Key claim was lost to a retry (409).
    if (!row) throw written.writable ? lostClaim() : new ConflictError(`Card ${card.id} takes no movement now.`);
    auditedChangeRecorded();
    try {
      const input = { cardId: card.providerId, amountMinor: amount, reference: row.reference };
      const upstream = topUp ? await this.provider.topUpCard(input) : await this.provider.withdrawFromCard(input);
      const payload = upstream.raw as Prisma.InputJsonValue;
      const patch = { providerId: upstream.id, providerPayload: payload };
      const settled = upstream.status && upstream.status !== 'pending' ? upstream.status : null;
      // The provider's answer (and, when it is the last move, the Idempotency-Key's answer): one statement.
      const pending = await this.cardLedger.settleAlone(row, 'pending', 'api', {
        patch,
        answer: settled ? undefined : toCardTransactionDto,
      });
      if (pending && !settled) {
        return (pending.answered as CardTransactionDto | undefined) ?? toCardTransactionDto(pending.transaction);
      }
      if (!pending) {
        await this.cards.withTransaction(async (tx) => {
          const moved = await this.cardLedger.settle(row.id, 'pending', 'api', { tx, patch });
          if (moved.outcome === 'refused' && !moved.transaction.providerId) {
            // Its callback overtook this answer: keep the callback's status, add the provider's id.
            await this.ledger.attachProviderId(row.id, upstream.id, tx);
          }
        });
      }
      if (settled) await this.cardLedger.settle(row.id, settled, 'api', { payload, known: pending?.transaction });
    } catch (error) {
      await this.ledger.recordProviderFailure(row.id, error);
      throw error;
    }
    return toCardTransactionDto(await this.ledger.get(row.id));
  }

  /**
   * The card's movements (top-ups, withdrawals, spends), newest first, keyset-paginated. The first
   * page (no cursor) is refreshed from the provider's listing first unless `refresh=false`.
   * @throws NotFoundError (404, also another client's card under OWNERSHIP=client); ValidationError
   * (400) bad cursor; ProviderError (502/504) when the refresh fails (ask again with `refresh=false`
   * for the local rows alone).
   */
  async list(cardId: string, query: ListCardTransactionsQueryDto): Promise<Page<CardTransactionDto>> {
    if (!query.cursor && query.refresh !== false)
      await this.sync(ownedOrNotFound(await this.cards.requireCard(cardId), 'Card', cardId));
    const limit = query.limit ?? 20;
    // The page and the card's owner in one statement (a hot read): the ownership rule is checked on it.
    const { card, rows } = await this.ledger.cardMovementsPage(cardId, query.cursor, limit);
    ownedOrNotFound(card, 'Card', cardId);
    return toPage(rows, limit, toCardTransactionDto);
  }

  /**
   * Reads the provider's listing of the card, newest first (page/take/order DESC, following
   * `meta.hasNextPage`, at most MAX_SYNC_PAGES pages) and applies each row with source
   * `reconciliation`: local top-ups and withdrawals it finds are settled (matched by provider id,
   * else by the reference the gateway sent), movements the gateway never saw are recorded. Upserted
   * by provider id: syncing again adds no row. It stops at the first page that changes nothing once
   * every local row still open (created, unknown, pending) has been seen, so a repeated sync reads
   * one page, not the card's whole history. A card without a provider id is not synced.
   * Returns how many listing rows were read and how many changed something.
   */
  async sync(card: CardRow): Promise<{ read: number; changed: number }> {
    if (!card.providerId) return { read: 0, changed: 0 };
    const open = await this.ledger.openCardMovements(card.id);
    const unseen = new Set(open.map((row) => row.reference));
    let read = 0;
    let changed = 0;
    for (let page = 1; page <= MAX_SYNC_PAGES; page++) {
      const listing = await this.provider.listCardTransactions(card.providerId, {
        order: 'DESC',
        page,
        take: SYNC_PAGE_SIZE,
      });
      let pageChanged = 0;
      for (const item of listing.transactions) {
        read += 1;
        const movement = cardMovementOfListing(item);
        if (!movement) continue;
        const seen = open.find(
          (row) =>
            row.providerId === movement.providerId || (movement.reference && row.reference === movement.reference),
        );
        if (seen) unseen.delete(seen.reference);
        const outcome = await this.cardLedger.applyProviderMovement(card, movement, 'reconciliation');
        if (outcome === 'applied') pageChanged += 1;
      }
      changed += pageChanged;
      if (!listing.meta.hasNextPage || listing.transactions.length === 0) break;
      if (pageChanged === 0 && unseen.size === 0) break;
    }
    return { read, changed };
  }
}
