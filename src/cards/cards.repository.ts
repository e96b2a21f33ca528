import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { recordAuditedChange } from '../audit/audit-chain';
import { creatorId, ownerFilter } from '../audit/ownership';
import { PII_COLUMNS, PiiCipher } from '../common/crypto/pii-cipher';
import { NotFoundError } from '../common/errors';
import { idempotencyKeyCtes, KEY_HELD, type ResourceKeySql } from '../common/idempotency/idempotency-context';
import { afterCursor } from '../common/pagination';
import type { Env } from '../config/env';
import { PrismaService } from '../database/prisma.service';
import { ReadPool } from '../database/read-pool';
import { namedStatement, READ_POOL_TYPES } from '../database/sql';
import { Prisma, type Card, type CardHolder, type CardStatus, type Transaction } from '../generated/prisma/client';
import { ledgerInsertCtes, type StatusChangeEntry, type WriteAheadRow } from '../transactions/ledger.service';
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

/**
 * A card as its readers get it: the Card model without the provider's payload (kept for support,
 * never shown, nor read by any decision), as the ledger's LedgerRow leaves out its own. Prisma's
 * reads and writes return the full Card, which is one.
 */
export type CardRow = Omit<Card, 'providerPayload'>;

/** Card `id` with every column of `cards` but `provider_payload`, named as the Card type's fields (CardRow; the read pool's read). */
const CARD_BY_ID = namedStatement(
  'card_by_id',
  `SELECT c.id, c.provider_id AS "providerId", c.customer_id AS "customerId", c.card_holder_id AS "cardHolderId",
     c.brand, c.type, c.name_on_card AS "nameOnCard", c.last4, c.expiry_month AS "expiryMonth",
     c.expiry_year AS "expiryYear", c.status, c.created_status AS "createdStatus", c.balance, c.currency,
     c.initial_amount AS "initialAmount", c.reference, c.billing_address AS "billingAddress",
     c.failure_reason AS "failureReason", c.created_by AS "createdBy", c.transition,
     c.transition_started_at AS "transitionStartedAt", c.created_at AS "createdAt", c.updated_at AS "updatedAt"
   FROM cards c WHERE c.id = $1::uuid`,
);

/**
 * The condition, inside recordMoneyMove's statement, that the card takes the movement (its CTE
 * `cur` holds it): the Idempotency-Key's note of the movement runs only then.
 */
export const CARD_WRITABLE = Prisma.sql`EXISTS (SELECT 1 FROM cur)`;

/** What decides whether a card takes a top-up or withdrawal (CardsRepository.recordMoneyMove). */
export interface MoneyMoveConditions {
  statuses: readonly CardStatus[];
  liveSince: Date;
  owner: string | undefined;
  creator: string | null;
}

/** recordMoneyMove's answer: the card as locked, whether it qualified, the row written, whether the key was inserted. */
export interface MoneyMoveWritten {
  /** The card as locked (what decided); null when there is no such card. */
  card: Pick<CardRow, 'id' | 'status' | 'providerId' | 'transition' | 'transitionStartedAt' | 'createdBy'> | null;
  /** Whether the card qualified (CARD_WRITABLE). */
  writable: boolean;
  /** The row written; null when nothing was (the card did not qualify, or the key was not the request's). */
  row: Transaction | null;
  /** KEY_HELD: for `settled` of idempotentWriteSql, called before the rest is read. */
  keyHeld: boolean;
}

/** Fields a card move may set together with the status (details from the provider's answer or callback). */
export type CardPatch = Omit<Prisma.CardUncheckedUpdateInput, 'id' | 'status' | 'balance' | 'createdAt'>;

/** Result of a card move: `applied`, `unchanged` (already there: a duplicate) or `refused` by the state machine. */
export type CardMoveResult = { outcome: 'applied' | 'unchanged' | 'refused'; card: CardRow };

