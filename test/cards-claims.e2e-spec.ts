import { randomUUID } from 'node:crypto';
import { cardKit } from './support/cards';
import { type Harness, startHarness } from './support/harness';

/**
 * Card moves and card-holder registration under concurrency and provider failure: a freeze,
 * unfreeze or terminate claims the card before the provider is called (one call however many
 * requests race), the claim is released after the answer or lapses after its lease, top-ups stop
 * while a terminate is in flight, and a card holder exists locally before the provider hears of it.
 */
describe('card transition claims and card-holder write-ahead (e2e)', () => {
  let h: Harness;
  let key: string;
  const auth = () => ({ Authorization: `Bearer ${key}` });
  let kit: ReturnType<typeof cardKit>;
  const act = (id: string, action: string) => h.http().post(`/v1/cards/${id}/${action}`).set(auth());
  const claimOf = async (id: string) =>
    (
      await h.db.query<{ status: string; transition: string | null; transition_started_at: Date | null }>(
        'SELECT status, transition, transition_started_at FROM cards WHERE id = $1',
        [id],
      )
    )[0];
  const clearFaults = () => h.sim.admin('DELETE', '/faults');
  // PROVIDER_TIMEOUT_MS is 800 in the harness: the claim's lease is 3 × 800 ms.
  const LEASE_MS = 2_400;

  beforeAll(async () => {
    h = await startHarness();
    key = await h.key();
    kit = cardKit(h, auth);
  });
  afterAll(() => h.close());
  afterEach(() => clearFaults());

  it('20 concurrent freezes of one card: one provider call, one 200 and 19 × 409', async () => {
    const card = await kit.activeCard('race@example.com');
    await h.sim.admin('DELETE', '/calls');
    // The provider answers slowly, so every request arrives while the first one is at the provider.
    await h.sim.setFault('freezeCard', { latencyMs: 300 });
    const answers = await Promise.all(Array.from({ length: 20 }, () => act(card.id, 'freeze')));
    expect((await h.sim.calls('freezeCard')).length).toBe(1);
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([200, ...Array(19).fill(409)]);
    for (const refused of answers.filter((a) => a.status === 409)) {
      expect(refused.body.code).toBe('invalid_state_transition');
      // Refused either while the freeze was in flight (named) or after it landed (from frozen).
      if (refused.body.from === 'active') expect(refused.body.transitionInFlight).toBe('freeze');
      else expect(refused.body.from).toBe('frozen');
    }
    expect(answers.some((a) => a.body.transitionInFlight === 'freeze')).toBe(true);
    expect(await claimOf(card.id)).toMatchObject({ status: 'frozen', transition: null, transition_started_at: null });

    // Mixed moves race too: of a terminate and an unfreeze of the frozen card, one reaches the provider.
    await h.sim.setFault('unfreezeCard', { latencyMs: 300 });
    await h.sim.setFault('terminateCard', { latencyMs: 300 });
    const mixed = await Promise.all([act(card.id, 'unfreeze'), act(card.id, 'terminate')]);
    expect(mixed.map((a) => a.status).sort()).toEqual([200, 409]);
    expect((await h.sim.calls('unfreezeCard')).length + (await h.sim.calls('terminateCard')).length).toBe(1);
  });

  it('releases the claim after a refusal or a timeout (status kept), and a claim left by a dead process lapses', async () => {
    const card = await kit.activeCard('release@example.com');
    await h.sim.setFault('freezeCard', { status: 400, times: 1 });
    expect((await act(card.id, 'freeze')).status).toBe(422);
    expect(await claimOf(card.id)).toMatchObject({ status: 'active', transition: null });
    await h.sim.setFault('freezeCard', { timeout: true, times: 1 });
    expect((await act(card.id, 'freeze')).status).toBe(504);
    expect(await claimOf(card.id)).toMatchObject({ status: 'active', transition: null });

    // A process died between claiming and releasing: the claim holds for its lease, then lapses.
    await h.db.query(`UPDATE cards SET transition = 'terminate', transition_started_at = now() WHERE id = $1`, [
      card.id,
    ]);
    const before = (await h.sim.calls('freezeCard')).length;
    const held = await act(card.id, 'freeze');
    expect(held.status).toBe(409);
    expect(held.body).toMatchObject({
      code: 'invalid_state_transition',
      from: 'active',
      to: 'frozen',
      transitionInFlight: 'terminate',
    });
    expect((await h.sim.calls('freezeCard')).length).toBe(before);
    await h.db.query(
      `UPDATE cards SET transition_started_at = now() - ($2::int + 50) * interval '1 millisecond' WHERE id = $1`,
      [card.id, LEASE_MS],
    );
    const after = await act(card.id, 'freeze');
    expect(after.status).toBe(200);
    expect(after.body.status).toBe('frozen');
    expect(await claimOf(card.id)).toMatchObject({ status: 'frozen', transition: null });
  });

  it('refuses top-ups and withdrawals (409, no provider call, no ledger row) while a terminate is in flight', async () => {
    const card = await kit.activeCard('goingaway@example.com', 5000);
    await h.sim.setFault('terminateCard', { latencyMs: 400 });
    // (`.then` sends the request now; a supertest request is sent when awaited.)
    const terminating = act(card.id, 'terminate').then((res) => res);
    // Wait until the terminate holds its claim.
    for (let i = 0; i < 200 && (await claimOf(card.id)).transition !== 'terminate'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect((await claimOf(card.id)).transition).toBe('terminate');
    const moneyCalls = async () =>
      (await h.sim.calls('topUpCard')).length + (await h.sim.calls('withdrawFromCard')).length;
    const before = await moneyCalls();
    const topUp = await h
      .http()
      .post(`/v1/cards/${card.id}/top-ups`)
      .set(auth())
      .set('Idempotency-Key', randomUUID())
      .send({ amount: 1000 });
    expect(topUp.status).toBe(409);
    expect(topUp.body).toMatchObject({ code: 'conflict', cardStatus: 'active', transitionInFlight: 'terminate' });
    const withdrawal = await h
      .http()
      .post(`/v1/cards/${card.id}/withdrawals`)
      .set(auth())
      .set('Idempotency-Key', randomUUID())
      .send({ amount: 1000 });
    expect(withdrawal.status).toBe(409);
    expect(await moneyCalls()).toBe(before);
    expect((await terminating).status).toBe(200);
    // Only the initial funding is on the ledger.
    expect((await kit.ledger(card.id)).map((r) => r.amount)).toEqual(['5000']);
  });

  it('takes a top-up while a freeze is in flight (by design: a freeze moves no money)', async () => {
    const card = await kit.activeCard('freezing@example.com', 5000);
    await h.sim.setFault('freezeCard', { latencyMs: 400 });
    const freezing = act(card.id, 'freeze').then((res) => res);
    for (let i = 0; i < 200 && (await claimOf(card.id)).transition !== 'freeze'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect((await claimOf(card.id)).transition).toBe('freeze');
    const topUp = await h
      .http()
      .post(`/v1/cards/${card.id}/top-ups`)
      .set(auth())
      .set('Idempotency-Key', randomUUID())
      .send({ amount: 1000 });
    expect(topUp.status).toBe(201);
    expect((await freezing).status).toBe(200);
    expect(await claimOf(card.id)).toMatchObject({ status: 'frozen', transition: null });
    expect((await kit.ledger(card.id)).map((r) => r.amount).sort()).toEqual(['1000', '5000']);
  });

  it('writes a card holder ahead of registercarduser: timeout → unknown (retry allowed), refusal → failed', async () => {
    const holderRow = async (customerId: string) =>
      (
        await h.db.query<{
          id: string;
          status: string;
          failure_reason: string | null;
          provider_user_id: string | null;
        }>('SELECT id, status, failure_reason, provider_user_id FROM card_holders WHERE customer_id = $1', [customerId])
      )[0];
    const customerId = await kit.customer('holdertimeout@example.com');
    await h.sim.setFault('registerCardUser', { timeout: true, times: 1 });
    const timedOut = await h.http().post('/v1/card-holders').set(auth()).send(kit.holderBody(customerId));
    expect(timedOut.status).toBe(504);
    const unknown = await holderRow(customerId);
    expect(unknown).toMatchObject({ status: 'unknown', provider_user_id: null });
    expect(unknown.failure_reason).toBeTruthy();
    expect((await kit.createCard(customerId, 0)).status).toBe(409); // no card for an unknown holder
    // Registration moves no money: registering again retries, on the same row.
    const retried = await h.http().post('/v1/card-holders').set(auth()).send(kit.holderBody(customerId));
    expect(retried.status).toBe(201);
    expect(retried.body).toMatchObject({ id: unknown.id, status: 'pending', failureReason: null });
    expect(retried.body.providerUserId).toEqual(expect.any(String));

    const refusedCustomer = await kit.customer('holderrefused@example.com');
    await h.sim.setFault('registerCardUser', { status: 400, times: 1 });
    const refused = await h.http().post('/v1/card-holders').set(auth()).send(kit.holderBody(refusedCustomer));
    expect(refused.status).toBe(422);
    expect(await holderRow(refusedCustomer)).toMatchObject({ status: 'failed', provider_user_id: null });
  });

  it('never calls the provider without a local row; concurrent registrations of one customer: one call, the rest 409', async () => {
    const customerId = await kit.customer('holderrace@example.com');
    await h.sim.admin('DELETE', '/calls');
    await h.sim.setFault('registerCardUser', { latencyMs: 300 });
    const registering = h
      .http()
      .post('/v1/card-holders')
      .set(auth())
      .send(kit.holderBody(customerId))
      .then((res) => res);
    // While the provider is being asked, the holder already exists here, `created`.
    let seen: string | undefined;
    for (let i = 0; i < 200 && !seen; i++) {
      if ((await h.sim.calls('registerCardUser')).length > 0) {
        const rows = await h.db.query<{ status: string }>('SELECT status FROM card_holders WHERE customer_id = $1', [
          customerId,
        ]);
        seen = rows[0]?.status;
      } else await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(seen).toBe('created');
    const others = await Promise.all(
      Array.from({ length: 5 }, () => h.http().post('/v1/card-holders').set(auth()).send(kit.holderBody(customerId))),
    );
    expect(others.map((r) => r.status)).toEqual([409, 409, 409, 409, 409]);
    expect(others[0].body.detail).toMatch(/created/);
    expect((await registering).status).toBe(201);
    expect((await h.sim.calls('registerCardUser')).length).toBe(1);
  });
});
