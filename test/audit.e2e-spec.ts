import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { verifyChain } from '../src/audit/audit-verify';
import { chainInOrder } from '../src/audit/audit.repository';
import { createApiClient } from '../src/auth/api-clients.repository';
import { SCOPES } from '../src/auth/scopes';
import { PrismaService } from '../src/database/prisma.service';
import { customerWithBeneficiary } from './support/fixtures';
import { type Harness, startHarness } from './support/harness';

const run = promisify(execFile);

describe('audit trail (e2e, issue 14 item 3)', () => {
  let h: Harness;
  let prisma: PrismaService;
  const clients: Record<'a' | 'b' | 'reader' | 'noAudit', { id: string; auth: Record<string, string> }> = {} as never;

  const events = async (query = '', as = clients.reader.auth) => {
    const res = await h.http().get(`/v1/audit-events${query}`).set(as);
    expect(res.status).toBe(200);
    return res.body as { data: any[]; nextCursor: string | null };
  };
  const verify = () => verifyChain(chainInOrder(prisma, 3));

  beforeAll(async () => {
    h = await startHarness();
    prisma = h.app.get(PrismaService);
    const make = async (name: string, scopes = [...SCOPES]) => {
      const { client, key } = await createApiClient(prisma, name, scopes);
      return { id: client.id, auth: { Authorization: `Bearer ${key}` } };
    };
    clients.a = await make('client-a');
    clients.b = await make('client-b');
    clients.reader = await make('auditor', ['audit:read']);
    clients.noAudit = await make('no-audit', ['payouts:read']);
  });

  afterAll(async () => {
    await h?.close();
  });

  it('names the actor of a payout created by one key and confirmed by another, in the events and the status history', async () => {
    const to = await customerWithBeneficiary(h, clients.a.auth, 'audit-a@example.com');
    const created = await h
      .http()
      .post('/v1/payouts')
      .set(clients.a.auth)
      .set('Idempotency-Key', randomUUID())
      .send({ ...to, amount: 150000, description: 'audited payout' });
    expect(created.status).toBe(201);
    const confirmed = await h
      .http()
      .post(`/v1/payouts/${created.body.id}/confirm`)
      .set(clients.b.auth)
      .set('Idempotency-Key', randomUUID());
    expect(confirmed.status).toBe(201);

    const { data } = await events(`?targetId=${created.body.id}`);
    expect(data.map((e) => [e.action, e.actorId, e.actorName, e.outcome, e.targetType])).toEqual([
      ['payout.confirm', clients.b.id, 'client-b', 'succeeded', 'payout'],
      ['payout.create', clients.a.id, 'client-a', 'succeeded', 'payout'],
    ]);
    expect(data[0].requestId).toBe(confirmed.headers['x-request-id']);
    expect(data[1].requestId).toBe(created.headers['x-request-id']);

    const history = await h.db.query<{ to: string; actor_id: string | null }>(
      'SELECT "to", actor_id FROM transaction_status_changes WHERE transaction_id = $1 ORDER BY id',
      [created.body.id],
    );
    expect(history).toEqual([
      { to: 'created', actor_id: clients.a.id },
      { to: 'initiated', actor_id: clients.a.id },
      { to: 'pending', actor_id: clients.b.id },
    ]);
    const [row] = await h.db.query<{ created_by: string }>('SELECT created_by FROM transactions WHERE id = $1', [
      created.body.id,
    ]);
    expect(row.created_by).toBe(clients.a.id);
    const [customer] = await h.db.query<{ created_by: string }>('SELECT created_by FROM customers WHERE id = $1', [
      to.customerId,
    ]);
    expect(customer.created_by).toBe(clients.a.id);
    expect((await events(`?targetId=${to.customerId}`)).data.map((e) => e.action)).toEqual(['customer.create']);

    // A refused request leaves an event of its own: the second confirm is a 409.
    const again = await h
      .http()
      .post(`/v1/payouts/${created.body.id}/confirm`)
      .set(clients.b.auth)
      .set('Idempotency-Key', randomUUID());
    expect(again.status).toBe(409);
    const [refused] = (await events(`?targetId=${created.body.id}&limit=1`)).data;
    expect(refused).toMatchObject({
      action: 'payout.confirm',
      actorId: clients.b.id,
      outcome: 'refused',
      details: { code: 'invalid_state_transition', status: 409 },
      requestId: again.headers['x-request-id'],
    });
  });

  it('writes the event in the change’s own transaction: the row and its event commit together', async () => {
    const sub = await h
      .http()
      .post('/v1/webhook-subscriptions')
      .set(clients.a.auth)
      .send({ url: 'http://127.0.0.1:9/hooks' });
    expect(sub.status).toBe(201);
    const { data } = await events(`?targetId=${sub.body.id}`);
    expect(data).toMatchObject([
      { action: 'webhook_subscription.create', actorName: 'client-a', outcome: 'succeeded' },
    ]);
    const frozen = await h.http().post(`/v1/cards/${randomUUID()}/freeze`).set(clients.a.auth);
    expect(frozen.status).toBe(404);
    expect((await events('?action=card.freeze')).data[0]).toMatchObject({ outcome: 'refused', actorId: clients.a.id });
  });

  it('records key creation (and revocation) from the CLI with actor cli', async () => {
    const { data } = await events(`?action=api_key.create&targetId=${clients.b.id}`);
    expect(data).toMatchObject([{ actorId: null, actorName: 'cli', targetType: 'api_client', outcome: 'succeeded' }]);
  });

  it('GET /v1/audit-events: scope audit:read, filters, cursor pages', async () => {
    expect((await h.http().get('/v1/audit-events').set(clients.noAudit.auth)).status).toBe(403);
    expect((await h.http().get('/v1/audit-events')).status).toBe(401);

    const byB = await events(`?actorId=${clients.b.id}`);
    expect(byB.data.length).toBeGreaterThanOrEqual(2);
    expect(byB.data.every((e) => e.actorId === clients.b.id)).toBe(true);
    const creates = await events('?action=payout.create');
    expect(creates.data.map((e) => e.action)).toEqual(['payout.create']);

    const all = await events('?limit=100');
    const seqs = all.data.map((e) => Number(e.seq));
    expect(seqs).toEqual([...seqs].sort((x, y) => y - x));
    const paged: number[] = [];
    let cursor: string | null = null;
    do {
      const page = await events(`?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.data.length).toBeLessThanOrEqual(2);
      paged.push(...page.data.map((e) => Number(e.seq)));
      cursor = page.nextCursor;
    } while (cursor);
    expect(paged).toEqual(seqs);

    const middle = all.data[Math.floor(all.data.length / 2)];
    const before = await events(`?to=${encodeURIComponent(middle.at)}&limit=100`);
    expect(before.data.every((e) => e.at < middle.at)).toBe(true);
    const after = await events(`?from=${encodeURIComponent(middle.at)}&limit=100`);
    expect(after.data.every((e) => e.at >= middle.at)).toBe(true);
    expect(before.data.length + after.data.length).toBe(all.data.length);

    expect((await h.http().get('/v1/audit-events?cursor=bm9wZQ').set(clients.reader.auth)).status).toBe(400);
    expect((await h.http().get('/v1/audit-events?from=yesterday').set(clients.reader.auth)).status).toBe(400);
  });

  it('wraps the Idempotency-Key layer: a replay leaves no second event, a reused key with another body a refused one', async () => {
    const to = await customerWithBeneficiary(h, clients.a.auth, 'audit-replay@example.com');
    const key = randomUUID();
    const send = (amount: number) =>
      h
        .http()
        .post('/v1/payouts')
        .set(clients.a.auth)
        .set('Idempotency-Key', key)
        .send({ ...to, amount, description: 'replayed payout' });
    const first = await send(120000);
    expect(first.status).toBe(201);
    const replay = await send(120000);
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect((await events(`?targetId=${first.body.id}`)).data.map((e) => [e.action, e.outcome])).toEqual([
      ['payout.create', 'succeeded'],
    ]);
    const reused = await send(130000);
    expect(reused.status).toBe(409);
    const [refused] = (await events(`?action=payout.create&actorId=${clients.a.id}&limit=1`)).data;
    expect(refused).toMatchObject({
      outcome: 'refused',
      details: { code: 'idempotency_key_reused', status: 409 },
      requestId: reused.headers['x-request-id'],
    });
  });

  it('keeps the chain gapless under concurrent changes', async () => {
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        h
          .http()
          .post('/v1/customers')
          .set(i % 2 ? clients.a.auth : clients.b.auth)
          .send({
            email: `burst-${i}@example.com`,
            firstName: 'Burst',
            lastName: 'Obi',
            countryCode: '234',
            phone: '8012345678',
          }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(201));
    expect(await verify()).toMatchObject({ ok: true });
    const [{ n, max }] = await h.db.query<{ n: string; max: string }>(
      'SELECT count(*) AS n, max(seq) AS max FROM audit_events',
    );
    expect(n).toBe(max);
  });

  it('`npm run audit -- verify` passes, then names an edited row, then a deleted one (exit 1)', async () => {
    const cli = async () => {
      try {
        const { stdout } = await run(
          process.execPath,
          [path.join(__dirname, '../node_modules/tsx/dist/cli.mjs'), 'src/cli/audit.ts', 'verify'],
          { cwd: path.join(__dirname, '..'), env: { ...process.env, DATABASE_URL: h.db.url } },
        );
        return { code: 0, stdout };
      } catch (error) {
        const e = error as { code: number; stdout: string };
        return { code: e.code, stdout: e.stdout };
      }
    };
    const intact = await cli();
    expect(intact.code).toBe(0);
    expect(intact.stdout).toMatch(/Audit chain intact: \d+ events/);

    await h.db.query("UPDATE audit_events SET actor_name = 'mallory' WHERE seq = 3");
    expect(await verify()).toMatchObject({ ok: false, seq: 3n, problem: 'edited' });
    const edited = await cli();
    expect(edited.code).toBe(1);
    expect(edited.stdout).toMatch(/BROKEN at seq 3: .*edited/);

    await h.db.query("UPDATE audit_events SET actor_name = 'cli' WHERE seq = 3");
    expect(await verify()).toMatchObject({ ok: true });
    await h.db.query('DELETE FROM audit_events WHERE seq = 5');
    expect(await verify()).toMatchObject({ ok: false, seq: 6n, problem: 'missing_before' });
    const deleted = await cli();
    expect(deleted.code).toBe(1);
    expect(deleted.stdout).toMatch(/BROKEN at seq 6: .*deleted/);
  }, 180_000);
});
