import { randomUUID } from 'node:crypto';
import { createApiClient } from '../src/auth/api-clients.repository';
import { SCOPES } from '../src/auth/scopes';
import { PrismaService } from '../src/database/prisma.service';
import { ExpiryService } from '../src/reconciliation/expiry.service';
import { ReconciliationRepository } from '../src/reconciliation/reconciliation.repository';
import { ReconciliationService } from '../src/reconciliation/reconciliation.service';
import { PAYOUT_RATE_WINDOW_MS } from '../src/transactions/transaction.mapper';
import { type Harness, startHarness } from './support/harness';

/**
 * Payout approvals (maker-checker, issue 15 item 1): PAYOUT_APPROVAL_THRESHOLDS USD:500000 holds
 * payouts of 5,000.00 USD and more `awaiting_approval` with no provider call, until another API
 * client approves (initialize upstream, then the usual confirm) or rejects them, or their
 * PAYOUT_APPROVAL_TTL lapses.
 */
describe('payout approvals (e2e: gateway + simulator + PostgreSQL)', () => {
  let h: Harness;
  let maker: { id: string; key: string };
  let checker: { id: string; key: string };
  let customerId: string;
  let beneficiaryId: string;
  const as = (who: { key: string }) => ({ Authorization: `Bearer ${who.key}` });
  const newKey = () => `idem-${randomUUID()}`;

  const createPayout = (amount: number, who = maker) =>
    h
      .http()
      .post('/v1/payouts')
      .set(as(who))
      .set('Idempotency-Key', newKey())
      .send({ customerId, beneficiaryId, amount, description: 'Supplier invoice' });
  const decide = (id: string, decision: 'approve' | 'reject', who: { key: string }, key = newKey(), body = {}) =>
    h.http().post(`/v1/payouts/${id}/${decision}`).set(as(who)).set('Idempotency-Key', key).send(body);
  const initializeCalls = async () => (await h.sim.calls('initializePayout')).length;
  const history = (id: string) =>
    h.db.query<{ from: string | null; to: string; source: string; actor_id: string | null; payload: any }>(
      'SELECT "from", "to", source, actor_id, payload FROM transaction_status_changes WHERE transaction_id = $1 ORDER BY id',
      [id],
    );
  const events = async (id: string) =>
    (
      await h.db.query<{ event_type: string; payload: any }>(
        "SELECT event_type, payload FROM outbox_messages WHERE payload->'data'->>'id' = $1 ORDER BY created_at, event_type",
        [id],
      )
    ).map((m) => ({ type: m.event_type, actorId: m.payload.data.actorId, status: m.payload.data.status }));

  beforeAll(async () => {
    h = await startHarness({
      listen: true,
      env: { PAYOUT_APPROVAL_THRESHOLDS: 'USD:500000,NGN:200000000', PAYOUT_APPROVAL_TTL: '1h' },
    });
    const prisma = h.app.get(PrismaService);
    const makeClient = async (name: string) => {
      const { client, key } = await createApiClient(prisma, name, [...SCOPES]);
      return { id: client.id, key };
    };
    maker = await makeClient('maker');
    checker = await makeClient('checker');
    const customer = await h
      .http()
      .post('/v1/customers')
      .set(as(maker))
      .send({ email: 'maker@example.com', firstName: 'Jane', lastName: 'Doe', phone: '712345678', countryCode: '254' });
    expect(customer.status).toBe(201);
    customerId = customer.body.id;
    const beneficiary = await h
      .http()
      .post('/v1/beneficiaries')
      .set(as(maker))
      .send({
        customerId,
        country: 'KE',
        currency: 'KES',
        destination: { type: 'MOBILEMONEY', network: 'MPESA', accountNumber: '254712345678' },
      });
    expect(beneficiary.status).toBe(201);
    beneficiaryId = beneficiary.body.id;
    const subscription = await h
      .http()
      .post('/v1/webhook-subscriptions')
      .set(as(maker))
      .send({
        url: 'http://127.0.0.1:9/hooks',
        eventTypes: ['payout.approval_required', 'payout.approved', 'payout.rejected', 'payout.expired'],
      });
    expect(subscription.status).toBe(201);
  });
  afterAll(() => h.close());

  it('initializes a payout below the threshold at once, recording its creator', async () => {
    const before = await initializeCalls();
    const res = await createPayout(499999);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: 'initiated', providerId: expect.any(String) });
    expect(await initializeCalls()).toBe(before + 1);
    const [row] = await h.db.query('SELECT created_by FROM transactions WHERE id = $1', [res.body.id]);
    expect(row.created_by).toBe(maker.id);
  });

  it('holds a payout at the threshold awaiting approval: no provider call, approval_required announced', async () => {
    const before = await initializeCalls();
    const res = await createPayout(500000);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: 'awaiting_approval', providerId: null, amount: 500000, fee: 0 });
    expect(await initializeCalls()).toBe(before);
    expect(await history(res.body.id)).toEqual([
      expect.objectContaining({ from: null, to: 'awaiting_approval', source: 'api', actor_id: maker.id }),
    ]);
    expect(await events(res.body.id)).toEqual([
      { type: 'payout.approval_required', actorId: maker.id, status: 'awaiting_approval' },
    ]);
    const [row] = await h.db.query('SELECT created_by, status FROM transactions WHERE id = $1', [res.body.id]);
    expect(row).toEqual({ created_by: maker.id, status: 'awaiting_approval' });
  });

  it('refuses approval and rejection by the client that created the payout (403 approver_is_creator)', async () => {
    const payout = (await createPayout(600000)).body;
    for (const decision of ['approve', 'reject'] as const) {
      const res = await decide(payout.id, decision, maker);
      expect(res.status).toBe(403);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(res.body.code).toBe('approver_is_creator');
    }
    expect((await h.http().get(`/v1/payouts/${payout.id}`).set(as(maker))).body.status).toBe('awaiting_approval');
  });

  it('refuses a key without payouts:approve (403 forbidden)', async () => {
    const payout = (await createPayout(600000)).body;
    const { key } = await createApiClient(
      h.app.get(PrismaService),
      'writer',
      SCOPES.filter((s) => s !== 'payouts:approve'),
    );
    const res = await decide(payout.id, 'approve', { key });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('forbidden');
  });

  it('requires an Idempotency-Key on approve', async () => {
    const payout = (await createPayout(600000)).body;
    const res = await h.http().post(`/v1/payouts/${payout.id}/approve`).set(as(checker)).send();
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('idempotency_key_missing');
  });

  it('approved by another client: initialized upstream, confirmed, paid (success); a replay changes nothing', async () => {
    const payout = (await createPayout(750000)).body;
    const before = await initializeCalls();
    const key = newKey();
    const approved = await decide(payout.id, 'approve', checker, key, { reason: 'invoice checked' });
    expect(approved.status).toBe(201);
    expect(approved.body).toMatchObject({ id: payout.id, status: 'initiated', providerId: expect.any(String) });
    expect(await initializeCalls()).toBe(before + 1);
    const call = (await h.sim.calls('initializePayout')).at(-1);
    expect(call?.body).toMatchObject({ amount: 750000, reference: payout.reference });

    const replay = await decide(payout.id, 'approve', checker, key, { reason: 'invoice checked' });
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(approved.body);
    expect(await initializeCalls()).toBe(before + 1);

    const again = await decide(payout.id, 'approve', checker);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('invalid_state_transition');

    const confirmed = await h
      .http()
      .post(`/v1/payouts/${payout.id}/confirm`)
      .set(as(maker))
      .set('Idempotency-Key', newKey())
      .send();
    expect(confirmed.status).toBe(201);
    expect(confirmed.body.status).toBe('pending');
    const complete = await h.sim.admin('POST', `/payouts/${approved.body.providerId}/complete`, { status: 'success' });
    expect(complete.status).toBe(200);
    expect((await h.http().get(`/v1/payouts/${payout.id}`).set(as(maker))).body.status).toBe('success');

    const moves = await history(payout.id);
    expect(moves.map((m) => [m.from, m.to, m.source])).toEqual([
      [null, 'awaiting_approval', 'api'],
      ['awaiting_approval', 'created', 'api'],
      ['created', 'initiated', 'api'],
      ['initiated', 'pending', 'api'],
      ['pending', 'success', 'webhook'],
    ]);
    expect(moves[1]).toMatchObject({
      actor_id: checker.id,
      payload: { decision: 'approved', reason: 'invoice checked' },
    });
    expect(await events(payout.id)).toEqual([
      { type: 'payout.approval_required', actorId: maker.id, status: 'awaiting_approval' },
      { type: 'payout.approved', actorId: checker.id, status: 'created' },
    ]);
  });

  it('rejected by another client: rejected, never sent to the provider, and no longer approvable', async () => {
    const payout = (await createPayout(900000)).body;
    const before = await initializeCalls();
    const res = await decide(payout.id, 'reject', checker, newKey(), { reason: 'duplicate invoice' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      status: 'rejected',
      providerId: null,
      failureReason: 'duplicate invoice',
      completedAt: expect.any(String),
    });
    const later = await decide(payout.id, 'approve', checker);
    expect(later.status).toBe(409);
    expect(later.body).toMatchObject({ code: 'invalid_state_transition', from: 'rejected' });
    expect(await initializeCalls()).toBe(before);
    const moves = await history(payout.id);
    expect(moves.at(-1)).toMatchObject({
      from: 'awaiting_approval',
      to: 'rejected',
      source: 'api',
      actor_id: checker.id,
      payload: { decision: 'rejected', reason: 'duplicate invoice' },
    });
    expect((await events(payout.id)).map((e) => e.type)).toEqual(['payout.approval_required', 'payout.rejected']);
  });

  it('expires a payout whose approval did not come within PAYOUT_APPROVAL_TTL (expiry job), no provider call', async () => {
    const payout = (await createPayout(800000)).body;
    const fresh = (await createPayout(800000)).body;
    const before = await initializeCalls();
    const expiry = h.app.get(ExpiryService);
    const report = await expiry.run(new Date(Date.now() + 61 * 60_000));
    expect(report.approvalsExpired).toBeGreaterThanOrEqual(2);
    for (const id of [payout.id, fresh.id]) {
      const res = await h.http().get(`/v1/payouts/${id}`).set(as(maker));
      expect(res.body.status).toBe('expired');
      expect((await history(id)).at(-1)).toMatchObject({
        from: 'awaiting_approval',
        to: 'expired',
        source: 'reconciliation',
      });
    }
    expect((await events(payout.id)).map((e) => e.type)).toEqual(['payout.approval_required', 'payout.expired']);
    const late = await decide(payout.id, 'approve', checker);
    expect(late.status).toBe(409);
    expect(late.body.from).toBe('expired');
    expect(await initializeCalls()).toBe(before);
    // Within the TTL the job leaves them alone.
    const waiting = (await createPayout(800000)).body;
    await expiry.run();
    expect((await h.http().get(`/v1/payouts/${waiting.id}`).set(as(maker))).body.status).toBe('awaiting_approval');
  });

  it('expires a lapsed payout when an approval arrives before the job ran (409, expired)', async () => {
    const payout = (await createPayout(800000)).body;
    await h.db.query("UPDATE transactions SET created_at = now() - interval '2 hours' WHERE id = $1", [payout.id]);
    const res = await decide(payout.id, 'approve', checker);
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 'invalid_state_transition', from: 'expired' });
    expect((await h.http().get(`/v1/payouts/${payout.id}`).set(as(maker))).body.status).toBe('expired');
  });

  describe('racing decisions (one decision wins; the provider hears of it at most once)', () => {
    // The provider answers initialize slowly, so that every approval overlaps the winner's call.
    beforeEach(() => h.sim.setFault('initializePayout', { latencyMs: 400 }));
    afterEach(async () => {
      expect((await h.sim.admin('DELETE', '/faults')).status).toBeLessThan(300);
    });
    const statusOf = async (id: string) =>
      (
        await h.db.query<{ status: string; provider_id: string | null }>(
          'SELECT status, provider_id FROM transactions WHERE id = $1',
          [id],
        )
      )[0];
    const decisions = (id: string) =>
      h.db.query<{ to: string }>(
        `SELECT "to" FROM transaction_status_changes WHERE transaction_id = $1 AND "from" = 'awaiting_approval'`,
        [id],
      );
    const auditEvents = (id: string) =>
      h.db.query<{ action: string }>(
        "SELECT action FROM audit_events WHERE target_id = $1 AND outcome = 'succeeded' ORDER BY id",
        [id],
      );

    it('20 parallel approvals (distinct Idempotency-Keys): one 201, 19 × 409, one initialize sent', async () => {
      const payout = (await createPayout(700000)).body;
      const before = await initializeCalls();
      const answers = await Promise.all(Array.from({ length: 20 }, () => decide(payout.id, 'approve', checker)));
      const statuses = answers.map((res) => res.status).sort();
      expect(statuses).toEqual([201, ...Array<number>(19).fill(409)]);
      for (const res of answers.filter((r) => r.status === 409)) {
        expect(res.body).toMatchObject({ code: 'invalid_state_transition' });
      }
      const won = answers.find((res) => res.status === 201);
      expect(won?.body).toMatchObject({ status: 'initiated', providerId: expect.any(String) });
      const calls = (await h.sim.calls('initializePayout')).slice(before);
      expect(calls).toHaveLength(1);
      expect(calls[0].body).toMatchObject({ reference: payout.reference });
      expect(await statusOf(payout.id)).toEqual({ status: 'initiated', provider_id: won?.body.providerId });
      expect(await decisions(payout.id)).toEqual([{ to: 'created' }]);
      expect((await events(payout.id)).map((e) => e.type)).toEqual(['payout.approval_required', 'payout.approved']);
      expect((await auditEvents(payout.id)).map((e) => e.action)).toEqual(['payout.create', 'payout.approve']);
    });

    it('approve against reject in parallel: exactly one decision, the provider called only if approve won', async () => {
      for (let round = 0; round < 3; round++) {
        const payout = (await createPayout(710000)).body;
        const before = await initializeCalls();
        const [approve, reject] = await Promise.all([
          decide(payout.id, 'approve', checker),
          decide(payout.id, 'reject', checker, newKey(), { reason: 'second look' }),
        ]);
        expect([approve.status, reject.status].sort()).toEqual([201, 409]);
        const winner = approve.status === 201 ? 'approve' : 'reject';
        const loser = winner === 'approve' ? reject : approve;
        expect(loser.body.code).toBe('invalid_state_transition');
        expect((await statusOf(payout.id)).status).toBe(winner === 'approve' ? 'initiated' : 'rejected');
        expect(await initializeCalls()).toBe(before + (winner === 'approve' ? 1 : 0));
        expect(await decisions(payout.id)).toEqual([{ to: winner === 'approve' ? 'created' : 'rejected' }]);
        expect((await auditEvents(payout.id)).map((e) => e.action)).toEqual(['payout.create', `payout.${winner}`]);
      }
    });

    it('the expiry job that read a payout as lapsed leaves it alone once an approval won it', async () => {
      const payout = (await createPayout(720000)).body;
      const before = await initializeCalls();
      const repository = h.app.get(ReconciliationRepository);
      const read = repository.lapsedApprovalIds.bind(repository);
      let approved: Awaited<ReturnType<typeof decide>> | undefined;
      let readIds: string[] = [];
      // The job reads the lapsed payouts; the approval is decided (and sent upstream) before it moves them.
      const spy = jest.spyOn(repository, 'lapsedApprovalIds').mockImplementation(async (createdBefore, limit) => {
        readIds = await read(createdBefore, limit);
        approved = await decide(payout.id, 'approve', checker);
        return readIds;
      });
      try {
        const report = await h.app.get(ExpiryService).run(new Date(Date.now() + 61 * 60_000));
        // Every payout it read is expired (those left waiting by the tests above) but the approved one.
        expect(readIds).toContain(payout.id);
        expect(report.approvalsExpired).toBe(readIds.length - 1);
      } finally {
        spy.mockRestore();
      }
      expect(approved?.status).toBe(201);
      expect(await statusOf(payout.id)).toEqual({ status: 'initiated', provider_id: approved?.body.providerId });
      expect(await initializeCalls()).toBe(before + 1);
      expect((await history(payout.id)).map((m) => m.to)).toEqual(['awaiting_approval', 'created', 'initiated']);
      expect((await events(payout.id)).map((e) => e.type)).toEqual(['payout.approval_required', 'payout.approved']);
    });

    it('approve against the expiry job in parallel: either approved and sent, or expired and never sent', async () => {
      const payout = (await createPayout(730000)).body;
      const before = await initializeCalls();
      const [approve] = await Promise.all([
        decide(payout.id, 'approve', checker),
        h.app.get(ExpiryService).run(new Date(Date.now() + 61 * 60_000)),
      ]);
      const { status } = await statusOf(payout.id);
      if (approve.status === 201) {
        expect(status).toBe('initiated');
        expect(await initializeCalls()).toBe(before + 1);
      } else {
        expect(approve.status).toBe(409);
        expect(status).toBe('expired');
        expect(await initializeCalls()).toBe(before);
      }
      expect(await decisions(payout.id)).toHaveLength(1);
    });
  });

  it('applies the threshold of the payout currency only (NGN below its own threshold goes through)', async () => {
    const before = await initializeCalls();
    const res = await h
      .http()
      .post('/v1/payouts')
      .set(as(maker))
      .set('Idempotency-Key', newKey())
      .send({ customerId, beneficiaryId, amount: 1_000_000, sourceCurrency: 'NGN', description: 'Naira payout' });
    expect(res.status).toBe(201);
    expect(res.body.status).toBe('initiated');
    expect(await initializeCalls()).toBe(before + 1);
  });

  describe('an approved payout counts its provider windows from its approval, not its creation', () => {
    /** A payout held 30 minutes ago (within PAYOUT_APPROVAL_TTL 1h), and the instant it is approved. */
    const heldLongAgo = async () => {
      const payout = (await createPayout(740000)).body;
      await h.db.query("UPDATE transactions SET created_at = now() - interval '30 minutes' WHERE id = $1", [payout.id]);
      return payout;
    };
    const approvedAt = async (id: string) => {
      const [entry] = await h.db.query<{ at: Date }>(
        `SELECT at FROM transaction_status_changes WHERE transaction_id = $1 AND "to" = 'created'`,
        [id],
      );
      return entry.at;
    };

    it('quoteExpiresAt: the approval (when initialize is sent) + the rate window', async () => {
      const payout = await heldLongAgo();
      const res = await decide(payout.id, 'approve', checker);
      expect(res.status).toBe(201);
      const at = await approvedAt(payout.id);
      expect(res.body.quoteExpiresAt).toBe(new Date(at.getTime() + PAYOUT_RATE_WINDOW_MS).toISOString());
      const read = await h.http().get(`/v1/payouts/${payout.id}`).set(as(maker));
      expect(read.body.quoteExpiresAt).toBe(res.body.quoteExpiresAt);
    });

    it('an initialize left unanswered settles by the approval + SETTLEMENT_DEADLINE, and reconciliation waits for it', async () => {
      const payout = await heldLongAgo();
      await h.sim.setFault('initializePayout', { timeout: true, times: 1 });
      const res = await decide(payout.id, 'approve', checker);
      expect(res.status).toBe(504);
      const at = await approvedAt(payout.id);
      const deadlineMs = 10 * 60_000; // SETTLEMENT_DEADLINE's default, 10 minutes
      expect(res.body).toMatchObject({
        transactionId: payout.id,
        transactionStatus: 'unknown',
        settlesBy: new Date(at.getTime() + deadlineMs).toISOString(),
      });
      // Six minutes after the approval (36 after the creation): past the lease, not yet past the deadline.
      await h.app.get(ReconciliationService).run({ now: new Date(at.getTime() + 6 * 60_000) });
      expect((await h.http().get(`/v1/payouts/${payout.id}`).set(as(maker))).body.status).toBe('unknown');
    });
  });
});
