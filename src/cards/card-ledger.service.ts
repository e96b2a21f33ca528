import { Injectable, type OnModuleInit } from '@nestjs/common';
import { NotFoundError } from '../common/errors';
import { isUniqueViolation, PrismaService } from '../database/prisma.service';
import type {
  Card,
  Prisma,
  StatusChangeSource,
  Transaction,
  TransactionDirection,
  TransactionKind,
  TransactionStatus,
} from '../generated/prisma/client';
import { CARD_CURRENCY } from '../provider';
import { LedgerService, TransactionPatch, TransitionOutcome } from '../transactions/ledger.service';
import { canTransition } from '../transactions/transaction-state';
import { balanceEffect } from './card-rules';
import { CardsRepository } from './cards.repository';

type Tx = Prisma.TransactionClient;

/** The card money movement kinds of the ledger. */
export const CARD_TRANSACTION_KINDS: TransactionKind[] = ['card_topup', 'card_withdrawal', 'card_spend'];

/** A card movement as the provider reports it (listing, or a spend callback), in the gateway's terms. */
export interface ProviderCardMovement {
  /** The provider's card-transaction id. */
  providerId: string;
  /** The provider's reference, when it gives one (ours for top-ups and withdrawals). */
  reference: string | null;
  kind: TransactionKind;
  direction: TransactionDirection;
  status: TransactionStatus;
  /** USD minor units. */
  amount: bigint;
  currency?: string;
  narrative: string | null;
  failureReason?: string | null;
  createdAt?: Date | null;
  /** What the provider sent (card secrets already stripped), kept on the row and in its history. */
  payload: Prisma.InputJsonValue;
}

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
    private readonly prisma: PrismaService,
    private readonly ledger: LedgerService,
    private readonly cards: CardsRepository,
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
   * its balance effect. A row still `created` (the provider's answer not yet recorded, its callback
   * first) steps through `pending` on the way to `success`.
   * @throws NotFoundError (404).
   */
  async settle(
    id: string,
    to: TransactionStatus,
    source: StatusChangeSource,
    opts: { patch?: TransactionPatch; payload?: Prisma.InputJsonValue; tx?: Tx } = {},
  ): Promise<{ outcome: TransitionOutcome; transaction: Transaction }> {
    const run = async (tx: Tx) => {
      const [row] = await tx.$queryRaw<
        Array<{ kind: TransactionKind; status: TransactionStatus; direction: TransactionDirection; amount: bigint }>
      >`SELECT kind, status, direction, amount FROM transactions WHERE id = ${id}::uuid FOR UPDATE`;
      if (!row) throw new NotFoundError('Transaction', id);
      let from = row.status;
      if (
        from !== to &&
        !canTransition(row.kind, from, to) &&
        canTransition(row.kind, from, 'pending') &&
        canTransition(row.kind, 'pending', to)
      ) {
        await this.ledger.transition(id, 'pending', source, { tx, payload: opts.payload });
        from = 'pending';
      }
      const result = await this.ledger.transition(id, to, source, { tx, patch: opts.patch, payload: opts.payload });
      if (result.outcome === 'applied' && result.transaction.cardId) {
        await this.cards.addToBalance(
          result.transaction.cardId,
          balanceEffect(row.direction, BigInt(row.amount), from, to),
          tx,
        );
      }
      return result;
    };
    return opts.tx ? run(opts.tx) : this.prisma.$transaction(run);
  }

  /**
   * Applies a movement the provider reports for `card` (a spend callback, or a row of its
   * listing): the local row is found by the provider's id, else by reference (a top-up or
   * withdrawal the gateway sent), and moved to the reported status; a movement the gateway has
   * never seen is recorded (with its balance effect). Upserted by provider id: repeating it never
   * adds a row. Returns `applied`, `unchanged` or `refused` (a move the state machine forbids).
   */
  async applyProviderMovement(
    card: Card,
    movement: ProviderCardMovement,
    source: StatusChangeSource,
  ): Promise<TransitionOutcome> {
    for (let attempt = 0; ; attempt++) {
      const existing = await this.findMovement(card, movement);
      if (existing) return this.updateMovement(existing, movement, source);
      try {
        await this.record(card, movement, source);
        return 'applied';
      } catch (error) {
        // Another delivery (callback vs. sync) recorded it first: apply to that row instead.
        if (!isUniqueViolation(error) || attempt > 0) throw error;
      }
    }
  }

  private async findMovement(card: Card, movement: ProviderCardMovement): Promise<Transaction | null> {
    const byId = await this.prisma.transaction.findUnique({ where: { providerId: movement.providerId } });
    if (byId) return byId;
    if (!movement.reference) return null;
    const byReference = await this.prisma.transaction.findUnique({ where: { reference: movement.reference } });
    return byReference?.cardId === card.id && byReference.kind === movement.kind ? byReference : null;
  }

  private async updateMovement(
    row: Transaction,
    movement: ProviderCardMovement,
    source: StatusChangeSource,
  ): Promise<TransitionOutcome> {
    if (!row.providerId) {
      await this.prisma.transaction
        .updateMany({ where: { id: row.id, providerId: null }, data: { providerId: movement.providerId } })
        .catch((error: unknown) => {
          if (!isUniqueViolation(error)) throw error;
        });
    }
    if (row.status === movement.status) return 'unchanged';
    const failed = movement.status === 'failed' && movement.failureReason;
    const { outcome } = await this.settle(row.id, movement.status, source, {
      payload: movement.payload,
      patch: failed ? { failureReason: movement.failureReason } : undefined,
    });
    return outcome;
  }

  /** Records a movement first seen at the provider, with its balance effect, in one database transaction. */
  private async record(card: Card, movement: ProviderCardMovement, source: StatusChangeSource): Promise<void> {
    const taken = movement.reference
      ? await this.prisma.transaction.findUnique({ where: { reference: movement.reference }, select: { id: true } })
      : null;
    await this.prisma.$transaction(async (tx) => {
      const row = await this.ledger.record(
        {
          kind: movement.kind,
          direction: movement.direction,
          status: movement.status,
          amount: movement.amount,
          currency: movement.currency ?? card.currency ?? CARD_CURRENCY,
          customerId: card.customerId,
          cardId: card.id,
          providerId: movement.providerId,
          // The provider's reference when it is free, else one derived from its (unique) id.
          reference: movement.reference && !taken ? movement.reference : `provider-card-txn-${movement.providerId}`,
          description: movement.narrative,
          failureReason: movement.failureReason ?? null,
          providerPayload: movement.payload,
          ...(movement.createdAt ? { createdAt: movement.createdAt } : {}),
          ...(['success', 'failed', 'reversed'].includes(movement.status) ? { completedAt: new Date() } : {}),
        },
        source,
        tx,
      );
      await this.cards.addToBalance(card.id, balanceEffect(movement.direction, movement.amount, null, row.status), tx);
    });
  }
}
