/**
 * The raw baseline of the read benchmarks (`npm run bench:reads`, `npm run bench:finance`): plain
 * Fastify + node-postgres answering the gateway's hot reads with the same SQL a hand-written
 * repository would run and the same JSON shape, and nothing else: no auth, no validation, no
 * logging, no metrics, no ORM. Started as its own process:
 *   DATABASE_URL=… PORT=… tsx bench/raw-baseline.ts
 * GET /v1/transactions/{id} reuses the gateway's own query and mapper (GET_WITH_HISTORY as a named
 * prepared statement, toTransactionDetailDto). Every query is a named prepared statement.
 *
 * POST /webhooks/provider is the baseline of `npm run bench:webhooks`: the least any receiver of the
 * provider's callbacks must do, i.e. check the hex HMAC-SHA512 signature of the raw body
 * (`x-brails-signature`, keyed with PROVIDER_WEBHOOK_SECRET) in constant time, parse the JSON and
 * answer 200 (401 on a bad signature). It stores nothing and applies nothing.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import Fastify from 'fastify';
import { Pool } from 'pg';
import { readPoolConfig } from '../src/database/sql';
import { GET_WITH_HISTORY } from '../src/transactions/transaction-query';
import { toTransactionDetailDto } from '../src/transactions/transaction.mapper';
import type { TransactionWithHistoryRow } from '../src/transactions/transactions.repository';

const iso = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;
const at = (column: string, name = column) =>
  `to_char(${column} AT TIME ZONE 'UTC', ${iso}) AS "${name.replace(/_(\w)/g, (_m, c: string) => c.toUpperCase())}"`;

/** One named statement per hot read; `$1` is the id (or the card id for its movements). */
const QUERIES = {
  customer: `SELECT id, provider_id AS "providerId", email, first_name AS "firstName", last_name AS "lastName", phone,
      country_code AS "countryCode", blacklisted, ${at('created_at')}, ${at('updated_at')}
    FROM customers WHERE id = $1`,
  customers: `SELECT id, provider_id AS "providerId", email, first_name AS "firstName", last_name AS "lastName", phone,
      country_code AS "countryCode", blacklisted, ${at('created_at')}, ${at('updated_at')}
    FROM customers ORDER BY created_at DESC, id DESC LIMIT 21`,
  card: `SELECT id, provider_id AS "providerId", customer_id AS "customerId", card_holder_id AS "cardHolderId", status,
      created_status AS "createdStatus", brand, type, name_on_card AS "nameOnCard", last4, expiry_month AS "expiryMonth",
      expiry_year AS "expiryYear", balance::float8 AS balance, currency, initial_amount::float8 AS "initialAmount",
      reference, billing_address AS "billingAddress", failure_reason AS "failureReason", ${at('created_at')}, ${at('updated_at')}
    FROM cards WHERE id = $1`,
  cardTransactions: `SELECT id, kind, status, amount::float8 AS amount, fee::float8 AS fee, currency, provider_id AS "providerId",
      reference, description, failure_reason AS "failureReason", ${at('created_at')}, ${at('updated_at')}, ${at('completed_at')}
    FROM transactions WHERE card_id = $1 AND kind IN ('card_topup', 'card_withdrawal', 'card_spend')
    ORDER BY created_at DESC, id DESC LIMIT 21`,
  payout: `SELECT id, status, customer_id AS "customerId", beneficiary_id AS "beneficiaryId", amount::float8 AS amount, currency,
      fee::float8 AS fee, exchange_rate::float8 AS rate, counter_amount::float8 AS "payoutAmount", counter_currency AS "payoutCurrency",
      reference, provider_id AS "providerId", description, failure_reason AS "failureReason",
      ${at('created_at')}, ${at('updated_at')}, ${at('completed_at')}
    FROM transactions WHERE id = $1 AND kind = 'payout'`,
  beneficiary: `SELECT id, provider_id AS "providerId", customer_id AS "customerId", country, currency, type, destination, status,
      reference, ${at('created_at')}, ${at('updated_at')}
    FROM beneficiaries WHERE id = $1`,
} as const;

async function main(): Promise<void> {
  // The gateway's pool settings (column types as the one LedgerRow reads them), not its Nest wiring.
  const pool = new Pool(readPoolConfig(process.env.DATABASE_URL as string, 10));
  // An idle connection lost (the database restarted) must not crash the baseline: the pool replaces it.
  pool.on('error', (error) => process.stderr.write(`raw baseline: a database connection failed (${error.message})\n`));
  const app = Fastify({ logger: false });
  const one = (name: keyof typeof QUERIES) => async (id: string) =>
    (await pool.query({ name, text: QUERIES[name], values: [id] })).rows[0] as Record<string, unknown> | undefined;

  app.get<{ Params: { id: string } }>('/v1/transactions/:id', async (request, reply) => {
    const { rows } = await pool.query<TransactionWithHistoryRow>({ ...GET_WITH_HISTORY, values: [request.params.id] });
    if (!rows[0]) return reply.code(404).send({ code: 'not_found' });
    return toTransactionDetailDto(rows[0]);
  });
  for (const [path, name] of [
    ['/v1/customers/:id', 'customer'],
    ['/v1/cards/:id', 'card'],
    ['/v1/payouts/:id', 'payout'],
    ['/v1/beneficiaries/:id', 'beneficiary'],
  ] as const) {
    const read = one(name);
    app.get<{ Params: { id: string } }>(path, async (request, reply) => {
      const row = await read(request.params.id);
      return row ?? reply.code(404).send({ code: 'not_found' });
    });
  }
  app.get('/v1/customers', async () => {
    const { rows } = await pool.query({ name: 'customers', text: QUERIES.customers });
    return { data: rows.slice(0, 20), nextCursor: rows.length > 20 ? 'next' : null };
  });
  app.get<{ Params: { id: string } }>('/v1/cards/:id/transactions', async (request) => {
    const { rows } = await pool.query({
      name: 'cardTransactions',
      text: QUERIES.cardTransactions,
      values: [request.params.id],
    });
    return { data: rows.slice(0, 20), nextCursor: rows.length > 20 ? 'next' : null };
  });
  const secret = process.env.PROVIDER_WEBHOOK_SECRET ?? '';
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => done(null, body));
  app.post('/webhooks/provider', async (request, reply) => {
    const raw = request.body as string;
    const expected = Buffer.from(createHmac('sha512', secret).update(raw).digest('hex'));
    const given = Buffer.from(String(request.headers['x-brails-signature'] ?? '').toLowerCase());
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return reply.code(401).send();
    const event = JSON.parse(raw) as { event?: string };
    return { received: true, event: event.event };
  });
  await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
  const stop = async () => {
    await app.close();
    await pool.end();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
}

main().catch((error) => {
  process.stderr.write(`baseline failed: ${(error as Error).stack ?? error}\n`);
  process.exit(1);
});
