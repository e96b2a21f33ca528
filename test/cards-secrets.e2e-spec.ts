import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cardKit, waitFor } from './support/cards';
import { type Harness, startHarness } from './support/harness';

interface Secret {
  id: string;
  cardNumber: string;
  cvv2: string;
}

/** Column types scanned: every text-like and JSON column (arrays of text too), cast to text. */
const SCANNED_TYPES = ['text', 'character varying', 'character', 'json', 'jsonb', 'ARRAY'];

/**
 * How secrets are looked for, and why:
 * - Card numbers (12–19 random digits) are unique enough to look for anywhere: as written, and
 *   with every non-digit removed (so "5399 8312 3456 7890" or "5399-…" would be found too). The
 *   digits-only form is compared per value (per column value, per log line), so digits of unrelated
 *   fields cannot add up to a false hit in practice.
 * - A CVV is 3 digits: "123" occurs in ids, amounts and timestamps by chance, so a bare search would
 *   fail for nothing. A CVV can only leak as a CVV, i.e. under a key that names it (cvv, cvv2, cvc,
 *   securityCode …) or written next to its card number. So: no stored value may have such a key
 *   at all (whatever its value), a log line may have it only redacted, and the CVV may not follow
 *   the card's number within a few characters anywhere.
 */
const CVV_KEY = /["']?(cvv2?|cvc2?|security_?code|card_?verification\w*)["']?\s*[:=]/i;

function cvvNextToNumber(text: string, s: Secret): boolean {
  const escaped = s.cardNumber.replace(/\D/g, '');
  return new RegExp(`${escaped}.{0,40}\\b${s.cvv2}\\b|\\b${s.cvv2}\\b.{0,40}${escaped}`).test(text);
}

describe('cards (e2e): no full card number or CVV in the database or the logs', () => {
  let h: Harness;
  let key: string;
  const auth = () => ({ Authorization: `Bearer ${key}` });
  let kit: ReturnType<typeof cardKit>;
  const logFile = path.join(os.tmpdir(), `wg-cards-secrets-${process.pid}-${randomUUID()}.log`);

  beforeAll(async () => {
    h = await startHarness({
      listen: true,
      env: { LOG_FILE: logFile, LOG_LEVEL: 'debug' },
      simulator: { cardCreateDelayMs: 60_000, cardTxnSettleDelayMs: 60_000, kycCallbackDelayMs: 60_000 },
    });
    key = await h.key();
    kit = cardKit(h, auth);
  });
  afterAll(async () => {
    await h.close();
    if (!process.env.KEEP_TEST_LOG) fs.rmSync(logFile, { force: true });
  });

  /** Every text/JSON column of every table of the gateway's database. */
  async function columns(): Promise<Array<{ schema: string; table: string; column: string }>> {
    return h.db.query(
      `SELECT c.table_schema AS schema, c.table_name AS "table", c.column_name AS "column"
         FROM information_schema.columns c
         JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
        WHERE t.table_type = 'BASE TABLE'
          AND c.table_schema NOT IN ('pg_catalog', 'information_schema')
          AND c.data_type = ANY($1)
        ORDER BY 1, 2, 3`,
      [SCANNED_TYPES],
    );
  }

  /** `table.column` of every stored value matching the SQL condition on `v` (the value as text). */
  async function scan(condition: string, params: unknown[]): Promise<string[]> {
    const hits: string[] = [];
    for (const { schema, table, column } of await columns()) {
      const rows = await h.db.query<{ n: string }>(
        `SELECT count(*)::text AS n FROM (SELECT "${column}"::text AS v FROM "${schema}"."${table}") x WHERE ${condition}`,
        params,
      );
      if (rows[0].n !== '0') hits.push(`${schema}.${table}.${column}`);
    }
    return hits;
  }

  it('creates, freezes, tops up, spends and terminates cards through the API, then finds no secret anywhere', async () => {
    // --- Work through the API and the simulator's callbacks. ---
    const cards: any[] = [];
    for (const n of [1, 2, 3]) {
      const customerId = await kit.customer(`secrets${n}@example.com`);
      await kit.holder(customerId);
      const res = await kit.createCard(customerId, 5000 + n);
      expect(res.status).toBe(201);
      cards.push(res.body);
    }
    await h.sim.admin('POST', '/flush');
    await waitFor('cards active', async () => {
      const rows = await h.db.query<{ status: string }>('SELECT status FROM cards');
      return rows.length === 3 && rows.every((r) => r.status === 'active');
    });
    const act = async (id: string, action: string) => {
      const res = await h.http().post(`/v1/cards/${id}/${action}`).set(auth());
      expect(res.status).toBe(200);
      return res.body;
    };
    const money = async (id: string, route: string, amount: number) => {
      const res = await h
        .http()
        .post(`/v1/cards/${id}/${route}`)
        .set(auth())
        .set('Idempotency-Key', randomUUID())
        .send({ amount });
      expect(res.status).toBe(201);
    };
    const [a, b, c] = cards;
    await act(a.id, 'freeze');
    await act(a.id, 'unfreeze');
    await money(a.id, 'top-ups', 2500);
    await money(a.id, 'withdrawals', 1000);
    await act(a.id, 'freeze');
    await act(a.id, 'terminate');
    await money(b.id, 'top-ups', 300);
    await h.sim.admin('POST', `/cards/${b.providerId}/spend`, { amount: 450, narrative: 'Merchant' });
    await act(b.id, 'freeze');
    await act(c.id, 'terminate');
    await h.sim.admin('POST', '/flush');
    for (const card of cards) {
      const listed = await h.http().get(`/v1/cards/${card.id}/transactions`).set(auth());
      expect(listed.status).toBe(200);
      expect((await h.http().get(`/v1/cards/${card.id}`).set(auth())).status).toBe(200);
    }
    expect((await h.http().get('/v1/cards').set(auth())).status).toBe(200);

    const secrets = (await h.sim.admin('GET', '/cards/secrets')).body as Secret[];
    expect(secrets).toHaveLength(3);
    for (const s of secrets) expect(s.cardNumber).toMatch(/^\d{12,19}$/);

    // A provider that puts the number and CVV in a callback (the inbox must strip them).
    const leaky = await h.sim.admin('POST', '/callbacks/send', {
      event: 'virtualcard.created.success',
      data: {
        id: b.providerId,
        reference: b.reference,
        status: 'active',
        createdStatus: 'success',
        cardNumber: secrets.find((s) => s.id === b.providerId)?.cardNumber,
        cvv2: secrets.find((s) => s.id === b.providerId)?.cvv2,
        last4: secrets.find((s) => s.id === b.providerId)?.cardNumber.slice(-4),
      },
    });
    expect(leaky.body.callback.attempts).toEqual([200]);

    // The API's answers carried last4 only.
    const answers = JSON.stringify((await h.http().get('/v1/cards?limit=100').set(auth())).body);
    for (const s of secrets) {
      expect(answers).not.toContain(s.cardNumber);
      expect(answers).toContain(`"last4":"${s.cardNumber.slice(-4)}"`);
    }

    // --- The database: every text/JSON column of every table. ---
    const scanned = await columns();
    expect(scanned.map((col) => `${col.table}.${col.column}`)).toEqual(
      expect.arrayContaining([
        'cards.provider_payload',
        'transactions.provider_payload',
        'transaction_status_changes.payload',
        'webhook_events.raw_body',
        'webhook_events.payload',
        'idempotency_records.response_body',
        'card_holders.provider_payload',
      ]),
    );
    // Positive control: the scanner finds what is there (the provider's card ids, the last4).
    expect(await scan(`v LIKE '%' || $1 || '%'`, [b.providerId])).toEqual(
      expect.arrayContaining(['public.cards.provider_id', 'public.webhook_events.payload']),
    );
    for (const s of secrets) {
      expect(await scan(`v LIKE '%' || $1 || '%'`, [s.cardNumber])).toEqual([]);
      expect(await scan(`regexp_replace(v, '[^0-9]', '', 'g') LIKE '%' || $1 || '%'`, [s.cardNumber])).toEqual([]);
    }
    expect(await scan(`v ~* $1`, [CVV_KEY.source])).toEqual([]);
    for (const s of secrets) {
      expect(
        await scan(`v ~ $1`, [`${s.cardNumber}.{0,40}\\m${s.cvv2}\\M|\\m${s.cvv2}\\M.{0,40}${s.cardNumber}`]),
      ).toEqual([]);
    }

    // Negative control: a planted leak is found (then removed again).
    const [planted] = secrets;
    const leak = `{"note": "card ${planted.cardNumber.replace(/(\d{4})(?=\d)/g, '$1 ')}", "cvv2": "${planted.cvv2}"}`;
    await h.db.query('UPDATE cards SET billing_address = $1::jsonb WHERE id = $2', [leak, a.id]);
    expect(await scan(`regexp_replace(v, '[^0-9]', '', 'g') LIKE '%' || $1 || '%'`, [planted.cardNumber])).toEqual([
      'public.cards.billing_address',
    ]);
    expect(await scan(`v ~* $1`, [CVV_KEY.source])).toEqual(['public.cards.billing_address']);
    await h.db.query('UPDATE cards SET billing_address = NULL WHERE id = $1', [a.id]);

    // --- The captured logs (LOG_LEVEL=debug). ---
    const log = fs.readFileSync(logFile, 'utf8');
    const lines = log.split('\n').filter(Boolean);
    expect(lines.length).toBeGreaterThan(20);
    expect(log).toMatch(/\/v1\/cards\/[0-9a-f-]+\/freeze/); // the scan covers the card routes
    for (const s of secrets) {
      expect(log).not.toContain(s.cardNumber);
      expect(lines.filter((line) => line.replace(/\D/g, '').includes(s.cardNumber))).toEqual([]);
      expect(lines.filter((line) => cvvNextToNumber(line, s))).toEqual([]);
      // A CVV key may appear in a log line only with its value redacted.
      const cvvValue = new RegExp(`["']?(cvv2?|cvc2?)["']?\\s*[:=]\\s*["']?${s.cvv2}\\b`, 'i');
      expect(lines.filter((line) => cvvValue.test(line))).toEqual([]);
    }
  });
});
