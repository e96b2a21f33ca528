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
import { cardKit } from './support/cards';
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
    // Payouts from 50,000.00 USD wait for approval (the other tests' payouts are far below).
    h = await startHarness({ env: { PAYOUT_APPROVAL_THRESHOLDS: 'USD:5000000' } });
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

  /** The events of one request (by its x-request-id), oldest first. */
  const eventsOfRequest = (res: { headers: Record<string, string> }) =>
    h.db.query<{
      action: string;
      actor_id: string | null;
      target_type: string;
      target_id: string | null;
      outcome: string;
      details: Record<string, unknown> | null;
    }>(
      'SELECT action, actor_id, target_type, target_id, outcome, details FROM audit_events WHERE request_id = $1 ORDER BY seq',
      [res.headers['x-request-id']],
    );

  it('writes one succeeded event per change, with actor and target, in the change’s transaction, for every kind of change', async () => {
    const idem = () => ({ 'Idempotency-Key': randomUUID() });
    const { a, b } = clients;
    const to = await customerWithBeneficiary(h, a.auth, 'audit-kinds@example.com');
    const expectEvent = async (
      res: { status: number; headers: Record<string, string> },
      status: number,
      event: { action: string; actorId: string; targetType: string; targetId: string; details?: unknown },
    ) => {
      expect(res.status).toBe(status);
      expect(await eventsOfRequest(res)).toEqual([
        {
          action: event.action,
          actor_id: event.actorId,
          target_type: event.targetType,
          target_id: event.targetId,
          outcome: 'succeeded',
          details: event.details ?? null,
        },
      ]);
    };

    const quote = await h
      .http()
      .post('/v1/swap-quotes')
      .set(a.auth)
      .send({ sourceCurrency: 'USD', targetCurrency: 'NGN', amount: 10_000 });
    await expectEvent(quote, 201, {
      action: 'swap_quote.create',
      actorId: a.id,
      targetType: 'swap_quote',
      targetId: quote.body.id,
    });

    const account = await h
      .http()
      .post('/v1/virtual-accounts')
      .set(a.auth)
      .send({ customerId: to.customerId, bank: 'safehaven', bvn: '22123456789', phoneNumber: '08012345678' });
    await expectEvent(account, 201, {
      action: 'virtual_account.create',
      actorId: a.id,
      targetType: 'virtual_account',
      targetId: account.body.id,
    });

    const kit = cardKit(h, () => a.auth);
    const cardCustomer = await kit.customer('audit-card@example.com');
    const holder = await h.http().post('/v1/card-holders').set(a.auth).send(kit.holderBody(cardCustomer));
    await expectEvent(holder, 201, {
      action: 'card_holder.create',
      actorId: a.id,
      targetType: 'card_holder',
      targetId: holder.body.id,
    });

    // A card with its initial funding: one event naming the card (not its funding's ledger row).
    const card = await kit.createCard(cardCustomer, 5000);
    const [funding] = await kit.ledger(card.body.id);
    await expectEvent(card, 201, {
      action: 'card.create',
      actorId: a.id,
      targetType: 'card',
      targetId: card.body.id,
      details: { fundingId: funding.id },
    });
    await kit.activate(card.body);
    const topUp = await h
      .http()
      .post(`/v1/cards/${card.body.id}/top-ups`)
      .set(b.auth)
      .set(idem())
      .send({ amount: 1000 });
    await expectEvent(topUp, 201, {
      action: 'card.top_up',
      actorId: b.id,
      targetType: 'card',
      targetId: card.body.id,
      details: { transactionId: topUp.body.id },
    });

    const collection = await h
      .http()
      .post('/v1/collections')
      .set(a.auth)
      .set(idem())
      .send({
        customerId: to.customerId,
        country: 'NG',
        currency: 'NGN',
        amount: 6_500_000,
        description: 'audited collection',
        payer: { type: 'wema', accountName: 'Ada Obi' },
      });
    await expectEvent(collection, 201, {
      action: 'collection.create',
      actorId: a.id,
      targetType: 'collection',
      targetId: collection.body.id,
      details: { transactionId: collection.body.transactionId },
    });

    await h.db.query("UPDATE transactions SET status = 'needs_review' WHERE id = $1", [collection.body.transactionId]);
    const resolved = await h
      .http()
      .post(`/v1/transactions/${collection.body.transactionId}/resolve`)
      .set(b.auth)
      .send({ status: 'failed', evidence: 'expired at the provider' });
    await expectEvent(resolved, 200, {
      action: 'transaction.resolve',
      actorId: b.id,
      targetType: 'transaction',
      targetId: collection.body.transactionId,
      details: { status: 'failed' },
    });

    // Maker-checker: A creates two payouts that wait for approval; B approves one, rejects the other.
    const held = async () => {
      const res = await h
        .http()
        .post('/v1/payouts')
        .set(a.auth)
        .set(idem())
        .send({ ...to, amount: 6_000_000, description: 'large payout' });
      expect([res.status, res.body.status]).toEqual([201, 'awaiting_approval']);
      return res.body.id as string;
    };
    const [toApprove, toReject] = [await held(), await held()];
    const approved = await h.http().post(`/v1/payouts/${toApprove}/approve`).set(b.auth).set(idem()).send({});
    await expectEvent(approved, 201, {
      action: 'payout.approve',
      actorId: b.id,
      targetType: 'payout',
      targetId: toApprove,
      details: { decision: 'approved', reason: null },
    });
    const rejected = await h
      .http()
      .post(`/v1/payouts/${toReject}/reject`)
      .set(b.auth)
      .set(idem())
      .send({ reason: 'no invoice' });
    await expectEvent(rejected, 201, {
      action: 'payout.reject',
      actorId: b.id,
      targetType: 'payout',
      targetId: toReject,
      details: { decision: 'rejected', reason: 'no invoice' },
    });

    const run = await h
      .http()
      .post('/v1/reconciliation-runs')
      .set(a.auth)
      .send({ from: '2026-01-01T00:00:00.000Z', to: '2026-01-02T00:00:00.000Z' });
    await expectEvent(run, 202, {
      action: 'reconciliation_run.create',
      actorId: a.id,
      targetType: 'reconciliation_run',
      targetId: run.body.id,
    });

    const sub = await h.http().post('/v1/webhook-subscriptions').set(a.auth).send({ url: 'http://127.0.0.1:9/retry' });
    expect(sub.status).toBe(201);
    const [message] = await h.db.query<{ id: string }>(
      `INSERT INTO outbox_messages (id, subscription_id, event_type, payload, status, attempts)
       VALUES (gen_random_uuid(), $1, 'card.created', '{}'::jsonb, 'failed', 8) RETURNING id`,
      [sub.body.id],
    );
    const retried = await h
      .http()
      .post(`/v1/webhook-subscriptions/${sub.body.id}/messages/${message.id}/retry`)
      .set(a.auth);
    await expectEvent(retried, 200, {
      action: 'webhook_subscription.retry_message',
      actorId: a.id,
      targetType: 'webhook_subscription',
      targetId: sub.body.id,
      details: { messageId: message.id },
    });
  }, 120_000);

  it('commits an event with its change or not at all: a change rolled back leaves no succeeded event, an event that cannot be written undoes the change', async () => {
    const to = await customerWithBeneficiary(h, clients.a.auth, 'audit-rollback@example.com');
    const count = async (table: string) =>
      Number((await h.db.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`))[0].n);
    const outcomes = async (res: { headers: Record<string, string> }) =>
      (await eventsOfRequest(res)).map((e) => [e.action, e.outcome]);
    await h.db.query(`CREATE FUNCTION audit_test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'refused by the test'; END $$`);
    // Fails the transaction at its COMMIT, after every statement (the event's insert included) ran.
    const failCommitOf = (table: string) =>
      h.db.query(`CREATE CONSTRAINT TRIGGER audit_test_fail AFTER INSERT OR UPDATE ON ${table}
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION audit_test_refuse()`);
    const dropFailCommit = (table: string) => h.db.query(`DROP TRIGGER audit_test_fail ON ${table}`);
    try {
      const accounts = await count('virtual_accounts');
      await failCommitOf('virtual_accounts');
      const account = await h
        .http()
        .post('/v1/virtual-accounts')
        .set(clients.a.auth)
        .send({ customerId: to.customerId, bank: 'safehaven', bvn: '22123456789', phoneNumber: '08012345678' });
      await dropFailCommit('virtual_accounts');
      expect(account.status).toBe(500);
      expect(await count('virtual_accounts')).toBe(accounts);
      expect(await outcomes(account)).toEqual([['virtual_account.create', 'failed']]);

      const payout = await h
        .http()
        .post('/v1/payouts')
        .set(clients.a.auth)
        .set('Idempotency-Key', randomUUID())
        .send({ ...to, amount: 150000, description: 'to review' });
      expect(payout.status).toBe(201);
      await h.db.query("UPDATE transactions SET status = 'needs_review' WHERE id = $1", [payout.body.id]);
      await failCommitOf('transaction_status_changes');
      const resolve = await h
        .http()
        .post(`/v1/transactions/${payout.body.id}/resolve`)
        .set(clients.b.auth)
        .send({ status: 'success', evidence: 'paid at the provider' });
      await dropFailCommit('transaction_status_changes');
      expect(resolve.status).toBe(500);
      const [after] = await h.db.query<{ status: string }>('SELECT status FROM transactions WHERE id = $1', [
        payout.body.id,
      ]);
      expect(after.status).toBe('needs_review');
      expect(await outcomes(resolve)).toEqual([['transaction.resolve', 'failed']]);

      // The other way round: the event's insert fails, so the quote it describes is not stored.
      const quotes = await count('swap_quotes');
      await h.db.query(`CREATE TRIGGER audit_test_no_event BEFORE INSERT ON audit_events FOR EACH ROW
        WHEN (NEW.action = 'swap_quote.create' AND NEW.outcome = 'succeeded') EXECUTE FUNCTION audit_test_refuse()`);
      const quote = await h
        .http()
        .post('/v1/swap-quotes')
        .set(clients.a.auth)
        .send({ sourceCurrency: 'USD', targetCurrency: 'NGN', amount: 10_000 });
      await h.db.query('DROP TRIGGER audit_test_no_event ON audit_events');
      expect(quote.status).toBe(500);
      expect(await count('swap_quotes')).toBe(quotes);
      expect(await outcomes(quote)).toEqual([['swap_quote.create', 'failed']]);
      expect(await verify()).toMatchObject({ ok: true });
    } finally {
      await h.db.query('DROP FUNCTION audit_test_refuse() CASCADE');
    }
  }, 60_000);

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
