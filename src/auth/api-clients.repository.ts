import { Injectable } from '@nestjs/common';
import { appendAuditEvent, type AuditEventInput } from '../audit/audit-chain';
import { PrismaService } from '../database/prisma.service';
import type { ApiClient } from '../generated/prisma/client';
import { generateApiKey, hashApiKey, keyPrefixOf } from './api-key';
import type { Scope } from './scopes';

/** A new client together with its key, which exists only in this return value. */
export interface CreatedApiClient {
  client: ApiClient;
  key: string;
}

/** Database access for API clients. */
@Injectable()
export class ApiClientsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Creates a client with a fresh key; only the key's hash is stored. */
  async create(name: string, scopes: Scope[]): Promise<CreatedApiClient> {
    return createApiClient(this.prisma, name, scopes);
  }

  /** The active (not revoked) client whose key hashes to `keyHash`, if any. */
  findActiveByKeyHash(keyHash: string): Promise<ApiClient | null> {
    return this.prisma.apiClient.findFirst({ where: { keyHash, revokedAt: null } });
  }
}

/** Who made a key change from outside the API (the CLI): its audit event's actor name. */
export const CLI_ACTOR = 'cli';

/**
 * Creates a client with a fresh key and its `api_key.create` audit event, in one transaction.
 * Shared by the repository and the `npm run api-key` CLI (which runs without Nest).
 */
export async function createApiClient(
  prisma: Pick<PrismaService, '$transaction'>,
  name: string,
  scopes: Scope[],
  actorName = CLI_ACTOR,
): Promise<CreatedApiClient> {
  const key = generateApiKey();
  const client = await prisma.$transaction(async (tx) => {
    const row = await tx.apiClient.create({
      data: { name, scopes, keyHash: hashApiKey(key), keyPrefix: keyPrefixOf(key) },
    });
    await appendAuditEvent(tx, cliEvent('api_key.create', row.id, actorName, { name, scopes }));
    return row;
  });
  return { client, key };
}

/**
 * Revokes the active client `id` and writes its `api_key.revoke` audit event, in one transaction.
 * Returns false when there is no active client `id` (nothing written).
 */
export async function revokeApiClient(
  prisma: Pick<PrismaService, '$transaction'>,
  id: string,
  actorName = CLI_ACTOR,
): Promise<boolean> {
  return prisma.$transaction(async (tx) => {
    const { count } = await tx.apiClient.updateMany({
      where: { id, revokedAt: null },
      data: { revokedAt: new Date() },
    });
    if (count === 0) return false;
    await appendAuditEvent(tx, cliEvent('api_key.revoke', id, actorName));
    return true;
  });
}

function cliEvent(
  action: string,
  clientId: string,
  actorName: string,
  details?: Record<string, unknown>,
): AuditEventInput {
  return {
    actorId: null,
    actorName,
    action,
    targetType: 'api_client',
    targetId: clientId,
    requestId: null,
    outcome: 'succeeded',
    details: details ?? null,
  };
}
