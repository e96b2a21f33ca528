import { Injectable } from '@nestjs/common';
import { NotFoundError } from '../common/errors';
import { PrismaService } from '../database/prisma.service';
import { Prisma, type Card, type CardHolder, type CardStatus } from '../generated/prisma/client';
import { CARD_HOLDER_MOVES, CARD_MOVES, CardHolderMove, CardMove, cardMoveOutcome } from './card-state';

type Tx = Prisma.TransactionClient;

/** Fields a card move may set together with the status (details from the provider's answer or callback). */
export type CardPatch = Omit<Prisma.CardUncheckedUpdateInput, 'id' | 'status' | 'balance' | 'createdAt'>;

/** Result of a card move: `applied`, `unchanged` (already there: a duplicate) or `refused` by the state machine. */
export type CardMoveResult = { outcome: 'applied' | 'unchanged' | 'refused'; card: Card };

/**
 * Database access for cards and card holders: reads, and the only writes of a card's status
 * (`move`, under a row lock, by the table in card-state.ts) and balance (`addToBalance`).
 */
@Injectable()
export class CardsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** @throws NotFoundError (404). */
  async requireCard(id: string, db: Tx | PrismaService = this.prisma): Promise<Card> {
    const card = await db.card.findUnique({ where: { id } });
    if (!card) throw new NotFoundError('Card', id);
    return card;
  }

  /** The card a provider callback names: by the provider's card id, else by the reference the gateway sent. */
  async findByProvider(providerId: string | null, reference: string | null): Promise<Card | null> {
    if (providerId) {
      const card = await this.prisma.card.findUnique({ where: { providerId } });
      if (card) return card;
    }
    return reference ? this.prisma.card.findUnique({ where: { reference } }) : null;
  }

  /** The customer's card holder, if registered. */
  holderOf(customerId: string): Promise<CardHolder | null> {
    return this.prisma.cardHolder.findUnique({ where: { customerId } });
  }

  /**
   * Moves a card per CARD_MOVES (card-state.ts) under a row lock, setting `patch` with it. A move to
   * the status the card already has is `unchanged` (the patch is still written: a repeated callback
   * may carry details); a move the table does not allow is `refused` and writes nothing.
   * @throws NotFoundError (404).
   */
  async move(id: string, move: CardMove, patch: CardPatch = {}, tx?: Tx): Promise<CardMoveResult> {
    const run = async (db: Tx): Promise<CardMoveResult> => {
      const [row] = await db.$queryRaw<Array<{ status: CardStatus }>>`
        SELECT status FROM cards WHERE id = ${id}::uuid FOR UPDATE`;
      if (!row) throw new NotFoundError('Card', id);
      const outcome = cardMoveOutcome(move, row.status);
      if (outcome === 'refused') return { outcome, card: await db.card.findUniqueOrThrow({ where: { id } }) };
      const status: CardStatus | undefined = outcome === 'apply' ? CARD_MOVES[move].to : undefined;
      const card = await db.card.update({ where: { id }, data: { ...patch, ...(status ? { status } : {}) } });
      return { outcome: outcome === 'apply' ? 'applied' : 'unchanged', card };
    };
    return tx ? run(tx) : this.prisma.$transaction(run);
  }

  /** Adds `delta` minor units (signed) to the card's balance. */
  async addToBalance(id: string, delta: bigint, tx: Tx): Promise<void> {
    if (delta === 0n) return;
    await tx.card.update({ where: { id }, data: { balance: { increment: delta } } });
  }

  /**
   * Moves a card holder per CARD_HOLDER_MOVES with a conditional update (a duplicate or concurrent
   * delivery finds nothing to change). Returns `applied`, `unchanged` or `refused`.
   */
  async moveHolder(
    holder: CardHolder,
    move: CardHolderMove,
    patch: Omit<Prisma.CardHolderUncheckedUpdateInput, 'id' | 'status'> = {},
  ): Promise<'applied' | 'unchanged' | 'refused'> {
    const rule = CARD_HOLDER_MOVES[move];
    if (holder.status === rule.to) return 'unchanged';
    const moved = await this.prisma.cardHolder.updateMany({
      where: { id: holder.id, status: { in: [...rule.from] } },
      data: { ...patch, status: rule.to },
    });
    return moved.count === 1 ? 'applied' : 'refused';
  }
}
