import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { ReadPool } from '../../src/database/read-pool';
import type { TransactionKind, TransactionStatus } from '../../src/generated/prisma/client';
import type { LedgerPageRow, LedgerRow } from '../../src/transactions/ledger-row';
import { TransactionsRepository } from '../../src/transactions/transactions.repository';
import { mediumWorld, type MediumWorld } from '../support/medium';

describe('TransactionsRepository on a real database', () => {
  let world: MediumWorld;
  let repo: TransactionsRepository;
  const base = new Date('2026-01-01T00:00:00.000Z');

  beforeAll(async () => {
    world = await mediumWorld([TransactionsRepository]);
    repo = world.moduleRef.get(TransactionsRepository);
  });
  afterAll(() => world.close());

  async function row(
    currency: string,
    minute: number,
    fields: { kind?: TransactionKind; status?: TransactionStatus; amount?: bigint; fee?: bigint; id?: string } = {},
  ) {
    return world.prisma.transaction.create({
      data: {
        id: fields.id ?? randomUUID(),
        kind: fields.kind ?? 'payout',
        direction: fields.kind === 'collection' ? 'credit' : 'debit',
        status: fields.status ?? 'success',
        amount: fields.amount ?? 100n,
        fee: fields.fee ?? 0n,
        currency,
        reference: `ref-${randomUUID()}`,
        createdAt: new Date(base.getTime() + minute * 60_000),
      },
    });
  }

  it('list filters by kind, status, amount range and created_at window (from inclusive, to exclusive)', async () => {
    const a = await row('XAA', 0, { kind: 'payout', status: 'success', amount: 100n });
    const b = await row('XAA', 1, { kind: 'payout', status: 'failed', amount: 500n });
    const c = await row('XAA', 2, { kind: 'collection', status: 'success', amount: 900n });
    const ids = async (filter: Parameters<TransactionsRepository['list']>[0]) =>
      (await repo.list({ currency: 'XAA', ...filter }, 'asc', undefined, 10)).map((r) => r.id);
    expect(await ids({})).toEqual([a.id, b.id, c.id]);
    expect(await ids({ kind: 'payout' })).toEqual([a.id, b.id]);
    expect(await ids({ status: 'success' })).toEqual([a.id, c.id]);
    expect(await ids({ amountMin: 500n, amountMax: 900n })).toEqual([b.id, c.id]);
    expect(await ids({ from: b.createdAt, to: c.createdAt })).toEqual([b.id]);
    expect(await ids({ reference: c.reference })).toEqual([c.id]);
    const [first] = await repo.list({ currency: 'XAA' }, 'desc', undefined, 10);
    // Amounts stay exact (int8 → bigint).
    expect(first).toMatchObject({ id: c.id, amount: 900n, kind: 'collection' });
  });

  it('a finance row is the ledger row Prisma reads (LedgerRow: every column but the provider payload; a page row has its instants as ISO text)', async () => {
    const t = await world.prisma.transaction.create({
      data: {
        kind: 'payout',
        direction: 'debit',
        status: 'success',
        amount: 9_007_199_254_740_993n,
        fee: 7n,
        currency: 'XLR',
        counterAmount: 12n,
        counterCurrency: 'KES',
        exchangeRate: '0.000000012345',
        reference: `ref-${randomUUID()}`,
        providerPayload: { big: 'not read' },
        completedAt: new Date(),
      },
    });
    const { providerPayload: _payload, ...expected } = t;
    const [listed] = await repo.list({ currency: 'XLR' }, 'desc', undefined, 10);
    expect(listed).toEqual({
      ...expected,
      createdAt: t.createdAt.toISOString(),
      updatedAt: t.updatedAt.toISOString(),
      completedAt: t.completedAt?.toISOString(),
      confirmRequestedAt: null,
    });
    expect(listed.exchangeRate?.toFixed()).toBe('0.000000012345');
    const { statusHistory: _history, ...detail } = (await repo.getWithHistory(t.id)) as NonNullable<
      Awaited<ReturnType<TransactionsRepository['getWithHistory']>>
    >;
    expect(detail).toEqual(expected);
  });

  it('list pages by keyset (created_at, id) in both orders, ties broken by id, returning limit + 1 rows', async () => {
    const tieIds = [randomUUID(), randomUUID()].sort();
    await row('XKS', 0, { id: tieIds[0] });
    await row('XKS', 0, { id: tieIds[1] });
    await row('XKS', 1);
    await row('XKS', 2);
    const all = (await repo.list({ currency: 'XKS' }, 'desc', undefined, 10)).map((r) => r.id);
    expect(all).toHaveLength(4);
    expect(all.slice(2)).toEqual([tieIds[1], tieIds[0]]);

    for (const order of ['asc', 'desc'] as const) {
      const seen: string[] = [];
      let after: { createdAt: Date; id: string } | undefined;
      for (;;) {
        const page: LedgerPageRow[] = await repo.list({ currency: 'XKS' }, order, after, 1);
        seen.push(page[0].id);
        if (page.length <= 1) break;
        expect(page).toHaveLength(2);
        // The cursor carries the page's text instant back as the Date a decoded cursor gives.
        after = { createdAt: new Date(page[0].createdAt), id: page[0].id };
      }
      expect(seen).toEqual(order === 'desc' ? all : [...all].reverse());
    }
  });

  it('summary totals count, amount and fee per (currency, kind, status) as exact strings', async () => {
    await row('XSM', 0, { amount: 9_007_199_254_740_993n, fee: 1n });
    await row('XSM', 1, { amount: 7n, fee: 2n });
    await row('XSM', 2, { status: 'failed', amount: 5n });
    expect(await repo.summary({ currency: 'XSM' })).toEqual(
      [
        { currency: 'XSM', kind: 'payout', status: 'success', count: 2, amount: '9007199254741000', fee: '3' },
        { currency: 'XSM', kind: 'payout', status: 'failed', count: 1, amount: '5', fee: '0' },
      ].sort((x, y) => (x.status < y.status ? -1 : 1)),
    );
  });

  it('getWithHistory returns the row with its moves, or undefined', async () => {
    const t = await row('XGH', 0, { status: 'initiated' });
    await world.prisma.transactionStatusChange.create({
      data: { transactionId: t.id, from: 'created', to: 'initiated', source: 'api' },
    });
    const found = await repo.getWithHistory(t.id);
    expect(found?.statusHistory).toMatchObject([{ from: 'created', to: 'initiated', source: 'api', actorId: null }]);
    expect(await repo.getWithHistory(randomUUID())).toBeUndefined();
  });

  it('streamRows reads every matching row through a cursor and gives its connection back', async () => {
    for (let i = 0; i < 7; i++) await row('XST', i);
    const stream: Readable = await repo.streamRows({ currency: 'XST' }, 'asc', 3);
    const rows: LedgerRow[] = [];
    for await (const r of stream) rows.push(r as LedgerRow);
    expect(rows).toHaveLength(7);
    expect(rows.map((r) => r.createdAt.getTime())).toEqual(
      [...rows.map((r) => r.createdAt.getTime())].sort((x, y) => x - y),
    );
    const pool = world.moduleRef.get(ReadPool).stats();
    expect(pool.total).toBe(pool.idle);
  });
});
