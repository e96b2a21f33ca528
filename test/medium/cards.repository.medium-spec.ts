import { randomUUID } from 'node:crypto';
import { CardsRepository } from '../../src/cards/cards.repository';
import { NotFoundError } from '../../src/common/errors';
import { encodeCursor } from '../../src/common/pagination';
import type { CardStatus } from '../../src/generated/prisma/client';
import { insertCard, insertCardHolder, mediumWorld, type MediumWorld } from '../support/medium';

describe('CardsRepository on a real database', () => {
  let world: MediumWorld;
  let cards: CardsRepository;

  beforeAll(async () => {
    // leaseMs = CARD_TRANSITION_LEASE_TIMEOUTS (3) × PROVIDER_TIMEOUT_MS.
    world = await mediumWorld([CardsRepository], { PROVIDER_TIMEOUT_MS: 1000 });
    cards = world.moduleRef.get(CardsRepository);
  });
  afterAll(() => world.close());

  async function customer() {
    return world.prisma.customer.create({
      data: { providerId: `cus-${randomUUID()}`, email: `${randomUUID()}@x.test` },
    });
  }

  const holderFor = (customerId: string, status = 'active') => insertCardHolder(world, customerId, status);

  const card = (status: CardStatus = 'active', providerId: string | null = `card-${randomUUID()}`) =>
    insertCard(world, { status, providerId });

  function cardData(c: { customerId: string; cardHolderId: string }) {
    return { customerId: c.customerId, cardHolderId: c.cardHolderId, brand: 'visa', type: 'virtual' };
  }

  it('leaseMs is CARD_TRANSITION_LEASE_TIMEOUTS × PROVIDER_TIMEOUT_MS', () => {
    expect(cards.leaseMs).toBe(3000);
  });

  describe('claimTransition / releaseTransition', () => {
    it('won: the first claim is claimed and recorded on the card', async () => {
      const c = await card('active');
      const claim = await cards.claimTransition(c.id, 'freeze');
      expect(claim.outcome).toBe('claimed');
      const stored = await world.prisma.card.findUniqueOrThrow({ where: { id: c.id } });
      expect(stored.transition).toBe('freeze');
      expect(claim.outcome === 'claimed' && claim.startedAt.getTime()).toBe(stored.transitionStartedAt?.getTime());
      expect(cards.liveTransition(stored)).toBe('freeze');
    });

    it('lost: of concurrent claims exactly one wins; a live claim refuses the others', async () => {
      const c = await card('active');
      const claims = await Promise.all([
        cards.claimTransition(c.id, 'freeze'),
        cards.claimTransition(c.id, 'terminate'),
        cards.claimTransition(c.id, 'freeze'),
      ]);
      expect(claims.filter((x) => x.outcome === 'claimed')).toHaveLength(1);
      const refused = claims.find((x) => x.outcome === 'refused');
      expect(refused?.outcome === 'refused' && refused.card.transition).toBeTruthy();
    });

    it('taken after the lease lapsed: a claim older than leaseMs is taken over, and its late release clears nothing', async () => {
      const c = await card('active');
      const first = await cards.claimTransition(c.id, 'freeze');
      if (first.outcome !== 'claimed') throw new Error('expected claimed');
      await world.db.query(
        `UPDATE cards SET transition_started_at = transition_started_at - interval '4 seconds' WHERE id = $1`,
        [c.id],
      );
      const stale = (await world.prisma.card.findUniqueOrThrow({ where: { id: c.id } })).transitionStartedAt as Date;
      expect(cards.liveTransition({ transition: 'freeze', transitionStartedAt: stale })).toBeNull();
      const second = await cards.claimTransition(c.id, 'terminate');
      expect(second.outcome).toBe('claimed');
      // The first holder's release (old start time) leaves the newer claim in place.
      const late = await cards.releaseTransition(c.id, 'freeze', stale);
      expect(late.outcome).toBe('unchanged');
      expect((await world.prisma.card.findUniqueOrThrow({ where: { id: c.id } })).transition).toBe('terminate');
    });

    it('refuses a card whose status does not allow the move, or that has no provider id yet', async () => {
      const frozen = await card('frozen');
      expect((await cards.claimTransition(frozen.id, 'freeze')).outcome).toBe('refused');
      const unsent = await card('active', null);
      expect((await cards.claimTransition(unsent.id, 'freeze')).outcome).toBe('refused');
      await expect(cards.claimTransition(randomUUID(), 'freeze')).rejects.toBeInstanceOf(NotFoundError);
    });

    it('release with a patch moves the card and clears the claim; without, the status stays', async () => {
      const c = await card('active');
      const claim = await cards.claimTransition(c.id, 'freeze');
      if (claim.outcome !== 'claimed') throw new Error('expected claimed');
      const released = await cards.releaseTransition(c.id, 'freeze', claim.startedAt, { failureReason: null });
      expect(released.outcome).toBe('applied');
      expect(await world.prisma.card.findUniqueOrThrow({ where: { id: c.id } })).toMatchObject({
        status: 'frozen',
        transition: null,
        transitionStartedAt: null,
      });

      const d = await card('active');
      const claim2 = await cards.claimTransition(d.id, 'terminate');
      if (claim2.outcome !== 'claimed') throw new Error('expected claimed');
      expect((await cards.releaseTransition(d.id, 'terminate', claim2.startedAt)).outcome).toBe('unchanged');
      expect(await world.prisma.card.findUniqueOrThrow({ where: { id: d.id } })).toMatchObject({
        status: 'active',
        transition: null,
      });
    });
  });

  it('move: applied, unchanged (patch still written), refused (nothing written), NotFound', async () => {
    const c = await card('active');
    expect((await cards.move(c.id, 'freeze')).outcome).toBe('applied');
    const again = await cards.move(c.id, 'freeze', { last4: '4242' });
    expect(again.outcome).toBe('unchanged');
    expect(again.card.last4).toBe('4242');
    const refused = await cards.move(c.id, 'accept', { last4: '0000' });
    expect(refused.outcome).toBe('refused');
    expect(await world.prisma.card.findUniqueOrThrow({ where: { id: c.id } })).toMatchObject({
      status: 'frozen',
      last4: '4242',
    });
    await expect(cards.move(randomUUID(), 'freeze')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('addToBalance and balanceDrift: a balance off its successful ledger movements is reported, largest gap first', async () => {
    const inStep = await card('active');
    const off = await card('active');
    const farOff = await card('active');
    const movement = (cardId: string, direction: 'credit' | 'debit', amount: bigint, status: 'success' | 'failed') =>
      world.prisma.transaction.create({
        data: {
          kind: direction === 'credit' ? 'card_topup' : 'card_withdrawal',
          direction,
          status,
          amount,
          currency: 'USD',
          cardId,
          reference: `ref-${randomUUID()}`,
        },
      });
    await movement(inStep.id, 'credit', 1000n, 'success');
    await movement(inStep.id, 'debit', 300n, 'success');
    await movement(inStep.id, 'credit', 5000n, 'failed');
    await movement(off.id, 'credit', 1000n, 'success');
    await world.prisma.$transaction(async (tx) => {
      await cards.addToBalance(inStep.id, 700n, tx);
      await cards.addToBalance(off.id, 900n, tx);
      await cards.addToBalance(farOff.id, -50n, tx);
      await cards.addToBalance(farOff.id, 0n, tx);
      await cards.addToBalance(farOff.id, 550n, tx);
    });
    expect((await world.prisma.card.findUniqueOrThrow({ where: { id: farOff.id } })).balance).toBe(500n);
    const drift = (await cards.balanceDrift()).filter((d) => [inStep.id, off.id, farOff.id].includes(d.cardId));
    expect(drift).toEqual([
      { cardId: farOff.id, balance: 500n, ledger: 0n },
      { cardId: off.id, balance: 900n, ledger: 1000n },
    ]);
  });

  describe('card holders', () => {
    it('createHolder writes `created`; a second holder for the customer is a unique violation', async () => {
      const c = await customer();
      const data = { idType: 'NIN', idNumber: '1', firstName: 'A', lastName: 'B', phone: '+234', address: {} };
      const h = await cards.createHolder(c.id, data);
      expect(h.status).toBe('created');
      expect((await cards.holderOf(c.id))?.id).toBe(h.id);
      await expect(cards.createHolder(c.id, data)).rejects.toMatchObject({ code: 'P2002' });
    });

    it('stores personal data encrypted and reads it back in plaintext; the provider answer keeps no personal field', async () => {
      const c = await customer();
      const address = { line1: '5 Hidden Lane', country: 'NG' };
      const h = await cards.createHolder(c.id, {
        idType: 'NIN',
        idNumber: 'NIN55550001',
        firstName: 'A',
        lastName: 'B',
        phone: '+2348011112222',
        bvn: '22255550001',
        address,
      });
      expect(h).toMatchObject({ idNumber: 'NIN55550001', phone: '+2348011112222', bvn: '22255550001', address });
      await cards.moveHolder(h, 'accept', {
        providerPayload: { id: 'u1', phoneNumber: '+2348011112222', data: { bvn: '22255550001', status: 'ok' } },
      });
      const [row] = await world.db.query<Record<string, unknown>>('SELECT * FROM card_holders WHERE id = $1', [h.id]);
      for (const column of ['id_number', 'phone', 'bvn', 'address']) expect(row[column]).toMatch(/^pii:v1:dev:/);
      expect(row.provider_payload).toEqual({ id: 'u1', data: { status: 'ok' } });
      expect(JSON.stringify(row)).not.toMatch(/NIN55550001|8011112222|22255550001|Hidden Lane/);
      expect((await cards.findHolder(h.id))?.address).toEqual(address);
      expect((await cards.holdersWithBvn('22255550001')).map((x) => x.id)).toEqual([h.id]);
    });

    it('reregisterHolder: from failed wins, a fresh `created` is refused, a lapsed `created` is taken', async () => {
      const failed = await holderFor((await customer()).id, 'failed');
      expect((await cards.reregisterHolder(failed, { firstName: 'New' }))?.status).toBe('created');
      const fresh = await holderFor((await customer()).id, 'created');
      expect(await cards.reregisterHolder(fresh, { firstName: 'New' })).toBeNull();
      await world.db.query(`UPDATE card_holders SET updated_at = now() - interval '4 seconds' WHERE id = $1`, [
        fresh.id,
      ]);
      expect((await cards.reregisterHolder(fresh, { firstName: 'New' }))?.firstName).toBe('New');
    });

    it('moveHolder: applied, unchanged, refused', async () => {
      const h = await holderFor((await customer()).id, 'created');
      expect(await cards.moveHolder(h, 'accept')).toBe('applied');
      const pending = await world.prisma.cardHolder.findUniqueOrThrow({ where: { id: h.id } });
      expect(await cards.moveHolder(pending, 'accept')).toBe('unchanged');
      expect(await cards.moveHolder(pending, 'refuse')).toBe('refused');
      expect((await world.prisma.cardHolder.findUniqueOrThrow({ where: { id: h.id } })).status).toBe('pending');
    });
  });

  it('findByProvider prefers the provider id, falls back to the reference', async () => {
    const a = await card('active');
    const b = await card('active');
    expect((await cards.findByProvider(a.providerId, b.reference))?.id).toBe(a.id);
    expect((await cards.findByProvider('nobody', b.reference))?.id).toBe(b.id);
    expect(await cards.findByProvider(null, null)).toBeNull();
  });
  describe('cards: write-ahead, provider id, list', () => {
    it('createCard writes `created` with a zero balance; a used reference is a unique violation', async () => {
      const c = await customer();
      const h = await holderFor(c.id);
      const data = {
        customerId: c.id,
        cardHolderId: h.id,
        brand: 'visa',
        type: 'virtual',
        reference: `ref-${randomUUID()}`,
      };
      const written = await cards.createCard(data);
      expect(written).toMatchObject({ status: 'created', balance: 0n, providerId: null });
      await expect(cards.createCard(data)).rejects.toMatchObject({ code: 'P2002' });
    });

    it('attachProviderId: set on a card without one; a card with one keeps it', async () => {
      const unsent = await card('pending', null);
      expect(await cards.attachProviderId(unsent.id, 'card-new')).toBe(true);
      expect((await cards.requireCard(unsent.id)).providerId).toBe('card-new');
      expect(await cards.attachProviderId(unsent.id, 'card-other')).toBe(false);
      expect((await cards.requireCard(unsent.id)).providerId).toBe('card-new');
    });

    it('listCards: newest first, by customer and status, limit + 1 rows, after a cursor', async () => {
      const first = await card('active');
      const second = await world.prisma.card.create({
        data: { ...cardData(first), status: 'frozen', reference: `ref-${randomUUID()}`, providerId: null },
      });
      const mine = await cards.listCards({ customerId: first.customerId }, 5);
      expect(mine.map((c) => c.id)).toEqual([second.id, first.id]);
      expect((await cards.listCards({ customerId: first.customerId, status: 'frozen' }, 5)).map((c) => c.id)).toEqual([
        second.id,
      ]);
      expect(await cards.listCards({ customerId: first.customerId }, 0)).toHaveLength(1);
      const cursor = encodeCursor({ createdAt: second.createdAt, id: second.id });
      expect((await cards.listCards({ customerId: first.customerId, cursor }, 5)).map((c) => c.id)).toEqual([first.id]);
    });
  });

  describe('card holders: lookups and the provider user id', () => {
    it('requireHolder: found, else NotFound', async () => {
      const h = await holderFor((await customer()).id);
      expect((await cards.requireHolder(h.id)).id).toBe(h.id);
      await expect(cards.requireHolder(randomUUID())).rejects.toBeInstanceOf(NotFoundError);
    });

    it('findHolderForKyc: by card user id, else by e-mail, else null', async () => {
      const c = await customer();
      const h = await holderFor(c.id);
      expect(await cards.attachProviderUserId(h.id, `cu-${h.id}`)).toBe(true);
      expect((await cards.findHolderForKyc(`cu-${h.id}`, null))?.id).toBe(h.id);
      expect((await cards.findHolderForKyc('nobody', c.email))?.id).toBe(h.id);
      expect(await cards.findHolderForKyc('nobody', 'nobody@x.test')).toBeNull();
      expect(await cards.findHolderForKyc(null, null)).toBeNull();
    });

    it("attachProviderUserId: set when none; kept when one is there; another holder's id is a unique violation", async () => {
      const h = await holderFor((await customer()).id);
      expect(await cards.attachProviderUserId(h.id, `cu-${h.id}`)).toBe(true);
      expect(await cards.attachProviderUserId(h.id, 'cu-other')).toBe(false);
      expect((await cards.requireHolder(h.id)).providerUserId).toBe(`cu-${h.id}`);
      const other = await holderFor((await customer()).id);
      await expect(cards.attachProviderUserId(other.id, `cu-${h.id}`)).rejects.toMatchObject({ code: 'P2002' });
    });
  });

  it('withTransaction: all or nothing', async () => {
    const c = await card('active');
    await expect(
      cards.withTransaction(async (tx) => {
        await cards.addToBalance(c.id, 100n, tx);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect((await cards.requireCard(c.id)).balance).toBe(0n);
  });
});
