import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { parse } from 'csv-parse/sync';
import { formatMajor } from '../src/common/money';
import { ReadPool } from '../src/database/read-pool';
import { confirmedPayout, customerWithBeneficiary } from './support/fixtures';
import { type Harness, startHarness } from './support/harness';

/** A ledger row the test wrote itself, as the model the API answers are checked against. */
interface Seed {
  id: string;
  kind: string;
  direction: string;
  status: string;
  amount: bigint;
  fee: bigint;
  currency: string;
  counterAmount: bigint | null;
  counterCurrency: string | null;
  customerId: string | null;
  beneficiaryId: string | null;
  cardId: string | null;
  reference: string;
  description: string | null;
  createdAt: Date;
}

const KINDS = ['collection', 'payout', 'swap', 'card_topup', 'card_withdrawal', 'card_spend'] as const;
const DIRECTION: Record<string, string> = {
  collection: 'credit',
  payout: 'debit',
  swap: 'debit',
  card_topup: 'debit',
  card_withdrawal: 'credit',
  card_spend: 'debit',
};
const STATUSES = ['success', 'pending', 'failed', 'processing', 'unknown', 'success', 'expired'];
const CURRENCIES = ['USD', 'NGN', 'KES', 'UGX', 'BTC'];
/** Text a CSV writer must quote, and text a spreadsheet would run as a formula. */
const TRICKY = ['Invoice 7, "final"', 'line one\r\nline two', '=HYPERLINK("http://x")', 'plain', null];
const BASE = Date.parse('2026-10-01T00:00:00.000Z');
const MINUTE = 60_000;

/** Newest first on (createdAt, id), as PostgreSQL orders uuids (byte order = lower-case hex order). */
const byKeyDesc = (a: Seed, b: Seed) =>
  b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

