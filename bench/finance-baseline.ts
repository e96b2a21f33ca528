/**
 * The raw baseline of `npm run bench:finance`: plain Fastify + node-postgres serving
 * GET /v1/transactions/{id} with the very query and mapping the gateway uses (GET_WITH_HISTORY as
 * a named prepared statement, toTransactionDetailDto), and nothing else: no auth, no validation,
 * no logging, no metrics. Started as its own process by finance.bench.ts:
 *   DATABASE_URL=… PORT=… tsx bench/finance-baseline.ts
 */
import Fastify from 'fastify';
import { Pool } from 'pg';
import { GET_WITH_HISTORY } from '../src/transactions/transaction-query';
import { toTransactionDetailDto } from '../src/transactions/transaction.mapper';
import { financePoolConfig, type TransactionWithHistoryRow } from '../src/transactions/transactions.repository';

async function main(): Promise<void> {
  // The gateway's pool settings (column types as the one LedgerRow reads them), not its Nest wiring.
  const pool = new Pool(financePoolConfig(process.env.DATABASE_URL as string, 10));
  const app = Fastify({ logger: false });
  app.get<{ Params: { id: string } }>('/v1/transactions/:id', async (request, reply) => {
    const { rows } = await pool.query<TransactionWithHistoryRow>({ ...GET_WITH_HISTORY, values: [request.params.id] });
    if (!rows[0]) return reply.code(404).send({ code: 'not_found' });
    return toTransactionDetailDto(rows[0]);
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
