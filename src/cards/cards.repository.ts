import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { recordAuditedChange } from '../audit/audit-chain';
import { NotFoundError } from '../common/errors';
import type { Env } from '../config/env';
import { PrismaService } from '../database/prisma.service';
import { Prisma, type Card, type CardHolder, type CardStatus } from '../generated/prisma/client';
import {
  CARD_HOLDER_MOVES,
  CARD_MOVES,
  CARD_TRANSITION_LEASE_TIMEOUTS,
  CardAction,
  CardHolderMove,
  CardMove,
  cardMoveOutcome,
} from './card-state';

type Tx = Prisma.TransactionClient;

/** Fields a card move may set together with the status (details from the provider's answer or callback). */
export type CardPatch = Omit<Prisma.CardUncheckedUpdateInput, 'id' | 'status' | 'balance' | 'createdAt'>;

/** Result of a card move: `applied`, `unchanged` (already there: a duplicate) or `refused` by the state machine. */
export type CardMoveResult = { outcome: 'applied' | 'unchanged' | 'refused'; card: Card };

/**
 * Result of claiming a card for a freeze, unfreeze or terminate: `claimed` (the claim's start time is
 * its token, needed to release it), or `refused` with the card as it is (its status does not allow
 * the move, it has no provider id yet, or another move's claim is live: `card.transition`).
 */
export type TransitionClaim = { outcome: 'claimed'; startedAt: Date } | { outcome: 'refused'; card: Card };

/** Card holder fields written with its registration (everything but id, customer and status). */
export type CardHolderPatch = Omit<Prisma.CardHolderUncheckedUpdateInput, 'id' | 'status' | 'customerId'>;

/**
 * Database access for cards and card holders: reads, and the only writes of a card's status
 * (`move`, under a row lock, by the table in card-state.ts) and balance (`addToBalance`).
 */
@Injectable()
export class CardsRepository {
  /** How long a card transition claim or a `created` card holder holds, ms (CARD_TRANSITION_LEASE_TIMEOUTS × PROVIDER_TIMEOUT_MS). */
  readonly leaseMs: number;

  constructor(
    private readonly prisma: PrismaService,
    config: ConfigService<Env, true>,
  ) {
    this.leaseMs = CARD_TRANSITION_LEASE_TIMEOUTS * config.get('PROVIDER_TIMEOUT_MS', { infer: true });
  }

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

  /**
   * Claims the card for `action` before the provider is called: one conditional UPDATE that sets
   * `transition` and `transition_started_at` only if the card's status allows the move (CARD_MOVES),
   * it has a provider id, and no other claim is live (none, or one older than `leaseMs`: its process
   * died). Of any number of concurrent requests, exactly one gets `claimed`.
   * @throws NotFoundError (404).
   */
  async claimTransition(id: string, action: CardAction): Promise<TransitionClaim> {
    const from: readonly string[] = CARD_MOVES[action].from;
    const [claimed] = await this.prisma.$queryRaw<Array<{ startedAt: Date }>>`
      UPDATE cards SET transition = ${action}, transition_started_at = now()
      WHERE id = ${id}::uuid AND status::text = ANY(${from}::text[]) AND provider_id IS NOT NULL
        AND (transition IS NULL OR transition_started_at < now() - ${this.leaseMs} * interval '1 millisecond')
      RETURNING transition_started_at AS "startedAt"`;
    if (claimed) return { outcome: 'claimed', startedAt: claimed.startedAt };
    return { outcome: 'refused', card: await this.requireCard(id) };
  }

  /** Whether `card` carries a claim younger than the lease (a move in flight). */
  liveTransition(card: Pick<Card, 'transition' | 'transitionStartedAt'>, now = Date.now()): string | null {
    if (!card.transition || !card.transitionStartedAt) return null;
    return card.transitionStartedAt.getTime() > now - this.leaseMs ? card.transition : null;
  }