describe('finance transactions API (e2e)', () => {
  let h: Harness;
  let finance: Record<string, string>;
  let customerA: string;
  let customerB: string;
  let beneficiaryA: string;
  let cardA: string;
  const seeds: Seed[] = [];

  const get = (path: string, auth: Record<string, string> = finance) => h.http().get(path).set(auth);

  async function insertSeed(seed: Seed): Promise<void> {
    await h.db.query(
      `INSERT INTO transactions (id, kind, direction, status, amount, fee, currency, counter_amount, counter_currency,
         exchange_rate, customer_id, beneficiary_id, card_id, reference, description, created_at, updated_at, completed_at)
       VALUES ($1, $2::"TransactionKind", $3::"TransactionDirection", $4::"TransactionStatus", $5, $6, $7, $8, $9,
         $10, $11, $12, $13, $14, $15, $16, $16, $17)`,
      [
        seed.id,
        seed.kind,
        seed.direction,
        seed.status,
        seed.amount.toString(),
        seed.fee.toString(),
        seed.currency,
        seed.counterAmount?.toString() ?? null,
        seed.counterCurrency,
        seed.counterAmount === null ? null : '1540.25',
        seed.customerId,
        seed.beneficiaryId,
        seed.cardId,
        seed.reference,
        seed.description,
        seed.createdAt,
        ['success', 'failed', 'expired'].includes(seed.status) ? seed.createdAt : null,
      ],
    );
    await h.db.query(
      `INSERT INTO transaction_status_changes (transaction_id, "from", "to", source, at)
       VALUES ($1, NULL, $2::"TransactionStatus", 'api', $3)`,
      [seed.id, seed.status, seed.createdAt],
    );
  }

  /** Row i of the seed set: every kind, status, currency, customer and amount range is covered. */
  function makeSeed(i: number, createdAt: Date): Seed {
    const kind = KINDS[i % KINDS.length];
    const isCard = kind.startsWith('card_');
    return {
      id: randomUUID(),
      kind,
      direction: DIRECTION[kind],
      status: STATUSES[i % STATUSES.length],
      amount: BigInt(1000 + ((i * 7919) % 50000)),
      fee: BigInt(i % 4 === 0 ? 0 : 10 + i),
      currency: CURRENCIES[i % CURRENCIES.length],
      counterAmount: kind === 'payout' || kind === 'swap' ? BigInt(200000 + i) : null,
      counterCurrency: kind === 'payout' || kind === 'swap' ? 'KES' : null,
      customerId: i % 9 === 8 ? null : i % 2 === 0 ? customerA : customerB,
      beneficiaryId: kind === 'payout' && i % 4 === 1 ? beneficiaryA : null,
      cardId: isCard && i % 2 === 1 ? cardA : null,
      reference: `seed-${i}-${randomUUID().slice(0, 8)}`,
      description: TRICKY[i % TRICKY.length],
      createdAt,
    };
  }

  /** Every id the list answers for `query`, following nextCursor with pages of `limit`. */
  async function walk(query: string, limit: number): Promise<string[]> {
    const ids: string[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 500; pages++) {
      const sep = query ? '&' : '';
      const res = await get(
        `/v1/transactions?${query}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      expect(res.status).toBe(200);
      expect(res.body.data.length).toBeLessThanOrEqual(limit);
      ids.push(...res.body.data.map((t: { id: string }) => t.id));
      cursor = res.body.nextCursor;
      if (!cursor) return ids;
    }
    throw new Error('too many pages');
  }

  beforeAll(async () => {
    // Callbacks to an address nobody listens on: payout outcomes arrive only by reconciliation here.
    h = await startHarness({ env: { PUBLIC_BASE_URL: 'http://127.0.0.1:9' } });
    finance = { Authorization: `Bearer ${await h.key(['transactions:read'])}` };
    const [a, b] = [randomUUID(), randomUUID()];
    for (const [id, email] of [
      [a, 'finance-a@example.com'],
      [b, 'finance-b@example.com'],
    ]) {
      await h.db.query(
        `INSERT INTO customers (id, provider_id, email, first_name, last_name, updated_at)
         VALUES ($1, $2, $3, 'Fin', 'Ance', now())`,
        [id, `prov-${id}`, email],
      );
    }
    [customerA, customerB] = [a, b];
    beneficiaryA = randomUUID();
    await h.db.query(
      `INSERT INTO beneficiaries (id, customer_id, country, currency, type, destination, status, reference, updated_at)
       VALUES ($1, $2, 'KE', 'KES', 'MOBILEMONEY', '{}', 'active', $3, now())`,
      [beneficiaryA, customerA, `ben-${beneficiaryA}`],
    );
    const holder = randomUUID();
    await h.db.query(
      `INSERT INTO card_holders (id, customer_id, id_type, id_number, first_name, last_name, phone, address, status, updated_at)
       VALUES ($1, $2, 'PASSPORT', 'A1', 'Fin', 'Ance', '8012345678', '{}', 'active', now())`,
      [holder, customerB],
    );
    cardA = randomUUID();
    await h.db.query(
      `INSERT INTO cards (id, customer_id, card_holder_id, brand, type, status, reference, updated_at)
       VALUES ($1, $2, $3, 'VISA', 'virtual', 'active', $4, now())`,
      [cardA, customerB, holder, `card-${cardA}`],
    );
    // 90 rows over 45 minutes, two per timestamp: ties on createdAt are broken by id.
    for (let i = 0; i < 90; i++) {
      const seed = makeSeed(i, new Date(BASE + Math.floor(i / 2) * MINUTE));
      seeds.push(seed);
      await insertSeed(seed);
    }
  });
  afterAll(() => h.close());

  describe('filters (each checked against the seeded model, through every page)', () => {
    const expectIds = (pred: (s: Seed) => boolean) =>
      seeds
        .filter(pred)
        .sort(byKeyDesc)
        .map((s) => s.id);
    const iso = (minutes: number) => new Date(BASE + minutes * MINUTE).toISOString();

    const cases: Array<[string, () => string, (s: Seed) => boolean]> = [
      ['no filter', () => '', () => true],
      ['kind', () => 'kind=payout', (s) => s.kind === 'payout'],
      ['kind (case-insensitive)', () => 'kind=CARD_SPEND', (s) => s.kind === 'card_spend'],
      ['status', () => 'status=success', (s) => s.status === 'success'],
      ['direction', () => 'direction=credit', (s) => s.direction === 'credit'],
      ['currency (upper-cased)', () => 'currency=ngn', (s) => s.currency === 'NGN'],
      ['customerId', () => `customerId=${customerA}`, (s) => s.customerId === customerA],
      ['cardId', () => `cardId=${cardA}`, (s) => s.cardId === cardA],
      ['beneficiaryId', () => `beneficiaryId=${beneficiaryA}`, (s) => s.beneficiaryId === beneficiaryA],
      ['reference', () => `reference=${encodeURIComponent(seeds[17].reference)}`, (s) => s.id === seeds[17].id],
      ['from (inclusive)', () => `from=${iso(30)}`, (s) => s.createdAt.getTime() >= BASE + 30 * MINUTE],
      ['to (exclusive)', () => `to=${iso(10)}`, (s) => s.createdAt.getTime() < BASE + 10 * MINUTE],
      [
        'from and to',
        () => `from=${iso(5)}&to=${iso(12)}`,
        (s) => s.createdAt.getTime() >= BASE + 5 * MINUTE && s.createdAt.getTime() < BASE + 12 * MINUTE,
      ],
      ['from as a date', () => 'from=2026-10-01', () => true],
      ['amountMin (inclusive)', () => `amountMin=${seeds[3].amount}`, (s) => s.amount >= seeds[3].amount],
      ['amountMax (inclusive)', () => `amountMax=${seeds[3].amount}`, (s) => s.amount <= seeds[3].amount],
      [
        'amountMin and amountMax',
        () => 'amountMin=10000&amountMax=30000',
        (s) => s.amount >= 10000n && s.amount <= 30000n,
      ],
      [
        'several filters combine with AND',
        () => `customerId=${customerB}&direction=debit&currency=USD&from=${iso(3)}`,
        (s) =>
          s.customerId === customerB &&
          s.direction === 'debit' &&
          s.currency === 'USD' &&
          s.createdAt.getTime() >= BASE + 3 * MINUTE,
      ],
      ['a filter nothing matches', () => 'status=reversed', () => false],
    ];

    it.each(cases)('%s', async (_name, query, pred) => {
      const expected = expectIds(pred);
      if (_name !== 'a filter nothing matches') expect(expected.length).toBeGreaterThan(0);
      expect(await walk(query(), 7)).toEqual(expected);
    });

    it('orders oldest first with order=asc, ties broken by id ascending', async () => {
      expect(await walk('order=asc', 11)).toEqual(expectIds(() => true).reverse());
      expect(await walk('order=asc&kind=swap', 4)).toEqual(expectIds((s) => s.kind === 'swap').reverse());
    });

    it('serves 50 rows by default and at most 200', async () => {
      const first = await get('/v1/transactions');
      expect(first.body.data).toHaveLength(50);
      expect(first.body.nextCursor).toEqual(expect.any(String));
      const big = await get('/v1/transactions?limit=200');
      expect(big.body.data).toHaveLength(90);
      expect(big.body.nextCursor).toBeNull();
    });

    it('answers a transaction in the documented shape (minor units, decimal strings, ISO times)', async () => {
      const seed = seeds.find((s) => s.kind === 'payout' && s.currency === 'NGN')!;
      const res = await get(`/v1/transactions?reference=${seed.reference}`);
      expect(res.body.data).toEqual([
        {
          id: seed.id,
          kind: 'payout',
          direction: 'debit',
          status: seed.status,
          amount: Number(seed.amount),
          fee: Number(seed.fee),
          currency: 'NGN',
          amountDecimal: formatMajor(seed.amount, 'NGN'),
          feeDecimal: formatMajor(seed.fee, 'NGN'),
          counterAmount: Number(seed.counterAmount),
          counterCurrency: 'KES',
          counterAmountDecimal: formatMajor(seed.counterAmount!, 'KES'),
          exchangeRate: '1540.25',
          customerId: seed.customerId,
          beneficiaryId: seed.beneficiaryId,
          cardId: null,
          providerId: null,
          reference: seed.reference,
          description: seed.description,
          failureReason: null,
          createdAt: seed.createdAt.toISOString(),
          updatedAt: seed.createdAt.toISOString(),
          completedAt: ['success', 'failed', 'expired'].includes(seed.status) ? seed.createdAt.toISOString() : null,
        },
      ]);
      const btc = seeds.find((s) => s.currency === 'BTC')!;
      const one = await get(`/v1/transactions?reference=${btc.reference}`);
      expect(one.body.data[0].amountDecimal).toBe(formatMajor(btc.amount, 'BTC'));
      expect(one.body.data[0].amountDecimal).toMatch(/^\d+\.\d{8}$/);
    });
  });

  it('answers an amount beyond 2^53 as an exact integer string, in lists and alone', async () => {
    const id = randomUUID();
    await h.db.query(
      `INSERT INTO transactions (id, kind, direction, status, amount, fee, currency, reference, updated_at)
       VALUES ($1, 'collection', 'credit', 'success', 9007199254740993, 0, 'NGN', $2, now())`,
      [id, `huge-${id}`],
    );
    const one = await get(`/v1/transactions/${id}`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ amount: '9007199254740993', amountDecimal: '90071992547409.93', fee: 0 });
    const list = await get(`/v1/transactions?reference=huge-${id}`);
    expect(list.body.data[0].amount).toBe('9007199254740993');
    await h.db.query('DELETE FROM transactions WHERE id = $1', [id]);
  });

  describe('validation (400 problem+json naming the field)', () => {
    const bad: Array<[string, string]> = [
      ['kind=refund', 'kind'],
      ['status=done', 'status'],
      ['direction=sideways', 'direction'],
      ['currency=US1', 'currency'],
      ['customerId=42', 'customerId'],
      ['cardId=not-a-uuid', 'cardId'],
      ['beneficiaryId=x', 'beneficiaryId'],
      ['from=yesterday', 'from'],
      ['to=2026-13-01T00:00:00Z', 'to'],
      ['from=2026-10-02T00:00:00Z&to=2026-10-01T00:00:00Z', 'to'],
      ['amountMin=-5', 'amountMin'],
      ['amountMax=1.5', 'amountMax'],
      ['amountMin=500&amountMax=100', 'amountMax'],
      ['limit=0', 'limit'],
      ['limit=201', 'limit'],
      ['limit=ten', 'limit'],
      ['order=sideways', 'order'],
      ['cursor=garbage', 'cursor'],
      [`cursor=${Buffer.from(JSON.stringify(['2026-10-01T00:00:00Z', 'not-a-uuid'])).toString('base64url')}`, 'cursor'],
      ['colour=blue', 'colour'],
    ];
    it.each(bad)('GET /v1/transactions?%s → 400 on %s', async (query, field) => {
      const res = await get(`/v1/transactions?${query}`);
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    });

    it('validates the summary and the export the same way; the export takes no cursor or limit', async () => {
      for (const path of ['/v1/transactions/summary?status=done', '/v1/transactions/export?from=nope']) {
        const res = await get(path);
        expect(res.status).toBe(400);
        expect(res.body.code).toBe('validation_failed');
      }
      const res = await get('/v1/transactions/export?limit=10');
      expect(res.status).toBe(400);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain('limit');
    });
  });

  describe('cursor stability', () => {
    it('pages newest first without duplicates or gaps while rows are inserted', async () => {
      const before = seeds
        .slice()
        .sort(byKeyDesc)
        .map((s) => s.id);
      const seen: string[] = [];
      let cursor: string | null = null;
      let n = 0;
      do {
        const res = await get(`/v1/transactions?limit=9${cursor ? `&cursor=${cursor}` : ''}`);
        expect(res.status).toBe(200);
        seen.push(...res.body.data.map((t: { id: string }) => t.id));
        cursor = res.body.nextCursor;
        // Between pages: a new row (newest), and one backdated into the part already served.
        const fresh = makeSeed(1000 + n, new Date());
        const backdated = makeSeed(2000 + n, new Date(BASE + 44 * MINUTE + 1));
        await Promise.all([insertSeed(fresh), insertSeed(backdated)]);
        seeds.push(fresh, backdated);
        n++;
      } while (cursor);
      expect(new Set(seen).size).toBe(seen.length);
      // Every row that existed when the walk began, once, in order; rows written meanwhile never shift a page.
      expect(seen.filter((id) => before.includes(id))).toEqual(before);
      expect(seen.length).toBe(before.length);
    });

    it('pages oldest first while rows are inserted: newer rows come at the end, once', async () => {
      const before = seeds
        .slice()
        .sort(byKeyDesc)
        .reverse()
        .map((s) => s.id);
      const inserted: string[] = [];
      const seen: string[] = [];
      let cursor: string | null = null;
      let n = 0;
      do {
        const res = await get(`/v1/transactions?order=asc&limit=25${cursor ? `&cursor=${cursor}` : ''}`);
        seen.push(...res.body.data.map((t: { id: string }) => t.id));
        cursor = res.body.nextCursor;
        if (n < 3) {
          const fresh = makeSeed(3000 + n, new Date(Date.now() + 1000 + n));
          await insertSeed(fresh);
          seeds.push(fresh);
          inserted.push(fresh.id);
        }
        n++;
      } while (cursor);
      expect(new Set(seen).size).toBe(seen.length);
      expect(seen).toEqual([...before, ...inserted]);
    });
  });

  describe('summary', () => {
    it('totals per currency × kind × status match a direct SQL sum, for a period and with filters', async () => {
      const from = new Date(BASE + 5 * MINUTE).toISOString();
      const to = new Date(BASE + 40 * MINUTE).toISOString();
      for (const extra of ['', '&direction=debit', `&customerId=${customerA}`]) {
        const res = await get(`/v1/transactions/summary?from=${from}&to=${to}${extra}`);
        expect(res.status).toBe(200);
        expect(res.body.from).toBe(from);
        expect(res.body.to).toBe(to);
        const conditions = ['created_at >= $1', 'created_at < $2'];
        const params: unknown[] = [from, to];
        if (extra.includes('direction')) conditions.push(`direction = 'debit'`);
        if (extra.includes('customerId')) {
          params.push(customerA);
          conditions.push(`customer_id = $3`);
        }
        const sql = await h.db.query<{
          currency: string;
          kind: string;
          status: string;
          count: number;
          amount: string;
          fee: string;
        }>(
          `SELECT currency, kind::text, status::text, count(*)::int AS count, sum(amount)::text AS amount, sum(fee)::text AS fee
           FROM transactions WHERE ${conditions.join(' AND ')} GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
          params,
        );
        expect(sql.length).toBeGreaterThan(1);
        expect(res.body.totals).toEqual(
          sql.map((r) => ({
            ...r,
            amountDecimal: formatMajor(BigInt(r.amount), r.currency),
            feeDecimal: formatMajor(BigInt(r.fee), r.currency),
          })),
        );
      }
    });

    it("gives the net per currency of what succeeded: in − out − fees, a swap's target amount as money in", async () => {
      const from = new Date(BASE).toISOString();
      const to = new Date(BASE + 45 * MINUTE).toISOString();
      const rows = await h.db.query<{
        kind: string;
        direction: string;
        status: string;
        currency: string;
        amount: string;
        fee: string;
        counter_amount: string | null;
        counter_currency: string | null;
      }>(
        `SELECT kind::text, direction::text, status::text, currency, amount::text, fee::text,
                counter_amount::text, counter_currency
         FROM transactions WHERE created_at >= $1 AND created_at < $2`,
        [from, to],
      );
      /** The net worked out here from the rows, leg by leg: what the summary must answer. */
      const expected = (keep: { currency?: string; direction?: string }) => {
        const sums = new Map<string, { in: bigint; out: bigint; fees: bigint }>();
        const add = (currency: string, side: 'in' | 'out' | 'fees', minor: bigint) => {
          const entry = sums.get(currency) ?? { in: 0n, out: 0n, fees: 0n };
          entry[side] += minor;
          sums.set(currency, entry);
        };
        for (const r of rows.filter((r) => r.status === 'success')) {
          if ((!keep.currency || r.currency === keep.currency) && (!keep.direction || r.direction === keep.direction)) {
            add(r.currency, r.direction === 'credit' ? 'in' : 'out', BigInt(r.amount));
            add(r.currency, 'fees', BigInt(r.fee));
          }
          const target = r.counter_currency;
          if (r.kind === 'swap' && target && r.counter_amount !== null) {
            if ((!keep.currency || target === keep.currency) && (!keep.direction || keep.direction === 'credit')) {
              add(target, 'in', BigInt(r.counter_amount));
            }
          }
        }
        return [...sums.keys()].sort().map((currency) => {
          const e = sums.get(currency)!;
          return {
            currency,
            moneyIn: e.in.toString(),
            moneyInDecimal: formatMajor(e.in, currency),
            moneyOut: e.out.toString(),
            moneyOutDecimal: formatMajor(e.out, currency),
            fees: e.fees.toString(),
            feesDecimal: formatMajor(e.fees, currency),
            net: (e.in - e.out - e.fees).toString(),
            netDecimal: formatMajor(e.in - e.out - e.fees, currency),
          };
        });
      };
      // The seeded swaps that succeeded bring KES in: without them KES would show no money in.
      const swapsIn = rows.filter((r) => r.kind === 'swap' && r.status === 'success' && r.counter_currency === 'KES');
      expect(swapsIn.length).toBeGreaterThan(0);
      for (const [extra, keep] of [
        ['', {}],
        ['&currency=KES', { currency: 'KES' }],
        ['&currency=USD', { currency: 'USD' }],
        ['&direction=credit', { direction: 'credit' }],
        ['&direction=debit', { direction: 'debit' }],
      ] as const) {
        const res = await get(`/v1/transactions/summary?from=${from}&to=${to}${extra}`);
        expect(res.status).toBe(200);
        const want = expected(keep);
        expect(want.length).toBeGreaterThan(0);
        expect([extra, res.body.net]).toEqual([extra, want]);
      }
      const kes = (await get(`/v1/transactions/summary?from=${from}&to=${to}&currency=KES`)).body.net;
      const swapIn = swapsIn.reduce((sum, r) => sum + BigInt(r.counter_amount!), 0n);
      expect(BigInt(kes[0].moneyIn)).toBeGreaterThanOrEqual(swapIn);
      // Fees count: the net is below in − out whenever a succeeded row had a fee.
      const all = (await get(`/v1/transactions/summary?from=${from}&to=${to}`)).body.net;
      expect(all.some((n: { fees: string }) => BigInt(n.fees) > 0n)).toBe(true);
      // Nothing succeeded under status=failed: no net at all.
      expect((await get(`/v1/transactions/summary?from=${from}&to=${to}&status=failed`)).body.net).toEqual([]);
    });

    it('keeps sums beyond 2^53 exact, as strings', async () => {
      const huge = makeSeed(4000, new Date(BASE - 10 * 24 * 60 * MINUTE));
      huge.amount = 9_000_000_000_000_000n;
      huge.currency = 'UGX';
      const twin = {
        ...makeSeed(4001, huge.createdAt),
        amount: 9_000_000_000_000_001n,
        currency: 'UGX',
        kind: huge.kind,
        status: huge.status,
      };
      await insertSeed(huge);
      await insertSeed(twin);
      const res = await get(`/v1/transactions/summary?to=${new Date(BASE - MINUTE).toISOString()}`);
      expect(res.body.totals).toEqual([
        expect.objectContaining({
          currency: 'UGX',
          count: 2,
          amount: '18000000000000001',
          amountDecimal: '18000000000000001',
        }),
      ]);
      await h.db.query('DELETE FROM transaction_status_changes WHERE transaction_id = ANY($1::uuid[])', [
        [huge.id, twin.id],
      ]);
      await h.db.query('DELETE FROM transactions WHERE id = ANY($1::uuid[])', [[huge.id, twin.id]]);
    });
  });

  describe('CSV export', () => {
    type DbRow = Record<string, string | null>;
    const dbRows = (where: string, params: unknown[] = []) =>
      h.db.query<DbRow>(
        `SELECT id::text, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at,
                to_char(completed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS completed_at,
                kind::text, direction::text, status::text, currency, amount::text, fee::text, counter_currency,
                counter_amount::text, reference, provider_id, customer_id::text, beneficiary_id::text, card_id::text,
                description, failure_reason
         FROM transactions ${where} ORDER BY created_at DESC, id DESC`,
        params,
      );
    const formula = (text: string | null) => (text === null ? '' : /^[=+\-@\t\r]/.test(text) ? `'${text}` : text);
    const expectedRecord = (r: DbRow) => ({
      id: r.id,
      created_at: r.created_at,
      completed_at: r.completed_at ?? '',
      kind: r.kind,
      direction: r.direction,
      status: r.status,
      currency: r.currency,
      amount: formatMajor(BigInt(r.amount!), r.currency!),
      amount_minor: r.amount,
      fee: formatMajor(BigInt(r.fee!), r.currency!),
      fee_minor: r.fee,
      counter_currency: r.counter_currency ?? '',
      counter_amount: r.counter_amount === null ? '' : formatMajor(BigInt(r.counter_amount), r.counter_currency!),
      reference: formula(r.reference),
      provider_id: r.provider_id ?? '',
      customer_id: r.customer_id ?? '',
      beneficiary_id: r.beneficiary_id ?? '',
      card_id: r.card_id ?? '',
      description: formula(r.description),
      failure_reason: formula(r.failure_reason),
    });

    it('streams every row as RFC 4180 CSV that parses back to the database rows, row by row', async () => {
      const res = await get('/v1/transactions/export');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
      expect(res.headers['content-disposition']).toMatch(/^attachment; filename="transactions-\d{8}T\d{6}Z\.csv"$/);
      const text = res.text;
      expect(
        text.startsWith(
          'id,created_at,completed_at,kind,direction,status,currency,amount,amount_minor,fee,fee_minor,' +
            'counter_currency,counter_amount,reference,provider_id,customer_id,beneficiary_id,card_id,description,failure_reason\r\n',
        ),
      ).toBe(true);
      // Quoting: a comma/quote field is quoted with doubled quotes; a CRLF inside a field stays inside quotes.
      expect(text).toContain('"Invoice 7, ""final"""');
      expect(text).toContain('"line one\r\nline two"');
      const records = parse<Record<string, string>>(text, { columns: true });
      const rows = await dbRows('');
      expect(records).toHaveLength(rows.length);
      expect(records).toEqual(rows.map(expectedRecord));
      expect(records.find((r) => r.description.startsWith("'="))?.description).toBe(`'=HYPERLINK("http://x")`);
    });

    it('applies the same filters and order as the list', async () => {
      const res = await get(`/v1/transactions/export?currency=KES&status=success&order=asc`);
      expect(res.status).toBe(200);
      const records = parse<Record<string, string>>(res.text, { columns: true });
      const rows = (await dbRows(`WHERE currency = 'KES' AND status = 'success'`)).reverse();
      expect(rows.length).toBeGreaterThan(0);
      expect(records).toEqual(rows.map(expectedRecord));
    });

    it('answers a header row alone when nothing matches', async () => {
      const res = await get('/v1/transactions/export?status=reversed');
      expect(res.status).toBe(200);
      expect(res.text).toBe(
        'id,created_at,completed_at,kind,direction,status,currency,amount,amount_minor,fee,fee_minor,' +
          'counter_currency,counter_amount,reference,provider_id,customer_id,beneficiary_id,card_id,description,failure_reason\r\n',
      );
    });

    it('gives the database connection back when the client hangs up mid-export', async () => {
      // Enough rows that the export cannot fit in the socket buffers at once.
      await h.db.query(
        `INSERT INTO transactions (id, kind, direction, status, amount, fee, currency, reference, description, created_at, updated_at)
         SELECT gen_random_uuid(), 'collection', 'credit', 'success', 1000 + g, 0, 'USD', 'bulk-' || g,
                repeat('x', 200), TIMESTAMPTZ '2020-01-01' + g * interval '1 second', now()
         FROM generate_series(1, 20000) g`,
      );
      await h.app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = h.app.getHttpServer().address() as { port: number };
      const firstChunk = await new Promise<string>((resolve, reject) => {
        const req = httpRequest(
          { host: '127.0.0.1', port, path: '/v1/transactions/export', headers: finance },
          (res) => {
            res.once('data', (chunk: Buffer) => {
              req.destroy();
              resolve(chunk.toString('utf8'));
            });
          },
        );
        req.on('error', (error) => (req.destroyed ? undefined : reject(error)));
        req.end();
      });
      expect(firstChunk.startsWith('id,created_at')).toBe(true);
      // Every connection of the read pool is idle again (none leaked, none stuck in the cursor).
      const pool = h.app.get(ReadPool);
      const checkedOut = () => pool.stats().total - pool.stats().idle;
      const deadline = Date.now() + 10_000;
      while (checkedOut() > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(checkedOut()).toBe(0);
      const busy = await h.db.query(
        `SELECT 1 FROM pg_stat_activity WHERE application_name = 'wallet-gateway-reads'
           AND datname = current_database() AND state <> 'idle'`,
      );
      expect(busy).toHaveLength(0);
      // The pool still serves.
      expect((await get('/v1/transactions?limit=1')).status).toBe(200);
      await h.db.query(`DELETE FROM transactions WHERE reference LIKE 'bulk-%'`);
    });
  });

  describe('one transaction', () => {
    let auth: Record<string, string>;
    let payout: { id: string; providerId: string; reference: string };

    beforeAll(async () => {
      auth = { Authorization: `Bearer ${await h.key()}` };
      const to = await customerWithBeneficiary(h, auth, 'finance-payout@example.com');
      payout = await confirmedPayout(h, auth, to, 43210);
    });
    afterEach(() => h.sim.admin('DELETE', '/faults'));

    it('answers the record with its status history', async () => {
      const res = await get(`/v1/transactions/${payout.id}`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id: payout.id,
        kind: 'payout',
        direction: 'debit',
        status: 'pending',
        amount: 43210,
        currency: 'USD',
        amountDecimal: '432.10',
        providerId: payout.providerId,
        reference: payout.reference,
      });
      expect(
        res.body.statusHistory.map((c: { from: string | null; to: string; source: string }) => [
          c.from,
          c.to,
          c.source,
        ]),
      ).toEqual([
        [null, 'created', 'api'],
        ['created', 'initiated', 'api'],
        ['initiated', 'pending', 'api'],
      ]);
      for (const change of res.body.statusHistory) expect(new Date(change.at).toISOString()).toBe(change.at);
    });

    it('404 for an unknown id, 400 for a malformed one', async () => {
      const missing = await get(`/v1/transactions/${randomUUID()}`);
      expect(missing.status).toBe(404);
      expect(missing.body.code).toBe('not_found');
      const malformed = await get('/v1/transactions/abc');
      expect(malformed.status).toBe(400);
      expect(malformed.body.errors[0].field).toBe('id');
      expect((await get(`/v1/transactions/${payout.id}?refresh=yes`)).status).toBe(400);
    });

    it('refresh=true answers 502/504 when the provider fails, and changes nothing', async () => {
      await h.sim.setFault('getTransaction', { status: 503 });
      const unavailable = await get(`/v1/transactions/${payout.id}?refresh=true`);
      expect(unavailable.status).toBe(502);
      expect(unavailable.body.code).toBe('provider_unavailable');
      await h.sim.setFault('getTransaction', { timeout: true });
      const timeout = await get(`/v1/transactions/${payout.id}?refresh=true`);
      expect(timeout.status).toBe(504);
      expect(timeout.body.code).toBe('provider_timeout');
      expect((await get(`/v1/transactions/${payout.id}`)).body.status).toBe('pending');
    });

    it('refresh=true applies the forward move the provider shows, with source reconciliation', async () => {
      const plain = await get(`/v1/transactions/${payout.id}?refresh=true`);
      expect(plain.body.status).toBe('pending');
      const done = await h.sim.admin('POST', `/payouts/${payout.providerId}/complete`, { status: 'success' });
      expect(done.status).toBeLessThan(300);
      expect((await get(`/v1/transactions/${payout.id}`)).body.status).toBe('pending');
      const refreshed = await get(`/v1/transactions/${payout.id}?refresh=true`);
      expect(refreshed.status).toBe(200);
      expect(refreshed.body.status).toBe('success');
      expect(refreshed.body.completedAt).toEqual(expect.any(String));
      expect(refreshed.body.statusHistory.at(-1)).toMatchObject({
        from: 'pending',
        to: 'success',
        source: 'reconciliation',
      });
      const again = await get(`/v1/transactions/${payout.id}?refresh=true`);
      expect(again.body.statusHistory).toHaveLength(4);
    });
  });

  describe('scopes', () => {
    const routes = [
      '/v1/transactions',
      '/v1/transactions/summary',
      '/v1/transactions/export',
      `/v1/transactions/${randomUUID()}`,
    ];

    it('401 without a key', async () => {
      for (const path of routes) {
        const res = await h.http().get(path);
        expect(res.status).toBe(401);
        expect(res.body.code).toBe('unauthorized');
      }
    });

    it('403 for a key without transactions:read', async () => {
      const payouts = { Authorization: `Bearer ${await h.key(['payouts:read', 'payouts:write', 'customers:read'])}` };
      for (const path of routes) {
        const res = await get(path, payouts);
        expect(res.status).toBe(403);
        expect(res.body.code).toBe('forbidden');
      }
    });

    it('a finance key (transactions:read only) moves no money', async () => {
      const posts: Array<[string, Record<string, unknown>]> = [
        ['/v1/payouts', { customerId: customerA, beneficiaryId: beneficiaryA, amount: 100, description: 'x' }],
        [`/v1/payouts/${randomUUID()}/confirm`, {}],
        ['/v1/collections', { customerId: customerA, country: 'KE', currency: 'KES', amount: 100 }],
        ['/v1/swaps', { quoteId: randomUUID() }],
        ['/v1/swap-quotes', { sourceCurrency: 'USD', targetCurrency: 'NGN', amount: 100 }],
        ['/v1/customers', { email: 'x@example.com' }],
      ];
      const calls = (await h.sim.calls()).length;
      for (const [path, body] of posts) {
        const res = await h.http().post(path).set(finance).set('Idempotency-Key', randomUUID()).send(body);
        expect([path, res.status]).toEqual([path, 403]);
      }
      expect((await h.sim.calls()).length).toBe(calls);
    });
  });
});
