import { randomUUID } from 'node:crypto';
import { BeneficiariesRepository } from '../../src/beneficiaries/beneficiaries.repository';
import { CardsRepository } from '../../src/cards/cards.repository';
import { encodeCursor, isoTimeSql } from '../../src/common/pagination';
import { runWithRequestContext } from '../../src/common/request-context';
import { CustomersRepository } from '../../src/customers/customers.repository';
import { ReadPool } from '../../src/database/read-pool';
import { READ_POOL_TYPES } from '../../src/database/sql';
import { Prisma } from '../../src/generated/prisma/client';
import { PayoutsRepository } from '../../src/payouts/payouts.repository';
import { LedgerRepository } from '../../src/transactions/ledger.repository';
import { insertCard, mediumWorld, type MediumWorld } from '../support/medium';

/** A row as the read pool hands it out: Prisma's row without its provider payload (LedgerRow, CardRow). */
function withoutPayload<T extends { providerPayload: unknown }>(row: T | null): Omit<T, 'providerPayload'> | null {
  if (!row) return row;
  const { providerPayload: _payload, ...rest } = row;
  return rest;
}

/**
 * The hot reads moved from Prisma to typed SQL on the read pool (src/database/read-pool.ts) must
 * hand out exactly the rows Prisma did: every field, named in camelCase, with its type (bigint,
 * Decimal, Date, enum, JSON, null).
 */
