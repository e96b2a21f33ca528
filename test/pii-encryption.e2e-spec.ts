import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import request from 'supertest';
import { createApp } from '../src/app';
import { CardsRepository } from '../src/cards/cards.repository';
import { formatRotation, rotatePersonalData } from '../src/common/crypto/pii-rotation';
import { WebhookSubscriptionsRepository } from '../src/outbound/webhook-subscriptions.repository';
import { cardKit } from './support/cards';
import { confirmedPayout, customerWithBeneficiary, postCallback } from './support/fixtures';
import { type Harness, startHarness, startPeer } from './support/harness';

/**
 * Personal data at rest (issue 14 item 1): card holders' national identifiers, dates of birth,
 * phones and addresses, and webhook subscription secrets are stored encrypted (pii:v1:<key id>:…);
 * nothing the API took in is found in clear in any text or JSON column of any table; rotation
 * between two keys re-encrypts every row, resumably; production does not start without a key; the
 * free text of any callback is stored with card numbers masked.
 */

const key = (fill: string) => Buffer.alloc(32, fill).toString('base64');
const K1 = `k1:${key('a')}`;
const K2 = `k2:${key('b')}`;
const ROOT = path.join(__dirname, '..');

/** Column types scanned: every text-like and JSON column (arrays of text too), cast to text. */
const SCANNED_TYPES = ['text', 'character varying', 'character', 'json', 'jsonb', 'ARRAY'];

/** `schema.table.column` of every text/JSON column of every table holding `needle` (as text). */
async function tablesHolding(h: Harness, needle: string): Promise<string[]> {
  const columns = await h.db.query<{ schema: string; table: string; column: string }>(
    `SELECT c.table_schema AS schema, c.table_name AS "table", c.column_name AS "column"
       FROM information_schema.columns c
       JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
      WHERE t.table_type = 'BASE TABLE'
        AND c.table_schema NOT IN ('pg_catalog', 'information_schema')
        AND c.data_type = ANY($1)
      ORDER BY 1, 2, 3`,
    [SCANNED_TYPES],
  );
  expect(columns.length).toBeGreaterThan(50);
  const hits: string[] = [];
  for (const { schema, table, column } of columns) {
    const [row] = await h.db.query<{ n: string }>(
      `SELECT count(*)::text AS n FROM "${schema}"."${table}" WHERE position($1 in "${column}"::text) > 0`,
      [needle],
    );
    if (row.n !== '0') hits.push(`${schema}.${table}.${column}`);
  }
  return hits;
}

/** Runs `npm run pii -- <args>` (src/cli/pii.ts through tsx) on `h`'s database with `keys`. */
function piiCli(h: Harness, keys: string, ...args: string[]): { status: number | null; out: string } {
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/pii.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: h.db.url, PII_ENCRYPTION_KEYS: keys, NODE_ENV: 'test' },
    encoding: 'utf8',
  });
  return { status: run.status, out: `${run.stdout}${run.stderr}` };
}

