import { Injectable, type OnModuleInit } from '@nestjs/common';
import { isUniqueViolation } from '../database/unique-violation';
import type { Prisma, StatusChangeSource, Transaction, TransactionStatus } from '../generated/prisma/client';
import { MetricsService } from '../metrics/metrics.service';
import { answerMismatch, CARD_CURRENCY, type CardMovement } from '../provider';
import {
  LedgerService,
  MOVED,
  movableFrom,
  TransactionPatch,
  TransitionOutcome,
  type TransitionResult,
} from '../transactions/ledger.service';
import { balanceEffect } from './card-rules';
import { type CardRow, CardsRepository } from './cards.repository';

type Tx = Prisma.TransactionClient;

/**
 * Card money movements on the ledger: status moves through `LedgerService.transition` (the one
 * code that moves a Transaction's status), with the card's balance changed in the same database
 * transaction when a movement succeeds or a successful one is reversed (card-rules.ts
 * `balanceEffect`). So a balance moves exactly once per settlement, however often a callback or
 * a sync repeats it.
 */
@Injectable()
export class CardLedgerService implements OnModuleInit {
  constructor(
    private readonly ledger: LedgerService,
    private readonly cards: CardsRepository,
    private readonly metrics: MetricsService,
  ) {}

  /**
   * A card top-up or withdrawal resolved by hand (out of `needs_review`) changes the card's balance
   * like any settlement: `success` counts it once (balanceEffect), `failed` changes nothing.
   */
  onModuleInit(): void {
    this.ledger.registerManualMoveEffect(['card_topup', 'card_withdrawal'], async (tx, row, from) => {
      if (row.cardId)
        await this.cards.addToBalance(row.cardId, balanceEffect(row.direction, row.amount, from, row.status), tx);
    });
  }

  /**
   * Moves a card movement's ledger row to `to` (forward only, transaction-state.ts) and applies
   * its balance effect, in one database transaction (the row locked by LedgerService.transition, which
   * says the status it left). Without `tx`, with `known` (the row as last read or written), ONE
   * statement when it can be (settleAlone).
   * @throws NotFoundError (404).
   */
  async settle(
    id: string,
    to: TransactionStatus,
    source: StatusChangeSource,
    opts: { patch?: TransactionPatch; payload?: Prisma.InputJsonValue; tx?: Tx; known?: Transaction } = {},
  ): Promise<{ outcome: TransitionOutcome; transaction: Transaction }> {
    if (!opts.tx && opts.known?.id === id) {
      const alone = await this.settleAlone(opts.known, to, source, opts);
      if (alone) return alone;
    }
    const run = async (tx: Tx) => {
      // transition locks the row and says the status it moved from; direction and amount never change.
      const result = await this.ledger.transition(id, to, source, { tx, patch: opts.patch, payload: opts.payload });
      const { transaction: row } = result;
      if (result.outcome === 'applied' && row.cardId) {
        await this.cards.addToBalance(row.cardId, balanceEffect(row.direction, row.amount, result.from, to), tx);
      }
      return result;
    };
    return opts.tx ? run(opts.tx) : this.cards.withTransaction(run);
  }

  /**
   * `settle` as ONE statement (LedgerService.transitionAlone): the row's move, its history entry,
   * its gateway event, the card's balance effect and (with `answer`, under an Idempotency-Key) the
   * request's answer, all or nothing. `known` is the row as last read or written (its kind,
   * direction, amount and card never change). The balance effect is decided before the statement
   * from the statuses the row may move to `to` from (movableFrom), and the statement moves the row
   * only from those: when they do not all give the same effect (a spend reversed from `pending` or
   * from `success`), this path does not apply. Returns null when it does not apply or cannot decide
   * (nothing written: `settle` then takes its transactional path); otherwise as `settle`, with
   * `answered` as LedgerService.transition's.
   */
  async settleAlone(
    known: Transaction,
    to: TransactionStatus,
    source: StatusChangeSource,
    opts: { patch?: TransactionPatch; payload?: Prisma.InputJsonValue; answer?: (row: Transaction) => unknown } = {},
  ): Promise<TransitionResult | null> {
    const effects = new Set(
      movableFrom(known.kind, to, source).map((from) => balanceEffect(known.direction, known.amount, from, to)),
    );
    if (effects.size !== 1) return null;
    const [delta] = effects;
    return this.ledger.transitionAlone(known.id, to, source, {
      known,
      patch: opts.patch,
      payload: opts.payload,
      answer: opts.answer,
      effects: known.cardId && delta !== 0n ? [this.cards.addToBalanceSql(known.cardId, delta, MOVED)] : [],
    });
  }

