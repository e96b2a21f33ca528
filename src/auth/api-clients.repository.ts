import { Injectable } from '@nestjs/common';
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

/** Shared by the repository and the `npm run api-key` CLI (which runs without Nest). */
export async function createApiClient(
  prisma: Pick<PrismaService, 'apiClient'>,
  name: string,
  scopes: Scope[],
): Promise<CreatedApiClient> {
  const key = generateApiKey();
  const client = await prisma.apiClient.create({
    data: { name, scopes, keyHash: hashApiKey(key), keyPrefix: keyPrefixOf(key) },
  });
  return { client, key };
}
