import { randomUUID } from 'node:crypto';
import { sealPendingEvents } from '../src/audit/audit.repository';
import { createApiClient } from '../src/auth/api-clients.repository';
import { SCOPES } from '../src/auth/scopes';
import { PrismaService } from '../src/database/prisma.service';
import { customerWithBeneficiary } from './support/fixtures';
import { type Harness, startHarness } from './support/harness';

/**
 * A maker-checker decision can be read back (finance review, item 6): the status history of
 * GET /v1/transactions/{id} carries the decision and its reason, and the decision's audit event
 * (`payout.approve`, `payout.reject`) carries them as its `details`.
 */
describe('payout decisions read back (e2e: status history and audit trail)', () => {
  let h: Harness;
  let prisma: PrismaService;
  let maker: Record<string, string>;
  let checker: Record<string, string>;
  let checkerId: string;
  let reader: Record<string, string>;
  let parties: { customerId: string; beneficiaryId: string };

  const hold = async (amount: number) => {
    const res = await h
      .http()
      .post('/v1/payouts')
      .set(maker)
      .set('Idempotency-Key', randomUUID())
      .send({ ...parties, amount, description: 'Held for a decision' });
    expect(res.body.status).toBe('awaiting_approval');
    return res.body.id as string;
  };
  const decide = (id: string, decision: 'approve' | 'reject', body: object) =>
    h.http().post(`/v1/payouts/${id}/${decision}`).set(checker).set('Idempotency-Key', randomUUID()).send(body);
  const auditDetails = async (id: string, action: string) => {
    await sealPendingEvents(prisma, { wait: true });
    const res = await h.http().get(`/v1/audit-events?targetId=${id}&action=${action}`).set(reader);
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(1);
    return res.body.data[0] as { actorId: string; outcome: string; details: unknown };
  };

  beforeAll(async () => {
    h = await startHarness({ env: { PAYOUT_APPROVAL_THRESHOLDS: 'USD:500000' } });
    prisma = h.app.get(PrismaService);
    const make = async (name: string, scopes = [...SCOPES]) => {
      const { client, key } = await createApiClient(prisma, name, scopes);
      return { id: client.id, auth: { Authorization: `Bearer ${key}` } };
    };
    maker = (await make('maker')).auth;
    const theChecker = await make('checker');
    checker = theChecker.auth;
    checkerId = theChecker.id;
    reader = (await make('reader', ['transactions:read', 'audit:read'])).auth;
    parties = await customerWithBeneficiary(h, maker, 'decisions@example.com');
  });

  afterAll(async () => {
    await h?.close();
  });

  it('an approval: its decision and reason in the status history and in the audit event', async () => {
    const id = await hold(600_000);
    const approved = await decide(id, 'approve', { reason: 'invoice 4411 checked' });
    expect(approved.body.status).toBe('initiated');

    const detail = await h.http().get(`/v1/transactions/${id}`).set(reader);
    expect(detail.status).toBe(200);
    const decision = detail.body.statusHistory.find(
      (c: { from: string | null; to: string }) => c.from === 'awaiting_approval',
    );
    expect(decision).toMatchObject({
      to: 'created',
      source: 'api',
      actorId: checkerId,
      decision: 'approved',
      reason: 'invoice 4411 checked',
    });
    // Moves that are no decision say so (null), they do not leave the fields out.
    expect(detail.body.statusHistory[0]).toMatchObject({ from: null, decision: null, reason: null });

    expect(await auditDetails(id, 'payout.approve')).toMatchObject({
      actorId: checkerId,
      outcome: 'succeeded',
      details: { decision: 'approved', reason: 'invoice 4411 checked' },
    });
  });

  it('a rejection: its decision and reason read back; no reason given is null', async () => {
    const id = await hold(700_000);
    expect((await decide(id, 'reject', { reason: 'duplicate of invoice 4411' })).body.status).toBe('rejected');
    const detail = await h.http().get(`/v1/transactions/${id}`).set(reader);
    expect(detail.body.statusHistory.at(-1)).toMatchObject({
      from: 'awaiting_approval',
      to: 'rejected',
      actorId: checkerId,
      decision: 'rejected',
      reason: 'duplicate of invoice 4411',
    });
    expect(await auditDetails(id, 'payout.reject')).toMatchObject({
      details: { decision: 'rejected', reason: 'duplicate of invoice 4411' },
    });

    const silent = await hold(800_000);
    expect((await decide(silent, 'approve', {})).body.status).toBe('initiated');
    const bare = await h.http().get(`/v1/transactions/${silent}`).set(reader);
    expect(bare.body.statusHistory.find((c: { from: string | null }) => c.from === 'awaiting_approval')).toMatchObject({
      decision: 'approved',
      reason: null,
    });
    expect((await auditDetails(silent, 'payout.approve')).details).toEqual({ decision: 'approved', reason: null });
  });
});