  /**
   * Ends a claim taken by `claimTransition`: with `patch` (the provider accepted), the card moves by
   * `action` and takes the patch; without (refused, timed out, failed), its status stays. Either way
   * the claim is cleared in the same database transaction — only if it is still this one (same
   * action and start time), so a late release never clears a newer claim.
   * Returns the move's result (`unchanged` with the card as it is when there is no patch).
   */
  async releaseTransition(id: string, action: CardAction, startedAt: Date, patch?: CardPatch): Promise<CardMoveResult> {
    return this.prisma.$transaction(async (tx) => {
      const moved = patch ? await this.move(id, action, patch, tx) : null;
      if (moved?.outcome === 'applied') await recordAuditedChange(tx, id);
      await tx.$executeRaw`
        UPDATE cards SET transition = NULL, transition_started_at = NULL
        WHERE id = ${id}::uuid AND transition = ${action} AND transition_started_at = ${startedAt}`;
      return moved ?? { outcome: 'unchanged' as const, card: await this.requireCard(id, tx) };
    });
  }

  /**
   * Locks the card row (FOR SHARE, until `tx` ends) for a top-up or withdrawal being written: a
   * concurrent claim waits for it, and it sees a claim already taken. Returns the card and the
   * move in flight on it, if any (see `liveTransition`).
   * @throws NotFoundError (404).
   */
  async lockForMoneyMove(id: string, tx: Tx): Promise<{ card: Card; inFlight: string | null }> {
    const [row] = await tx.$queryRaw<Array<{ id: string }>>`SELECT id FROM cards WHERE id = ${id}::uuid FOR SHARE`;
    if (!row) throw new NotFoundError('Card', id);
    const card = await this.requireCard(id, tx);
    return { card, inFlight: this.liveTransition(card) };
  }

  /**
   * Writes a new card holder ahead of its registration call: status `created`.
   * @throws the unique violation when the customer already has a holder (the caller answers 409).
   */
  createHolder(
    customerId: string,
    data: Omit<Prisma.CardHolderUncheckedCreateInput, 'customerId' | 'status'>,
  ): Promise<CardHolder> {
    return this.prisma.cardHolder.create({ data: { ...data, customerId, status: 'created' } });
  }

  /**
   * Registers an existing holder again (CARD_HOLDER_MOVES.register): `failed` or `unknown` → `created`
   * with the new fields, or a `created` one untouched for longer than `leaseMs` (its registration's
   * process died). A conditional update: of concurrent attempts one wins. Returns the row, or null
   * when the holder's status does not allow it.
   */
  async reregisterHolder(holder: CardHolder, data: CardHolderPatch): Promise<CardHolder | null> {
    const moved = await this.prisma.cardHolder.updateMany({
      where: {
        id: holder.id,
        OR: [
          { status: { in: [...CARD_HOLDER_MOVES.register.from] } },
          { status: 'created', updatedAt: { lt: new Date(Date.now() - this.leaseMs) } },
        ],
      },
      data: { ...data, status: CARD_HOLDER_MOVES.register.to },
    });
    return moved.count === 1 ? this.prisma.cardHolder.findUniqueOrThrow({ where: { id: holder.id } }) : null;
  }

  /**
   * Cards whose stored `balance` differs from what their ledger rows say: the sum of their `success`
   * movements, + for a credit and − for a debit, in minor units (a reversed movement counted and
   * given back nets to nothing: card-rules.ts balanceEffect). At most `limit` cards, largest gap first.
   */
  async balanceDrift(limit = 100): Promise<Array<{ cardId: string; balance: bigint; ledger: bigint }>> {
    return this.prisma.$queryRaw`
      SELECT c.id AS "cardId", c.balance, COALESCE(m.ledger, 0)::bigint AS ledger
      FROM cards c
      LEFT JOIN (
        SELECT card_id, SUM(CASE WHEN direction = 'credit' THEN amount ELSE -amount END) AS ledger
        FROM transactions
        WHERE card_id IS NOT NULL AND status = 'success'
        GROUP BY card_id) m ON m.card_id = c.id
      WHERE c.balance <> COALESCE(m.ledger, 0)
      ORDER BY abs(c.balance - COALESCE(m.ledger, 0)) DESC
      LIMIT ${limit}`;
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