describe('personal data encryption (e2e): a dump of every table holds none of it in clear', () => {
  let h: Harness;
  let auth: Record<string, string>;

  beforeAll(async () => {
    h = await startHarness();
    auth = { Authorization: `Bearer ${await h.key()}` };
  });
  afterAll(() => h.close());

  it('stores card holders (NG with BVN, GH with date of birth), a virtual account and a subscription secret encrypted', async () => {
    const kit = cardKit(h, () => auth);
    const ng = {
      idNumber: 'NGID99887766',
      bvn: '22987654321',
      phone: '+2348035550101',
      address: {
        line1: '7 Encrypted Crescent',
        houseName: 'Cipher House',
        city: 'Lekki',
        state: 'Lagos',
        zipCode: 'ZPNG4471',
        country: 'NG',
      },
    };
    const gh = {
      idNumber: 'GHID55443322',
      dateOfBirth: '1987-06-05',
      phone: '+233245550202',
      address: {
        line1: '9 Sealed Avenue',
        houseName: 'Vault Court',
        city: 'Accra',
        state: 'Greater Accra',
        zipCode: 'ZPGH8832',
        country: 'GH',
      },
    };
    const ngHolder = await kit.holder(await kit.customer('pii-ng@example.com', '+234'), ng);
    const ghHolder = await kit.holder(await kit.customer('pii-gh@example.com', '+233'), gh);

    // The answers show the last four characters at most.
    for (const [holder, sent] of [
      [ngHolder, ng],
      [ghHolder, gh],
    ] as const) {
      const got = await h.http().get(`/v1/card-holders/${holder.id}`).set(auth);
      expect(got.status).toBe(200);
      expect(got.body).toMatchObject({
        idNumberLast4: sent.idNumber.slice(-4),
        phoneLast4: sent.phone.slice(-4),
        country: sent.address.country,
      });
      const text = JSON.stringify(got.body);
      for (const secret of [sent.idNumber, sent.phone, sent.address.line1, sent.address.zipCode]) {
        expect(text).not.toContain(secret);
      }
      expect(text).not.toContain(ng.bvn);
      expect(text).not.toContain(gh.dateOfBirth);
    }

    const vaBvn = '22123498765';
    const vaDateOfBirth = '1979-11-12';
    const account = await h.http().post('/v1/virtual-accounts').set(auth).send({
      customerId: ngHolder.customerId,
      bank: 'providus',
      bvn: vaBvn,
      dateOfBirth: vaDateOfBirth,
      phoneNumber: '08035550303',
    });
    expect(account.status).toBe(201);
    expect(JSON.stringify(account.body)).not.toContain(vaBvn);

    const subscription = await h
      .http()
      .post('/v1/webhook-subscriptions')
      .set(auth)
      .send({ url: 'http://127.0.0.1:9/pii-hooks', description: 'pii test' });
    expect(subscription.status).toBe(201);
    const secret = subscription.body.secret as string;
    expect(secret).toMatch(/^whsec_/);
    const listed = await h.http().get('/v1/webhook-subscriptions').set(auth);
    expect(JSON.stringify(listed.body)).not.toContain(secret);

    // The stored columns are in the encrypted format, under the test key (t1).
    const rows = await h.db.query<Record<string, string | null>>(
      'SELECT id_number, bvn, date_of_birth, phone, address, bvn_hash, id_number_hash FROM card_holders ORDER BY created_at',
    );
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      for (const column of ['id_number', 'phone', 'address'])
        expect(row[column]).toMatch(/^pii:v1:t1:[\w-]+:[\w-]+:[\w-]+$/);
      expect(row.id_number_hash).toMatch(/^[0-9a-f]{64}$/);
    }
    expect(rows[0].bvn).toMatch(/^pii:v1:t1:/);
    expect(rows[0].bvn_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(rows[1].date_of_birth).toMatch(/^pii:v1:t1:/);
    const [stored] = await h.db.query<{ secret: string }>('SELECT secret FROM webhook_subscriptions');
    expect(stored.secret).toMatch(/^pii:v1:t1:/);

    // Equality lookup through the keyed hash.
    const byBvn = await h.app.get(CardsRepository).holdersWithBvn(ng.bvn);
    expect(byBvn.map((r) => r.id)).toEqual([ngHolder.id]);
    expect(byBvn[0]).toMatchObject({ bvn: ng.bvn, address: ng.address });

    // The dump: no plaintext anywhere (secrets in full, or a distinctive part of them).
    const plaintexts = [
      ng.idNumber,
      ng.bvn,
      ng.phone,
      ng.phone.slice(1),
      ng.address.line1,
      ng.address.houseName,
      ng.address.zipCode,
      gh.idNumber,
      gh.dateOfBirth,
      gh.phone,
      gh.phone.slice(1),
      gh.address.line1,
      gh.address.houseName,
      gh.address.zipCode,
      vaBvn,
      vaDateOfBirth,
      secret,
      secret.slice('whsec_'.length),
    ];
    for (const plaintext of plaintexts) expect([plaintext, await tablesHolding(h, plaintext)]).toEqual([plaintext, []]);

    // Positive control: a plaintext planted in a legacy row is found by the same scan, and read.
    const customerId = await kit.customer('pii-legacy@example.com', '+234');
    const planted = `PLANTED${randomUUID().slice(0, 8)}`;
    const [legacy] = await h.db.query<{ id: string }>(
      `INSERT INTO card_holders (id, customer_id, id_type, id_number, first_name, last_name, phone, bvn, address, status, updated_at)
       VALUES (gen_random_uuid(), $1, 'NIN', $2, 'Leg', 'Acy', '+2348000000000', '22200000000', '{"country":"NG"}', 'active', now())
       RETURNING id`,
      [customerId, planted],
    );
    expect(await tablesHolding(h, planted)).toEqual(['public.card_holders.id_number']);
    const read = await h.http().get(`/v1/card-holders/${legacy.id}`).set(auth);
    expect(read.body).toMatchObject({ idNumberLast4: planted.slice(-4), country: 'NG' });
  });

  it('masks card numbers in the free text of any callback (a payout failure), not only card callbacks', async () => {
    const to = await customerWithBeneficiary(h, auth, 'pii-payout@example.com');
    const payout = await confirmedPayout(h, auth, to, 1500);
    const res = await postCallback(h, {
      event: 'payout.transfer.failed',
      data: {
        id: payout.providerId,
        reference: payout.reference,
        status: 'failed',
        reason: 'card 4111-1111-1111-1111 refused',
        narration: 'refund to 4111 1111 1111 1111',
        accountNumber: '254712345678',
      },
    });
    expect(res.status).toBe(200);
    // The card number's digit groups (a bare '4111' also occurs in random UUIDs, e.g. an audit event's target).
    for (const needle of ['4111-1111', '4111 1111', '41111111']) expect(await tablesHolding(h, needle)).toEqual([]);
    const [event] = await h.db.query<{ raw_body: string }>(
      "SELECT raw_body FROM webhook_events WHERE event = 'payout.transfer.failed' AND provider_id = $1",
      [payout.providerId],
    );
    expect(JSON.parse(event.raw_body).data).toMatchObject({
      reason: 'card [REDACTED] refused',
      narration: 'refund to [REDACTED]',
      accountNumber: '254712345678',
    });
  });
});

