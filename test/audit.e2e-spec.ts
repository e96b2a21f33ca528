import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { AuditSealerService } from '../src/audit/audit-sealer.service';
import { verifyChain } from '../src/audit/audit-verify';
import { chainInOrder, insertAuditEvent, sealPendingEvents } from '../src/audit/audit.repository';
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
  const seal = async () => (await sealPendingEvents(prisma, { wait: true })).sealed;
  const unsealed = async () =>
    Number((await h.db.query<{ n: string }>('SELECT count(*) AS n FROM audit_events WHERE seq IS NULL'))[0].n);
  /** `promise`, or a failure naming `what` if it has not settled within `ms`. */
  const within = <T>(ms: number, what: string, promise: Promise<T>): Promise<T> => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: still waiting after ${ms} ms`)), ms);
    });
    return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
  };

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

  it('writes events unchained (no lock): a change commits while another change’s event is uncommitted; sealing chains both, by commit', async () => {
    const to = await customerWithBeneficiary(h, clients.a.auth, 'audit-hold@example.com');
    await seal();
    // A change's transaction that has written its event and stays open (as a slow money movement would).
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let inserted!: () => void;
    const insertedOnce = new Promise<void>((resolve) => (inserted = resolve));
    const held = prisma.$transaction(
      async (tx) => {
        const id = await insertAuditEvent(tx, {
          actorId: null,
          actorName: 'held',
          action: 'payout.create',
          targetType: 'payout',
          targetId: 'held-open',
          requestId: null,
          outcome: 'succeeded',
        });
        inserted();
        await gate;
        return id;
      },
      { timeout: 60_000 },
    );
    try {
      await insertedOnce;
      // Another money movement records its ledger row and its event, and commits, meanwhile.
      const created = await within(
        15_000,
        'POST /v1/payouts while another event is uncommitted',
        h
          .http()
          .post('/v1/payouts')
          .set(clients.a.auth)
          .set('Idempotency-Key', randomUUID())
          .send({ ...to, amount: 120000, description: 'not serialised' })
          .then((r) => r),
      );
      expect(created.status).toBe(201);
      // The sealer does not wait for the open transaction either: it seals what is committed.
      expect(await within(15_000, 'sealing while a transaction is open', seal())).toBeGreaterThanOrEqual(1);
      const [payoutEvent] = await h.db.query<{ id: string; seq: string | null }>(
        "SELECT id, seq FROM audit_events WHERE target_id = $1 AND action = 'payout.create'",
        [created.body.id],
      );
      expect(payoutEvent.seq).not.toBeNull();
      expect(await h.db.query("SELECT 1 FROM audit_events WHERE target_id = 'held-open'")).toEqual([]);
    } finally {
      release();
    }
    const heldId = await held;
    // Committed last, it is sealed next: a later seq than the payout's event although inserted first.
    expect(await seal()).toBe(1);
    const rows = await h.db.query<{ id: string; seq: string; target_id: string }>(
      "SELECT id, seq, target_id FROM audit_events WHERE target_id = 'held-open' OR action = 'payout.create' ORDER BY seq DESC LIMIT 2",
    );
    expect(rows[0]).toMatchObject({ id: heldId.toString(), target_id: 'held-open' });
    expect(BigInt(rows[0].id)).toBeLessThan(BigInt(rows[1].id));
    expect(BigInt(rows[0].seq)).toBe(BigInt(rows[1].seq) + 1n);
    expect(await verify()).toMatchObject({ ok: true });
  }, 60_000);

  it('only one sealer works at a time: a periodic pass skips while another holds the lock, an on-demand seal waits', async () => {
    const sealer = h.app.get(AuditSealerService);
    await h
      .http()
      .post('/v1/webhook-subscriptions')
      .set(clients.a.auth)
      .send({ url: 'http://127.0.0.1:9/sealer' })
      .expect(201);
    expect(await unsealed()).toBe(1);
    const other = new Client({ connectionString: h.db.url });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query("SELECT pg_advisory_xact_lock(x'6175646974'::bigint)");
      expect(await sealer.pass()).toEqual({ sealed: 0, locked: false });
      let waited = false;
      const onDemand = sealer.sealNow().then((n) => {
        waited = true;
        return n;
      });
      await new Promise((r) => setTimeout(r, 300));
      expect(waited).toBe(false);
      await other.query('COMMIT');
      expect(await onDemand).toBe(1);
    } finally {
      await other.end();
    }
    expect(await sealer.pass()).toEqual({ sealed: 0, locked: true });
    expect(await unsealed()).toBe(0);
  });

  it('seals a gapless, verified chain after many concurrent money movements, with sealers running during the burst', async () => {
    const to = await customerWithBeneficiary(h, clients.b.auth, 'audit-burst@example.com');
    await seal();
    const [{ max: before }] = await h.db.query<{ max: string }>('SELECT max(seq) AS max FROM audit_events');
    let bursting = true;
    const sealers = Array.from({ length: 3 }, async () => {
      let n = 0;
      while (bursting) {
        n += (await sealPendingEvents(prisma, { wait: false, batch: 3 })).sealed;
        await new Promise((r) => setTimeout(r, 5));
      }
      return n;
    });
    const results = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        h
          .http()
          .post('/v1/payouts')
          .set(i % 2 ? clients.a.auth : clients.b.auth)
          .set('Idempotency-Key', randomUUID())
          .send({ ...to, amount: 100000 + i, description: `burst ${i}` }),
      ),
    );
    bursting = false;
    const sealedDuring = (await Promise.all(sealers)).reduce((a, b) => a + b, 0);
    expect(results.map((r) => r.status)).toEqual(Array(24).fill(201));
    const sealedAfter = await seal();
    expect(sealedDuring + sealedAfter).toBeGreaterThanOrEqual(24);
    expect(await unsealed()).toBe(0);
    expect(await verify()).toMatchObject({ ok: true });
    const [{ n, max, distinct }] = await h.db.query<{ n: string; max: string; distinct: string }>(
      'SELECT count(*) AS n, max(seq) AS max, count(DISTINCT seq) AS distinct FROM audit_events',
    );
    expect(n).toBe(max);
    expect(distinct).toBe(n);
    expect(BigInt(max) - BigInt(before)).toBe(BigInt(sealedDuring + sealedAfter));
    // Each request's event, once.
    const ids = results.map((r) => r.body.id as string);
    const events = await h.db.query<{ target_id: string }>(
      "SELECT target_id FROM audit_events WHERE action = 'payout.create' AND target_id = ANY($1)",
      [ids],
    );
    expect(events.map((e) => e.target_id).sort()).toEqual([...ids].sort());
  }, 120_000);

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
    // verify seals what is pending first, and says how many.
    await h
      .http()
      .post('/v1/webhook-subscriptions')
      .set(clients.a.auth)
      .send({ url: 'http://127.0.0.1:9/cli' })
      .expect(201);
    expect(await unsealed()).toBe(1);
    const intact = await cli();
    expect(intact.code).toBe(0);
    expect(intact.stdout).toMatch(/Sealed 1 pending event\.\nAudit chain intact: \d+ events/);
    expect(await unsealed()).toBe(0);

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

    // An event sealed after the damage is chained on, and the damage is still reported.
    await h.http().post(`/v1/cards/${randomUUID()}/freeze`).set(clients.a.auth).expect(404);
    const later = await cli();
    expect(later.code).toBe(1);
    expect(later.stdout).toMatch(/Sealed 1 pending event\.\nAudit chain BROKEN at seq 6: /);
  }, 180_000);
});
