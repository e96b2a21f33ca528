import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { NotFoundError } from '../common/errors';
import { afterCursor } from '../common/pagination';
import type { Env } from '../config/env';
import { isUniqueViolation, PrismaService } from '../database/prisma.service';
import {
  Prisma,
  type Card,
  type CardHolder,
  type CardStatus,
  type Transaction,
  type TransactionDirection,
  type TransactionKind,
  type TransactionStatus,
} from '../generated/prisma/client';
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

/** The card money movement kinds of the ledger. */
export const CARD_TRANSACTION_KINDS: TransactionKind[] = ['card_topup', 'card_withdrawal', 'card_spend'];

/** A card movement's ledger row as `lockMovement` reads it (amount in minor units). */
export type LockedMovement = {
  kind: TransactionKind;
  status: TransactionStatus;
  direction: TransactionDirection;
  amount: bigint;
};

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

  /** Runs `work` in one database transaction (a card move with its ledger rows and outbox messages). */
  withTransaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(work);
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

  /**
   * Writes a new card in status `created`, ahead of the provider's create call (write-ahead).
   * @throws the unique violation when `reference` is already used (the caller answers 409).
   */
  createCard(
    data: Omit<Prisma.CardUncheckedCreateInput, 'status' | 'balance'>,
    tx: Tx | PrismaService = this.prisma,
  ): Promise<Card> {
    return tx.card.create({ data: { ...data, status: 'created' } });
  }

  /**
   * Sets the provider's card id on a card that has none yet (the creation callback overtook the
   * create call's answer and moved the card first). A conditional update: a card that already has
   * one keeps it. Returns whether it was set.
   */
  async attachProviderId(id: string, providerId: string, tx: Tx | PrismaService = this.prisma): Promise<boolean> {
    const set = await tx.card.updateMany({ where: { id, providerId: null }, data: { providerId } });
    return set.count === 1;
  }

  /** One page of cards, newest first (keyset on createdAt, id), `limit + 1` rows to tell whether more follow. */
  listCards(filter: { customerId?: string; status?: CardStatus; cursor?: string }, limit: number): Promise<Card[]> {
    return this.prisma.card.findMany({
      where: {
        ...(filter.customerId ? { customerId: filter.customerId } : {}),
        ...(filter.status ? { status: filter.status } : {}),
        ...afterCursor(filter.cursor),
      },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: limit + 1,
    });
  }

  /** @throws NotFoundError (404). */
  async requireHolder(id: string): Promise<CardHolder> {
    const holder = await this.prisma.cardHolder.findUnique({ where: { id } });
    if (!holder) throw new NotFoundError('Card holder', id);
    return holder;
  }

  /**
   * The card holder a KYC callback names: by the provider's card user id, else by the customer's
   * e-mail (lower-case, as stored). Null when neither matches.
   */
  async findHolderForKyc(providerUserId: string | null, email: string | null): Promise<CardHolder | null> {
    const byUser = providerUserId ? await this.prisma.cardHolder.findUnique({ where: { providerUserId } }) : null;
    if (byUser) return byUser;
    return email ? this.prisma.cardHolder.findFirst({ where: { customer: { email } } }) : null;
  }

  /**
   * Sets the provider's card user id on a holder that has none yet (its KYC callback, matched by
   * e-mail, overtook the registration's answer). Conditional: an id already there stays. Returns
   * whether it was set.
   * @throws the unique violation when another holder has that card user id.
   */
  async attachProviderUserId(holderId: string, providerUserId: string): Promise<boolean> {
    const set = await this.prisma.cardHolder.updateMany({
      where: { id: holderId, providerUserId: null },
      data: { providerUserId },
    });
    return set.count === 1;
  }

  // ---- Card movements on the ledger (rows of `transactions` with a card id) ----
  // The reads and the one conditional write the card ledger needs that LedgerService does not
  // offer; status moves and new rows go through LedgerService alone.

  /**
   * Locks a card movement's ledger row (FOR UPDATE, until `tx` ends) and reads what its balance
   * effect needs: kind, status, direction, amount.
   * @throws NotFoundError (404).
   */
  async lockMovement(id: string, tx: Tx): Promise<LockedMovement> {
    const [row] = await tx.$queryRaw<LockedMovement[]>`
      SELECT kind, status, direction, amount FROM transactions WHERE id = ${id}::uuid FOR UPDATE`;
    if (!row) throw new NotFoundError('Transaction', id);
    return { ...row, amount: BigInt(row.amount) };
  }

  /**
   * The ledger row of a movement the provider reports for a card: the row with the provider's
   * id (whatever its card or kind: the id is unique), else the row with its reference when that
   * row is this card's and of this kind. Null when neither.
   */
  async findCardMovement(
    cardId: string,
    kind: TransactionKind,
    providerId: string,
    reference: string | null,
  ): Promise<Transaction | null> {
    const byId = await this.prisma.transaction.findUnique({ where: { providerId } });
    if (byId) return byId;
    if (!reference) return null;
    const byReference = await this.prisma.transaction.findUnique({ where: { reference } });
    return byReference?.cardId === cardId && byReference.kind === kind ? byReference : null;
  }

  /** The card's movement with the provider's id, else the one with the reference. Null when neither. */
  async findSpend(cardId: string, providerId: string | null, reference: string | null): Promise<Transaction | null> {
    const byId = providerId ? await this.prisma.transaction.findFirst({ where: { cardId, providerId } }) : null;
    if (byId) return byId;
    return reference ? this.prisma.transaction.findFirst({ where: { cardId, reference } }) : null;
  }

  /** Whether any ledger row already has `reference`. */
  async referenceTaken(reference: string): Promise<boolean> {
    return (await this.prisma.transaction.count({ where: { reference } })) > 0;
  }

  /**
   * Sets the provider's id on a card movement that has none (the first answer or callback naming
   * it). Conditional: an id already there stays; an id another row already has is left off (the
   * unique violation is swallowed). Returns whether it was set.
   */
  async attachMovementProviderId(
    id: string,
    providerId: string,
    tx: Tx | PrismaService = this.prisma,
  ): Promise<boolean> {
    try {
      const set = await tx.transaction.updateMany({ where: { id, providerId: null }, data: { providerId } });
      return set.count === 1;
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      return false;
    }
  }

  /** One page of the card's movements, newest first (keyset on createdAt, id), `limit + 1` rows. */
  listMovements(cardId: string, cursor: string | undefined, limit: number): Promise<Transaction[]> {
    return this.prisma.transaction.findMany({
      where: { cardId, kind: { in: CARD_TRANSACTION_KINDS }, ...afterCursor(cursor) },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: limit + 1,
    });
  }

  /** The card's movements still open (`created`, `unknown`, `pending`): their references and provider ids. */
  openMovements(cardId: string): Promise<Array<{ reference: string; providerId: string | null }>> {
    return this.prisma.transaction.findMany({
      where: { cardId, status: { in: ['created', 'unknown', 'pending'] } },
      select: { reference: true, providerId: true },
    });
  }
}