  /**
   * Applies a movement the provider reports for `card` (a spend callback, or a row of its
   * listing): the local row is found by the provider's id, else by reference (a top-up or
   * withdrawal the gateway sent), and moved to the reported status; a movement the gateway has
   * never seen is recorded (with its balance effect). Upserted by provider id: repeating it never
   * adds a row. Returns `applied`, `unchanged` or `refused` (a move the state machine forbids).
   */
  async applyProviderMovement(
    card: CardRow,
    movement: CardMovement,
    source: StatusChangeSource,
    payload: Prisma.InputJsonValue = movement.raw as Prisma.InputJsonValue,
  ): Promise<TransitionOutcome> {
    for (let attempt = 0; ; attempt++) {
      const existing = await this.ledger.findCardMovement(
        card.id,
        movement.kind,
        movement.providerId,
        movement.reference,
      );
      if (existing) return this.updateMovement(existing, movement, source, payload);
      try {
        await this.record(card, movement, source, payload);
        return 'applied';
      } catch (error) {
        // Another delivery (callback vs. sync) recorded it first: apply to that row instead.
        if (!isUniqueViolation(error) || attempt > 0) throw error;
      }
    }
  }

  private async updateMovement(
    row: Transaction,
    movement: CardMovement,
    source: StatusChangeSource,
    payload: Prisma.InputJsonValue,
  ): Promise<TransitionOutcome> {
    if (!row.providerId) await this.ledger.attachProviderId(row.id, movement.providerId);
    if (row.status === movement.status) return 'unchanged';
    // Only the gateway's own top-ups and withdrawals were asked for an amount; a spend's amount is the
    // provider's to state (an authorisation may settle for less).
    const asked = row.kind === 'card_topup' || row.kind === 'card_withdrawal';
    const mismatch =
      asked &&
      answerMismatch(
        source === 'webhook' ? 'card movement callback' : 'listCardTransactions',
        { amountMinor: row.amount, currency: row.currency },
        { amountMinor: movement.amountMinor, currency: movement.currency || row.currency },
        { id: movement.providerId, raw: movement.raw },
      );
    if (mismatch) {
      // The provider shows other money for this movement: nothing applied, a person decides
      // (docs/money-safety.md); its balance effect waits for that decision.
      this.metrics.countProviderAmountMismatch(mismatch.operation);
      const { outcome } = await this.settle(row.id, 'needs_review', source, {
        payload,
        patch: { failureReason: mismatch.message },
      });
      return outcome;
    }
    const failed = movement.status === 'failed' && movement.failureReason;
    const { outcome } = await this.settle(row.id, movement.status, source, {
      payload,
      patch: failed ? { failureReason: movement.failureReason } : undefined,
    });
    return outcome;
  }

  /** Records a movement first seen at the provider, with its balance effect, in one database transaction. */
  private async record(
    card: CardRow,
    movement: CardMovement,
    source: StatusChangeSource,
    payload: Prisma.InputJsonValue,
  ): Promise<void> {
    const taken = movement.reference ? await this.ledger.referenceTaken(movement.reference) : false;
    await this.cards.withTransaction(async (tx) => {
      const row = await this.ledger.record(
        {
          kind: movement.kind,
          direction: movement.direction,
          status: movement.status,
          amount: movement.amountMinor,
          currency: movement.currency || card.currency || CARD_CURRENCY,
          customerId: card.customerId,
          cardId: card.id,
          providerId: movement.providerId,
          // The provider's reference when it is free, else one derived from its (unique) id.
          reference: movement.reference && !taken ? movement.reference : `provider-card-txn-${movement.providerId}`,
          description: movement.narrative,
          failureReason: movement.failureReason,
          providerPayload: payload,
          // The card's owner (OWNERSHIP=client), whoever's request or callback brought the movement.
          createdBy: card.createdBy,
          ...(movement.createdAt ? { createdAt: movement.createdAt } : {}),
          ...(['success', 'failed', 'reversed'].includes(movement.status) ? { completedAt: new Date() } : {}),
        },
        source,
        tx,
      );
      await this.cards.addToBalance(
        card.id,
        balanceEffect(movement.direction, movement.amountMinor, null, row.status),
        tx,
      );
    });
  }
}