describe('personal data encryption (e2e): key rotation between two keys', () => {
  let h: Harness;
  let auth: Record<string, string>;

  beforeAll(async () => {
    h = await startHarness({ env: { PII_ENCRYPTION_KEYS: K1 } });
    auth = { Authorization: `Bearer ${await h.key()}` };
  });
  afterAll(() => h.close());

  async function keyIds(): Promise<Record<string, string>> {
    const rows = await h.db.query<{ kid: string; n: string }>(
      `SELECT coalesce(substring(v from '^pii:v1:([^:]+):'), 'plaintext') AS kid, count(*)::text AS n
         FROM (SELECT unnest(ARRAY[id_number, phone, address, bvn, date_of_birth]) AS v FROM card_holders
               UNION ALL SELECT secret FROM webhook_subscriptions) x
        WHERE v IS NOT NULL GROUP BY 1`,
    );
    return Object.fromEntries(rows.map((r) => [r.kid, r.n]));
  }

  it('encrypts with k1, re-encrypts every row under k2 (k2,k1) in resumable batches, still readable; a rerun does nothing', async () => {
    // Spawns `npm run pii -- rotate` once (tsx compiles it on start: slow on a loaded machine).
    const kit = cardKit(h, () => auth);
    const holders: Array<{ id: string; idNumber: string }> = [];
    for (const n of [1, 2, 3]) {
      const idNumber = `ROT${n}2345678`;
      const holder = await kit.holder(await kit.customer(`rot${n}@example.com`, '+234'), {
        idNumber,
        bvn: `2200000000${n}`,
        address: { ...kit.holderBody('').address, country: 'NG' },
      });
      holders.push({ id: holder.id, idNumber });
    }
    const subscription = await h
      .http()
      .post('/v1/webhook-subscriptions')
      .set(auth)
      .send({ url: 'http://127.0.0.1:9/rotation' });
    expect(subscription.status).toBe(201);
    // A legacy row from before encryption: plaintext, no hashes.
    const legacyCustomer = await kit.customer('rot-legacy@example.com', '+234');
    const [legacy] = await h.db.query<{ id: string }>(
      `INSERT INTO card_holders (id, customer_id, id_type, id_number, first_name, last_name, phone, bvn, address, status, updated_at)
       VALUES (gen_random_uuid(), $1, 'NIN', 'LEG0000009', 'Leg', 'Acy', '+2348000000009', '22200000009',
               '{"line1":"1 Old Road","houseName":"H","city":"C","state":"S","zipCode":"Z","country":"NG"}', 'active', now())
       RETURNING id`,
      [legacyCustomer],
    );
    expect(await keyIds()).toEqual({ k1: String(3 * 4 + 1), plaintext: '4' });

    // Restart with k2 first: new values under k2, old ones still read.
    process.env.PII_ENCRYPTION_KEYS = `${K2},${K1}`;
    const restarted = await startPeer(h);
    try {
      const http = () => request(restarted.app.getHttpServer());
      for (const holder of holders) {
        const got = await http().get(`/v1/card-holders/${holder.id}`).set(auth);
        expect(got.body.idNumberLast4).toBe(holder.idNumber.slice(-4));
      }
      // Found by BVN through k1's hash before rotation (one candidate hash per ring key).
      expect((await restarted.app.get(CardsRepository).holdersWithBvn('22000000002')).map((r) => r.id)).toEqual([
        holders[1].id,
      ]);

      // A partial run (one batch of one row) stops part way; the rest is left for the next run.
      const repositories = {
        cardHolders: restarted.app.get(CardsRepository),
        webhookSubscriptions: restarted.app.get(WebhookSubscriptionsRepository),
      };
      const partial = formatRotation(await rotatePersonalData(repositories, { batchSize: 1, maxBatches: 1 }));
      expect(partial).toMatch(/card_holders: 1 row\(s\) re-encrypted \(stopped/);
      expect(partial).toMatch(/webhook_subscriptions: not started/);
      expect(partial).toMatch(/Partial: run again/);
      const afterPartial = await keyIds();
      expect(Number(afterPartial.k2)).toBeGreaterThanOrEqual(3);
      expect(Number(afterPartial.k1 ?? 0) + Number(afterPartial.plaintext ?? 0)).toBeGreaterThan(0);

      const full = piiCli(h, `${K2},${K1}`, 'rotate', '--batch', '2');
      expect(full.status).toBe(0);
      expect(full.out).toMatch(/card_holders: 3 row\(s\) re-encrypted\n/);
      expect(full.out).toMatch(/webhook_subscriptions: 1 row\(s\) re-encrypted\n/);
      expect(full.out).toMatch(/Done/);
      expect(await keyIds()).toEqual({ k2: String(4 * 4 + 1) });
      const hashes = await h.db.query<{ n: string }>(
        'SELECT count(*)::text AS n FROM card_holders WHERE bvn_hash IS NULL OR id_number_hash IS NULL',
      );
      expect(hashes[0].n).toBe('0');

      const again = formatRotation(await rotatePersonalData(repositories, { batchSize: 500, maxBatches: 1000 }));
      expect(again).toMatch(/card_holders: 0 row\(s\) re-encrypted\n/);
      expect(again).toMatch(/webhook_subscriptions: 0 row\(s\) re-encrypted\n/);
      expect(await keyIds()).toEqual({ k2: String(4 * 4 + 1) });

      // Still readable, the legacy row included, and found by BVN with k2's hash; the secret decrypts.
      for (const holder of [...holders, { id: legacy.id, idNumber: 'LEG0000009' }]) {
        const got = await http().get(`/v1/card-holders/${holder.id}`).set(auth);
        expect(got.status).toBe(200);
        expect(got.body.idNumberLast4).toBe(holder.idNumber.slice(-4));
      }
      const legacyRead = await restarted.app.get(CardsRepository).holdersWithBvn('22200000009');
      expect(legacyRead.map((r) => [r.id, r.phone, r.address.line1])).toEqual([
        [legacy.id, '+2348000000009', '1 Old Road'],
      ]);
      const [sub] = await h.db.query<{ client_id: string }>('SELECT client_id FROM webhook_subscriptions');
      const reread = await restarted.app
        .get(WebhookSubscriptionsRepository)
        .findOwned(subscription.body.id as string, sub.client_id);
      expect(reread?.secret).toBe(subscription.body.secret);
    } finally {
      await restarted.close();
      process.env.PII_ENCRYPTION_KEYS = K1;
    }
  }, 240_000);

  it('production refuses to start without PII_ENCRYPTION_KEYS, naming it, and starts with it', async () => {
    const saved = {
      NODE_ENV: process.env.NODE_ENV,
      PII_ENCRYPTION_KEYS: process.env.PII_ENCRYPTION_KEYS,
      OUTBOUND_ALLOW_PRIVATE: process.env.OUTBOUND_ALLOW_PRIVATE,
    };
    try {
      process.env.NODE_ENV = 'production';
      // The tests' loopback receivers setting is itself refused in production (issue 14 item 2).
      delete process.env.OUTBOUND_ALLOW_PRIVATE;
      delete process.env.PII_ENCRYPTION_KEYS;
      await expect(createApp({ bufferLogs: true })).rejects.toThrow(
        /PII_ENCRYPTION_KEYS is required when NODE_ENV=production/,
      );
      process.env.PII_ENCRYPTION_KEYS = 'k1:not-a-key';
      await expect(createApp({ bufferLogs: true })).rejects.toThrow(
        /PII_ENCRYPTION_KEYS \(or PII_HMAC_KEY\) is malformed: key k1 must be base64 of exactly 32 bytes/,
      );
      process.env.PII_ENCRYPTION_KEYS = `${K2},${K1}`;
      const app = await createApp({ bufferLogs: true });
      try {
        expect((await request(app.getHttpServer()).get('/health/live')).status).toBe(200);
      } finally {
        await app.close();
      }
    } finally {
      process.env.NODE_ENV = saved.NODE_ENV;
      process.env.PII_ENCRYPTION_KEYS = saved.PII_ENCRYPTION_KEYS;
      process.env.OUTBOUND_ALLOW_PRIVATE = saved.OUTBOUND_ALLOW_PRIVATE;
    }
  }, 120_000);
});
