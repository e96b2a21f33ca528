import { Injectable } from '@nestjs/common';
import { ErrorCode, InvalidStateTransitionError, NotFoundError, ProviderError } from '../common/errors';
import { PrismaService } from '../database/prisma.service';
import type { Prisma, StatusChangeSource, Transaction, TransactionStatus } from '../generated/prisma/client';
import { OutboxService } from '../outbound/outbox.service';
import { FINAL_STATUSES, sourcesOf } from './transaction-state';

/** Result of a status move: `applied`, `unchanged` (already there: a duplicate), or `refused`. */
export type TransitionOutcome = 'applied' | 'unchanged' | 'refused';

/** Fields a transition may set together with the status (e.g. the provider's answer). */
export type TransactionPatch = Omit<Prisma.TransactionUncheckedUpdateInput, 'id' | 'status' | 'kind' | 'createdAt'>;

type Tx = Prisma.TransactionClient;

/**
 * The local ledger: one Transaction row per money movement, with every status move recorded in
 * TransactionStatusChange. Rows are written before the provider is called (status `created`) and
 * updated after; they are never deleted.
 */
@Injectable()
export class LedgerService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly outbox: OutboxService,
  ) {}

  /**
   * Writes a new ledger row in status `created` (or the given initial status) with its first
   * history entry, in one database transaction. Amounts are minor units. An initial status with a
   * gateway event (src/outbound/gateway-events.ts) publishes it to the outbox in that transaction.
   */
  async record(
    data: Omit<Prisma.TransactionUncheckedCreateInput, 'status'> & { status?: TransactionStatus },
    source: StatusChangeSource = 'api',
    tx?: Tx,
  ): Promise<Transaction> {
    const run = async (db: Tx) => {
      const row = await db.transaction.create({ data: { ...data, status: data.status ?? 'created' } });
      await db.transactionStatusChange.create({ data: { transactionId: row.id, from: null, to: row.status, source } });
      await this.outbox.publishLedgerStatus(row, db);
      return row;
    };
    return tx ? run(tx) : this.prisma.$transaction(run);
  }

  /**
   * Moves a transaction to `to` if its state machine allows it from the current status
   * (transaction-state.ts), setting `patch` and writing the history entry atomically. A move to
   * the status it already has is `unchanged` (duplicate events change nothing).
   * With `strict`, a refused move throws InvalidStateTransitionError (409) instead of returning `refused`.
   * An `applied` move to a status with a gateway event (e.g. payout success → `payout.succeeded`,
   * src/outbound/gateway-events.ts) publishes it to the outbox in the same database transaction.
   */
  async transition(
    id: string,
    to: TransactionStatus,
    source: StatusChangeSource,
    opts: { patch?: TransactionPatch; payload?: Prisma.InputJsonValue; strict?: boolean; tx?: Tx } = {},
  ): Promise<{ outcome: TransitionOutcome; transaction: Transaction }> {
    const run = async (db: Tx) => {
      const [current] = await db.$queryRaw<Array<Pick<Transaction, 'id' | 'kind' | 'status'>>>`
        SELECT id, kind, status FROM transactions WHERE id = ${id}::uuid FOR UPDATE`;
      if (!current) throw new NotFoundError('Transaction', id);
      if (current.status === to) {
        const row = opts.patch
          ? await db.transaction.update({ where: { id }, data: opts.patch })
          : await db.transaction.findUniqueOrThrow({ where: { id } });
        return { outcome: 'unchanged' as const, transaction: row };
      }
      if (!sourcesOf(current.kind, to).includes(current.status)) {
        if (opts.strict) throw new InvalidStateTransitionError(current.kind, current.status, to);
        return { outcome: 'refused' as const, transaction: await db.transaction.findUniqueOrThrow({ where: { id } }) };
      }
      const row = await db.transaction.update({
        where: { id },
        data: { ...opts.patch, status: to, ...(FINAL_STATUSES.includes(to) ? { completedAt: new Date() } : {}) },
      });
      await db.transactionStatusChange.create({
        data: { transactionId: id, from: current.status, to, source, payload: opts.payload },
      });
      await this.outbox.publishLedgerStatus(row, db);
      return { outcome: 'applied' as const, transaction: row };
    };
    return opts.tx ? run(opts.tx) : this.prisma.$transaction(run);
  }

  /**
   * Records a failed provider call on a ledger row: a refusal (`provider_rejected`: nothing
   * happened upstream) → `failed`; anything else (timeout, 5xx, an error after the call) → `unknown`,
   * which reconciliation settles. Returns the status aimed for.
   */
  async recordProviderFailure(id: string, error: unknown, tx?: Tx): Promise<TransactionStatus> {
    const refused = error instanceof ProviderError && error.code === ErrorCode.ProviderRejected;
    const to: TransactionStatus = refused ? 'failed' : 'unknown';
    await this.transition(id, to, 'api', {
      tx,
      patch: { failureReason: error instanceof Error ? error.message : String(error) },
    });
    return to;
  }

  /** @throws NotFoundError (404). */
  async get(id: string): Promise<Transaction> {
    const row = await this.prisma.transaction.findUnique({ where: { id } });
    if (!row) throw new NotFoundError('Transaction', id);
    return row;
  }
}