describe.each([true, false])('hot reads on the read pool (PG_NAMED_STATEMENTS=%s)', (named) => {
  let world: MediumWorld;
  const clientA = randomUUID();
  const clientB = randomUUID();

  beforeAll(async () => {
    world = await mediumWorld(
      [CustomersRepository, BeneficiariesRepository, CardsRepository, PayoutsRepository, LedgerRepository],
      { PG_NAMED_STATEMENTS: named, PROVIDER_TIMEOUT_MS: 1000 },
    );
  });
  afterAll(() => world.close());

  const get = <T>(type: new (...args: never[]) => T) => world.moduleRef.get(type);

  async function customer(i: number, createdBy: string | null = clientA) {
    return world.prisma.customer.create({
      data: {
        providerId: `cus-${randomUUID()}`,
        email: `r${i}-${randomUUID()}@x.test`,
        firstName: i % 2 ? 'Ada' : null,
        phone: '8012345678',
        countryCode: '+234',
        blacklisted: i === 1,
        createdBy,
        // Two customers share a creation time: the keyset's id tie-break is exercised.
        createdAt: new Date(Date.UTC(2026, 0, 1, 0, Math.min(i, 3), 0, 123)),
      },
    });
  }

  it('customer by id, and the customers page (cursor, email filter, ownership) read as Prisma reads them', async () => {
    const customers = get(CustomersRepository);
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await customer(i, i === 4 ? clientB : clientA));
    for (const c of made) {
      expect(await customers.findById(c.id)).toStrictEqual(
        await world.prisma.customer.findUnique({ where: { id: c.id } }),
      );
    }
    expect(await customers.findById(randomUUID())).toBeNull();

    // The page reads its instants as ISO text (CustomerRow): Prisma's rows with theirs written out.
    const prismaPage = async (where: Prisma.CustomerWhereInput, take: number) =>
      (await world.prisma.customer.findMany({ where, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take })).map(
        (c) => ({ ...c, createdAt: c.createdAt.toISOString(), updatedAt: c.updatedAt.toISOString() }),
      );
    const ids = new Set(made.map((c) => c.id));
    const mine = { id: { in: [...ids] } };
    // Walk every page of 2 and compare with Prisma's order.
    const walked: string[] = [];
    let cursor: string | undefined;
    for (;;) {
      const rows = (await customers.list({}, cursor, 2)).filter((c) => ids.has(c.id));
      walked.push(...rows.slice(0, 2).map((c) => c.id));
      if (rows.length <= 2) break;
      cursor = encodeCursor(rows[1]);
    }
    expect(walked).toStrictEqual((await prismaPage(mine, 10)).map((c) => c.id));
    expect(await customers.list({ email: made[1].email }, undefined, 10)).toStrictEqual(
      await prismaPage({ email: made[1].email }, 11),
    );
    // OWNERSHIP=client: the request sees only its client's rows.
    const asB = await runWithRequestContext(
      { requestId: 'r', recorded: false, ownerOnly: true, actor: { id: clientB, name: 'B' } },
      () => customers.list({}, undefined, 10),
    );
    expect(asB).toStrictEqual(await prismaPage({ createdBy: clientB }, 11));
  });

  it('isoTimeSql writes an instant as Date.toISOString does, its microseconds truncated as a Date read truncates them', async () => {
    const instants = ['2026-11-25 10:42:27.123999+00', '2026-01-02 03:04:05+05:30', '1999-12-31 23:59:59.9999-08'];
    for (const instant of instants) {
      const { rows } = await world.prisma.pool.query<{ text: string; date: Date }>({
        text: `SELECT ${isoTimeSql('$1::timestamptz', 'text')}, $1::timestamptz AS date`,
        values: [instant],
        types: READ_POOL_TYPES,
      });
      expect(rows[0].text).toBe(rows[0].date.toISOString());
    }
  });

  it('beneficiary, card and payout by id, and a card movements page, read as Prisma reads them (card and payout without their provider payload)', async () => {
    const c = await customer(9);
    const beneficiary = await world.prisma.beneficiary.create({
      data: {
        customerId: c.id,
        country: 'KE',
        currency: 'KES',
        type: 'MOBILEMONEY',
        destination: { accountNumber: '0712345678', nested: { list: [1, 'two', null] } },
        status: 'active',
        reference: `ben-${randomUUID()}`,
        createdBy: clientA,
      },
    });
    expect(await get(BeneficiariesRepository).findById(beneficiary.id)).toStrictEqual(beneficiary);
    expect(await get(BeneficiariesRepository).findById(randomUUID())).toBeNull();

    const card = await insertCard(
      world,
      {
        reference: `card-${randomUUID()}`,
        balance: 9_007_199_254_740_993n,
        initialAmount: 500n,
        last4: '4242',
        expiryMonth: 12,
        expiryYear: 2030,
        billingAddress: { street: '1 Main St', city: 'Nairobi' },
        providerPayload: { status: 'active' },
        transition: 'freeze',
        transitionStartedAt: new Date('2026-01-02T03:04:05.678Z'),
        createdBy: clientA,
      },
      c.id,
    );
    const cards = get(CardsRepository);
    expect(await cards.requireCard(card.id)).toStrictEqual(
      withoutPayload(await world.prisma.card.findUnique({ where: { id: card.id } })),
    );
    await expect(cards.requireCard(randomUUID())).rejects.toMatchObject({ code: 'not_found' });

    const payout = await world.prisma.transaction.create({
      data: {
        kind: 'payout',
        direction: 'debit',
        status: 'pending',
        amount: 150_000n,
        fee: 250n,
        currency: 'USD',
        counterAmount: 19_350_000n,
        counterCurrency: 'KES',
        exchangeRate: new Prisma.Decimal('129.000000000001'),
        customerId: c.id,
        beneficiaryId: beneficiary.id,
        providerId: `po-${randomUUID()}`,
        reference: `po-${randomUUID()}`,
        description: 'rent',
        confirmRequestedAt: new Date('2026-01-02T00:00:00.001Z'),
        providerPayload: { raw: true },
        createdBy: clientA,
      },
    });
    const payouts = get(PayoutsRepository);
    expect(await payouts.findPayout(payout.id)).toStrictEqual(
      withoutPayload(await world.prisma.transaction.findUnique({ where: { id: payout.id } })),
    );
    const movement = await world.prisma.transaction.create({
      data: {
        kind: 'card_topup',
        direction: 'credit',
        status: 'success',
        amount: 300n,
        currency: 'USD',
        cardId: card.id,
        customerId: c.id,
        reference: `top-${randomUUID()}`,
        completedAt: new Date(),
      },
    });
    // Not a payout: not found as one.
    expect(await payouts.findPayout(movement.id)).toBeNull();

    for (let i = 0; i < 4; i++) {
      await world.prisma.transaction.create({
        data: {
          kind: i === 3 ? 'card_spend' : 'card_withdrawal',
          direction: 'debit',
          status: 'pending',
          amount: BigInt(10 + i),
          currency: 'USD',
          cardId: card.id,
          reference: `mv-${randomUUID()}`,
          createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, Math.min(i, 2))),
        },
      });
    }
    const expected = await world.prisma.transaction.findMany({
      where: { cardId: card.id, kind: { in: ['card_topup', 'card_withdrawal', 'card_spend'] } },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    });
    const ledger = get(LedgerRepository);
    const walked = [];
    let cursor: string | undefined;
    for (;;) {
      const { card: owner, rows } = await ledger.cardMovementsPage(card.id, cursor, 2);
      expect(owner).toEqual({ createdBy: card.createdBy });
      walked.push(...rows.slice(0, 2));
      if (rows.length <= 2) break;
      cursor = encodeCursor(rows[1]);
    }
    // Each row: exactly the CardMovementRow projection of the row Prisma reads (its instants as the
    // text Date.toISOString writes, which is what the API answers), plus the card's owner.
    expect(walked).toStrictEqual(
      expected.map((row) => ({
        cardCreatedBy: card.createdBy,
        id: row.id,
        kind: row.kind,
        direction: row.direction,
        status: row.status,
        amount: row.amount,
        currency: row.currency,
        cardId: row.cardId,
        providerId: row.providerId,
        reference: row.reference,
        description: row.description,
        failureReason: row.failureReason,
        createdAt: row.createdAt.toISOString(),
        updatedAt: row.updatedAt.toISOString(),
        completedAt: row.completedAt?.toISOString() ?? null,
      })),
    );
    expect(walked).toHaveLength(5);
    await expect(ledger.cardMovementsPage(card.id, 'not-a-cursor', 2)).rejects.toMatchObject({
      code: 'validation_failed',
    });
    const stats = get(ReadPool).stats();
    expect(stats.total).toBeGreaterThan(0);
    expect(stats.idle).toBe(stats.total);
  });
});