/**
 * Result of claiming a card for a freeze, unfreeze or terminate: `claimed` (the claim's start time is
 * its token, needed to release it), or `refused` with the card as it is (its status does not allow
 * the move, it has no provider id yet, or another move's claim is live: `card.transition`).
 */
export type TransitionClaim = { outcome: 'claimed'; startedAt: Date } | { outcome: 'refused'; card: CardRow };

/** The personal data of a card holder, in plaintext here, stored encrypted (src/common/crypto). */
type HolderPersonalData = {
  idNumber: string;
  phone: string;
  bvn: string | null;
  dateOfBirth: string | null;
  /** {line1, houseName, city, state, zipCode, country}. */
  address: Prisma.JsonObject;
};

/**
 * A card holder as the rest of the code sees it: the stored row with its personal data decrypted
 * (legacy plaintext rows read as they are) and without the lookup hashes.
 */
export type CardHolderRecord = Omit<CardHolder, keyof HolderPersonalData | 'bvnHash' | 'idNumberHash'> &
  HolderPersonalData;

/**
 * Card holder fields written with its registration or a move (everything but id, customer and
 * status), personal data in plaintext: the repository encrypts it and writes its lookup hashes.
 */
export type CardHolderPatch = Omit<
  Prisma.CardHolderUncheckedUpdateInput,
  'id' | 'status' | 'customerId' | 'bvnHash' | 'idNumberHash' | keyof HolderPersonalData
> &
  Partial<HolderPersonalData>;

/** The fields a new card holder needs (CardHolderPatch with its required fields). */
export type NewCardHolder = CardHolderPatch &
  Pick<HolderPersonalData, 'idNumber' | 'phone' | 'address'> & { idType: string; firstName: string; lastName: string };

/**
 * Keys of a provider answer that carry a card holder's personal data (compared lower-case, `_` and
 * `-` ignored): dropped from the `providerPayload` kept on the row, at any depth.
 */
const PERSONAL_PAYLOAD_KEYS = new Set([
  'bvn',
  'idnumber',
  'dateofbirth',
  'dob',
  'phone',
  'phonenumber',
  'address',
  'line1',
  'housename',
  'zipcode',
  'userphoto',
  'idimage',
]);

/** A deep copy of a provider answer without PERSONAL_PAYLOAD_KEYS. */
function withoutPersonalData(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutPersonalData);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => !PERSONAL_PAYLOAD_KEYS.has(key.toLowerCase().replace(/[_-]/g, '')))
      .map(([key, item]) => [key, withoutPersonalData(item)]),
  );
}

/**
 * Database access for cards and card holders: reads, and the only writes of a card's status
 * (`move`, under a row lock, by the table in card-state.ts) and balance (`addToBalance`). A card
 * holder's personal data (id number, BVN, date of birth, phone, address) is encrypted here on the
 * way in and decrypted on the way out (PiiCipher); callers see plaintext `CardHolderRecord`s.
 */
@Injectable()
export class CardsRepository {
  /** How long a card transition claim or a `created` card holder holds, ms (CARD_TRANSITION_LEASE_TIMEOUTS × PROVIDER_TIMEOUT_MS). */
  readonly leaseMs: number;

  constructor(
    private readonly prisma: PrismaService,
    private readonly reads: ReadPool,
    config: ConfigService<Env, true>,
    private readonly pii: PiiCipher,
  ) {
    this.leaseMs = CARD_TRANSITION_LEASE_TIMEOUTS * config.get('PROVIDER_TIMEOUT_MS', { infer: true });
  }

