/**
 * Manages gateway API keys (the key is printed once; only its SHA-256 is stored).
 *
 *   npm run api-key -- create --name NAME --scopes customers:read,customers:write   (or --scopes all)
 *   npm run api-key -- create --name NAME --scopes all --replace   (revokes the active keys of that name first)
 *   npm run api-key -- list
 *   npm run api-key -- revoke --id UUID
 *
 * Creation and revocation each write an audit event (actor `cli`) in the same transaction.
 *
 * In production (no dev dependencies): node dist/cli/api-key.js create --name NAME --scopes all
 * Uses DATABASE_URL (from the environment or .env); without it, the embedded database that
 * `npm start` runs for this checkout (the URL it wrote under its state folder, local-state.ts).
 */
import 'dotenv/config';
import { parseArgs } from 'node:util';
import { createApiClient, revokeApiClient } from '../auth/api-clients.repository';
import { DEMO_SCOPES, isScope, type Scope, SCOPES } from '../auth/scopes';
import { createPgAdapter } from '../database/prisma.service';
import { PrismaClient } from '../generated/prisma/client';
import { readLocalDatabaseUrl } from './local-state';

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(2);
}

function parseScopes(value: string | undefined): Scope[] {
  if (!value) fail(`--scopes is required: a comma-separated list of ${SCOPES.join(', ')}, or "all".`);
  if (value === 'all') return [...DEMO_SCOPES];
  const scopes = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = scopes.filter((s) => !isScope(s));
  if (unknown.length) fail(`Unknown scope(s): ${unknown.join(', ')}. Known: ${SCOPES.join(', ')}.`);
  return scopes as Scope[];
}

async function main(): Promise<void> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      scopes: { type: 'string' },
      id: { type: 'string' },
      json: { type: 'boolean' },
      replace: { type: 'boolean' },
    },
  });
  const url =
    process.env.DATABASE_URL ||
    readLocalDatabaseUrl() ||
    fail('DATABASE_URL is not set, and no `npm start` of this checkout is running to take its database from.');
  const prisma = new PrismaClient({ adapter: createPgAdapter(url, 2) });
  try {
    switch (positionals[0]) {
      case 'create': {
        const name = values.name ?? fail('--name is required.');
        const scopes = parseScopes(values.scopes);
        if (values.replace) {
          const earlier = await prisma.apiClient.findMany({ where: { name, revokedAt: null }, select: { id: true } });
          for (const { id } of earlier) await revokeApiClient(prisma, id);
        }
        const { client, key } = await createApiClient(prisma, name, scopes);
        if (values.json) process.stdout.write(`${JSON.stringify({ id: client.id, key, scopes: client.scopes })}\n`);
        else
          process.stdout.write(
            `Created API client ${client.id} (${name}) with scopes ${client.scopes.join(',')}\nKey (shown once): ${key}\n`,
          );
        break;
      }
      case 'list': {
        const rows = await prisma.apiClient.findMany({ orderBy: { createdAt: 'asc' } });
        for (const r of rows) {
          process.stdout.write(
            `${r.id}  ${r.keyPrefix}…  ${r.name}  ${r.scopes.join(',')}  ${r.revokedAt ? `revoked ${r.revokedAt.toISOString()}` : 'active'}\n`,
          );
        }
        break;
      }
      case 'revoke': {
        const id = values.id ?? fail('--id is required.');
        if (!(await revokeApiClient(prisma, id))) fail(`No active API client ${id}.`);
        process.stdout.write(`Revoked ${id}.\n`);
        break;
      }
      default:
        fail('Usage: npm run api-key -- create --name NAME --scopes a:b,c:d [--replace] | list | revoke --id UUID');
    }
  } finally {
    await prisma.$disconnect();
  }
}

main().catch((error) => fail(`api-key: ${(error as Error).message}`));