  /** Runs `work` in one database transaction (a card move with its ledger rows and outbox messages). */
  withTransaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(work);
  }

  /**
   * Card `id`: read inside `tx` when given (Prisma), else as typed SQL on the read pool (the hot
   * read of GET /v1/cards/{id} and of every card route's first look).
   * @throws NotFoundError (404).
   */
  async requireCard(id: string, tx?: Tx): Promise<CardRow> {
    const card = tx
      ? await tx.card.findUnique({ where: { id }, omit: { providerPayload: true } })
      : await this.reads.one<CardRow>(CARD_BY_ID(id));
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
  async holderOf(customerId: string): Promise<CardHolderRecord | null> {
    return this.openHolder(await this.prisma.cardHolder.findUnique({ where: { customerId } }));
  }

  /** A card holder by id, or null. */
  async findHolder(id: string): Promise<CardHolderRecord | null> {
    return this.openHolder(await this.prisma.cardHolder.findUnique({ where: { id } }));
  }

  /**
   * Card holders whose BVN is `bvn` (equality through the keyed lookup hash, the BVN itself being
   * stored encrypted), oldest first. Legacy rows not yet rotated have no hash and are not found.
   */
  async holdersWithBvn(bvn: string): Promise<CardHolderRecord[]> {
    const rows = await this.prisma.cardHolder.findMany({
      where: { bvnHash: { in: this.pii.hashCandidates(bvn, PII_COLUMNS.cardHolderBvn) } },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    });
    return rows.map((row) => this.openHolder(row) as CardHolderRecord);
  }

  /**
   * Re-encrypts up to `limit` card holders, in id order after `afterId`, whose personal data is a
   * legacy plaintext or under a key other than the current one (PII_ENCRYPTION_KEYS' first), and
   * rewrites their lookup hashes. Each row is written only if it still holds what was read (a
   * concurrent change wins; the next run takes it). Returns the last id looked at (null when none
   * is left) and how many rows were rewritten. Run again from null, it finds nothing to do.
   */
  async reencryptHolders(afterId: string | null, limit: number): Promise<{ lastId: string | null; rewritten: number }> {
    const current = `${this.pii.currentPrefix}%`;
    const rows = await this.prisma.$queryRaw<CardHolder[]>`
      SELECT id, id_number AS "idNumber", phone, bvn, date_of_birth AS "dateOfBirth", address
      FROM card_holders
      WHERE (${afterId}::uuid IS NULL OR id > ${afterId}::uuid)
        AND (id_number NOT LIKE ${current} OR phone NOT LIKE ${current} OR address NOT LIKE ${current}
             OR bvn NOT LIKE ${current} OR date_of_birth NOT LIKE ${current}
             OR id_number_hash IS NULL OR (bvn IS NOT NULL AND bvn_hash IS NULL))
      ORDER BY id
      LIMIT ${limit}`;
    let rewritten = 0;
    for (const row of rows) {
      const plain = this.openHolder(row) as CardHolderRecord;
      const { count } = await this.prisma.cardHolder.updateMany({
        where: {
          id: row.id,
          idNumber: row.idNumber,
          phone: row.phone,
          address: row.address,
          bvn: row.bvn,
          dateOfBirth: row.dateOfBirth,
        },
        data: this.sealHolder({
          idNumber: plain.idNumber,
          phone: plain.phone,
          bvn: plain.bvn,
          dateOfBirth: plain.dateOfBirth,
          address: plain.address,
        }),
      });
      rewritten += count;
    }
    return { lastId: rows.length ? rows[rows.length - 1].id : null, rewritten };
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
   * Writes a new card holder ahead of its registration call: status `created`, created_by = the
   * request's client, with the request's audit event (`card_holder.create`) in the same transaction.
   * @throws the unique violation when the customer already has a holder (the caller answers 409).
   */
  async createHolder(customerId: string, data: NewCardHolder): Promise<CardHolderRecord> {
    const sealed = this.sealHolder(data) as Omit<Prisma.CardHolderUncheckedCreateInput, 'customerId' | 'status'>;
    const row = await this.prisma.$transaction(async (tx) => {
      const created = await tx.cardHolder.create({
        data: { ...sealed, customerId, status: 'created', createdBy: creatorId() },
      });
      await recordAuditedChange(tx, created.id);
      return created;
    });
    return this.openHolder(row) as CardHolderRecord;
  }

  /**
   * Registers an existing holder again (CARD_HOLDER_MOVES.register): `failed` or `unknown` → `created`
   * with the new fields, or a `created` one untouched for longer than `leaseMs` (its registration's
   * process died). A conditional update: of concurrent attempts one wins, and writes the request's
   * audit event in its transaction. Returns the row, or null when the holder's status does not allow it.
   */
  async reregisterHolder(
    holder: Pick<CardHolderRecord, 'id'>,
    data: CardHolderPatch,
  ): Promise<CardHolderRecord | null> {
    const moved = await this.prisma.$transaction(async (tx) => {
      const { count } = await tx.cardHolder.updateMany({
        where: {
          id: holder.id,
          OR: [
            { status: { in: [...CARD_HOLDER_MOVES.register.from] } },
            { status: 'created', updatedAt: { lt: new Date(Date.now() - this.leaseMs) } },
          ],
        },
        data: { ...this.sealHolder(data), status: CARD_HOLDER_MOVES.register.to },
      });
      if (count === 1) await recordAuditedChange(tx, holder.id);
      return count === 1;
    });
    return moved ? this.findHolder(holder.id) : null;
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
   * addToBalance as a statement (`UPDATE … RETURNING 1`, `updatedAt` set as Prisma's @updatedAt
   * would), for the ledger's one-statement move of a card movement (LedgerService.transitionAlone
   * `effects`): adds `delta` minor units (signed) to card `id`'s balance only if `onlyIf` holds
   * (MOVED: the movement's row moved), so that the balance moves exactly when the row does.
   */
  addToBalanceSql(id: string, delta: bigint, onlyIf: Prisma.Sql): Prisma.Sql {
    return Prisma.sql`
      UPDATE cards SET balance = balance + ${delta}::bigint, updated_at = ${new Date()}::timestamptz
      WHERE id = ${id}::uuid AND ${onlyIf}
      RETURNING 1`;
  }

  /**
   * Writes a top-up's or withdrawal's write-ahead ledger row `row` for card `cardId` in ONE
   * statement through node-postgres (it commits alone; prepared once per connection), under a share
   * lock on the card (FOR SHARE: a terminate claimed before it refuses it, one claimed after waits
   * until the row exists): the row is written only if the card is in one of `statuses`, has a provider id,
   * has no `terminate` claim started after `liveSince` (a live one: `liveTransition`) and, when
   * `owner` is given (OWNERSHIP=client), was created by it; then `key.claim` (a deferred
   * Idempotency-Key claim: the key's record inserted, noting the row as its resource where the card
   * qualified, `idempotentClaimSql(…, CARD_WRITABLE)`) or `key.note` (for a claim already held: the
   * key's note of the row, `idempotentResourceNote(…, CARD_WRITABLE)`; both null outside an
   * idempotent request: `idempotentWriteSql` gives the pair) runs, and only if the key is the
   * request's (and, with a note, the note found it so) are the row, its first history entry (`entry`) and
   * `audit` (the request's audit event, conditioned on INSERTED) written: all of it or nothing. The
   * row takes the card's currency and customer, and its `created_by` (`creator` when the card has
   * none). Returns the card as locked (what decided; null when there is no card `cardId`: nothing
   * written but `key.claim`'s record), whether it qualified (`writable`), the row written (the
   * Transaction type, as Prisma reads it; null when nothing was: the card did not qualify, or the key's
   * claim or note was not the request's: `writable` and no row) and `keyHeld` (KEY_HELD, for `settled`
   * of idempotentWriteSql, to be called first: false with `key.claim` means the Idempotency-Key was
   * taken and nothing was written).
   */
  async recordMoneyMove(
    cardId: string,
    conditions: MoneyMoveConditions,
    row: WriteAheadRow,
    entry: StatusChangeEntry,
    key: ResourceKeySql,
    audit: Prisma.Sql | null,
  ): Promise<MoneyMoveWritten> {
    const { statuses, liveSince, owner, creator } = conditions;
    const [result] = await this.prisma.sql<
      Transaction & {
        cardStatus: CardStatus;
        cardProviderId: string | null;
        cardTransition: string | null;
        cardTransitionStartedAt: Date | null;
        cardCreatedBy: string | null;
        cardFound: boolean;
        writable: boolean;
        keyHeld: boolean;
      }
    >(
      Prisma.sql`
      WITH locked AS (
        SELECT c.id, c.status, c.provider_id, c.transition, c.transition_started_at, c.created_by, c.customer_id,
               c.currency
        FROM cards c WHERE c.id = ${cardId}::uuid
        FOR SHARE),
      cur AS (
        SELECT l.* FROM locked l
        WHERE l.status::text = ANY(${statuses}::text[]) AND l.provider_id IS NOT NULL
          AND NOT COALESCE(l.transition = 'terminate' AND l.transition_started_at > ${liveSince}::timestamptz, false)
          AND (${owner ?? null}::uuid IS NULL OR l.created_by = ${owner ?? null}::uuid)),
      ${idempotencyKeyCtes(key)},
      ${ledgerInsertCtes(row, entry, Prisma.sql`${CARD_WRITABLE} AND EXISTS (SELECT 1 FROM note)`, {
        currency: Prisma.sql`SELECT currency FROM cur`,
        customerId: Prisma.sql`SELECT customer_id FROM cur`,
        createdBy: Prisma.sql`SELECT COALESCE(created_by, ${creator}::uuid) FROM cur`,
      })},
      audit AS (${audit ?? Prisma.sql`SELECT 1 WHERE false`})
      SELECT l.status AS "cardStatus", l.provider_id AS "cardProviderId", l.transition AS "cardTransition",
             l.transition_started_at AS "cardTransitionStartedAt", l.created_by AS "cardCreatedBy",
             l.id IS NOT NULL AS "cardFound", ${CARD_WRITABLE} AS writable,
             ${KEY_HELD}, ins.*
      FROM (SELECT 1) AS one LEFT JOIN locked l ON true LEFT JOIN ins ON true`,
      READ_POOL_TYPES,
      'card_money_move',
    );
    const {
      cardStatus,
      cardProviderId,
      cardTransition,
      cardTransitionStartedAt,
      cardCreatedBy,
      cardFound,
      writable,
      keyHeld,
      ...inserted
    } = result;
    return {
      card: cardFound
        ? {
            id: cardId,
            status: cardStatus,
            providerId: cardProviderId,
            transition: cardTransition,
            transitionStartedAt: cardTransitionStartedAt,
            createdBy: cardCreatedBy,
          }
        : null,
      writable,
      row: inserted.id ? inserted : null,
      keyHeld,
    };
  }

  /**
   * Moves a card holder per CARD_HOLDER_MOVES with a conditional update (a duplicate or concurrent
   * delivery finds nothing to change). Returns `applied`, `unchanged` or `refused`.
   */
  async moveHolder(
    holder: Pick<CardHolderRecord, 'id' | 'status'>,
    move: CardHolderMove,
    patch: CardHolderPatch = {},
  ): Promise<'applied' | 'unchanged' | 'refused'> {
    const rule = CARD_HOLDER_MOVES[move];
    if (holder.status === rule.to) return 'unchanged';
    const moved = await this.prisma.cardHolder.updateMany({
      where: { id: holder.id, status: { in: [...rule.from] } },
      data: { ...this.sealHolder(patch), status: rule.to },
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

  /**
   * One page of cards (only the client's own under OWNERSHIP=client), newest first (keyset on
   * createdAt, id), `limit + 1` rows to tell whether more follow.
   */
  listCards(filter: { customerId?: string; status?: CardStatus; cursor?: string }, limit: number): Promise<Card[]> {
    return this.prisma.card.findMany({
      where: {
        ...(filter.customerId ? { customerId: filter.customerId } : {}),
        ...(filter.status ? { status: filter.status } : {}),
        ...ownerFilter(),
        ...afterCursor(filter.cursor),
      },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: limit + 1,
    });
  }

  /** @throws NotFoundError (404). */
  async requireHolder(id: string): Promise<CardHolderRecord> {
    const holder = await this.findHolder(id);
    if (!holder) throw new NotFoundError('Card holder', id);
    return holder;
  }

  /**
   * The card holder a KYC callback names: by the provider's card user id, else by the customer's
   * e-mail (lower-case, as stored). Null when neither matches.
   */
  async findHolderForKyc(providerUserId: string | null, email: string | null): Promise<CardHolderRecord | null> {
    const row =
      (providerUserId ? await this.prisma.cardHolder.findUnique({ where: { providerUserId } }) : null) ??
      (email ? await this.prisma.cardHolder.findFirst({ where: { customer: { email } } }) : null);
    return this.openHolder(row);
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

  /**
   * The columns to write for `patch`: personal data encrypted with the current key (the address as
   * its JSON text), the lookup hashes beside the id number and BVN, and the provider's answer
   * without personal data (PERSONAL_PAYLOAD_KEYS). Fields absent from `patch` stay absent.
   */
  private sealHolder(patch: CardHolderPatch): Prisma.CardHolderUncheckedUpdateManyInput {
    const { idNumber, phone, bvn, dateOfBirth, address, providerPayload, ...rest } = patch;
    const data: Prisma.CardHolderUncheckedUpdateManyInput = { ...rest };
    if (idNumber !== undefined) {
      data.idNumber = this.pii.seal(idNumber, PII_COLUMNS.cardHolderIdNumber);
      data.idNumberHash = this.pii.hash(idNumber, PII_COLUMNS.cardHolderIdNumber);
    }
    if (phone !== undefined) data.phone = this.pii.seal(phone, PII_COLUMNS.cardHolderPhone);
    if (bvn !== undefined) {
      data.bvn = this.pii.sealOptional(bvn, PII_COLUMNS.cardHolderBvn);
      data.bvnHash = bvn === null ? null : this.pii.hash(bvn, PII_COLUMNS.cardHolderBvn);
    }
    if (dateOfBirth !== undefined)
      data.dateOfBirth = this.pii.sealOptional(dateOfBirth, PII_COLUMNS.cardHolderDateOfBirth);
    if (address !== undefined) data.address = this.pii.seal(JSON.stringify(address), PII_COLUMNS.cardHolderAddress);
    if (providerPayload !== undefined)
      data.providerPayload =
        providerPayload === null || providerPayload === Prisma.DbNull || providerPayload === Prisma.JsonNull
          ? providerPayload
          : (withoutPersonalData(providerPayload) as Prisma.InputJsonValue);
    return data;
  }

  /**
   * A stored card holder row with its personal data decrypted (a legacy plaintext read as it is;
   * a legacy address is its JSON text). Null stays null.
   * @throws PiiDecryptError when a value does not decrypt with the key ring (changed, or its key removed).
   */
  private openHolder(row: CardHolder | null): CardHolderRecord | null {
    if (!row) return null;
    const { bvnHash: _bvnHash, idNumberHash: _idNumberHash, ...rest } = row;
    return {
      ...rest,
      idNumber: this.pii.open(row.idNumber, PII_COLUMNS.cardHolderIdNumber),
      phone: this.pii.open(row.phone, PII_COLUMNS.cardHolderPhone),
      bvn: this.pii.openOptional(row.bvn, PII_COLUMNS.cardHolderBvn),
      dateOfBirth: this.pii.openOptional(row.dateOfBirth, PII_COLUMNS.cardHolderDateOfBirth),
      address: JSON.parse(this.pii.open(row.address, PII_COLUMNS.cardHolderAddress)) as Prisma.JsonObject,
    };
  }
}
