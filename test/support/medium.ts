import { randomUUID } from 'node:crypto';
import type { Provider } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Test, type TestingModule } from '@nestjs/testing';
import { PII_CIPHER_PROVIDER } from '../../src/common/crypto/pii-cipher';
import type { IdempotencyClaim, ResourceKeySql } from '../../src/common/idempotency/idempotency-context';
import { IdempotencyRepository } from '../../src/common/idempotency/idempotency.repository';
import { PendingWrites } from '../../src/database/pending-writes';
import { PrismaService } from '../../src/database/prisma.service';
import { ReadPool } from '../../src/database/read-pool';
import type { Card, Prisma, Transaction, TransactionKind, TransactionStatus } from '../../src/generated/prisma/client';
import { ShutdownService } from '../../src/lifecycle/shutdown.service';
import { createTestDatabase, type TestDatabase } from './database';

/** A write outside an idempotent request: no Idempotency-Key claim to insert, no note to make. */
export const NO_KEY: ResourceKeySql = { claim: null, note: null };

/** A write under an Idempotency-Key claim already held: `note` notes the resource (idempotentResourceNote). */
export function keyNote(note: Prisma.Sql): ResourceKeySql {
  return { claim: null, note };
}

/** A write under a deferred Idempotency-Key claim: `claim` inserts the key's record (idempotentClaimSql). */
export function keyClaim(claim: Prisma.Sql): ResourceKeySql {
  return { claim, note: null };
}

/**
 * A deferred Idempotency-Key claim of API client `clientId` under a new key, nothing inserted yet:
 * `claim` names it, `key(type, id, onlyIf)` is the ResourceKeySql whose `claim` inserts its record
 * (IdempotencyRepository.insertInProgressSql) noting resource `type` `id` where `onlyIf` holds.
 */
export function deferredClaim(clientId: string): {
  claim: IdempotencyClaim;
  key: (type: string, id: string, onlyIf: Prisma.Sql) => ResourceKeySql;
} {
  const data = {
    clientId,
    key: `k-${randomUUID()}`,
    fingerprint: 'fp',
    expiresAt: new Date(Date.now() + 86_400_000),
    leaseExpiresAt: new Date(Date.now() + 60_000),
  };
  return {
    claim: { clientId, key: data.key, leaseExpiresAt: data.leaseExpiresAt },
    key: (type, id, onlyIf) => keyClaim(IdempotencyRepository.insertInProgressSql(data, { type, id, onlyIf })),
  };
}

/** A medium spec's world: real providers over the file's own migrated database, no HTTP. */
export interface MediumWorld {
  db: TestDatabase;
  moduleRef: TestingModule;
  prisma: PrismaService;
  close(): Promise<void>;
}

/**
 * Builds a Nest testing module with `providers` (the real classes), PrismaService and the ReadPool
 * on a fresh test database, PiiCipher (PII_ENCRYPTION_KEYS from `env`, else the development key), and a ConfigService holding DATABASE_URL plus `env` (the settings those providers read).
 */
export async function mediumWorld(providers: Provider[], env: Record<string, unknown> = {}): Promise<MediumWorld> {
  const db = await createTestDatabase();
  const moduleRef = await Test.createTestingModule({
    providers: [
      { provide: ConfigService, useValue: new ConfigService({ DATABASE_URL: db.url, ...env }) },
      ShutdownService,
      PrismaService,
      ReadPool,
      PendingWrites,
      PII_CIPHER_PROVIDER,
      ...providers,
    ],
  }).compile();
  const prisma = moduleRef.get(PrismaService);
  return {
    db,
    moduleRef,
    prisma,
    close: async () => {
      await moduleRef.close();
      await db.drop();
    },
  };
}

/**
 * Inserts a ledger row of `kind` in `status` straight into the world's database (10,000 NGN minor
 * units, a fresh reference; a collection is a credit, anything else a debit), for a medium spec to move.
 */
export function insertLedgerRow(
  world: MediumWorld,
  status: TransactionStatus = 'created',
  kind: TransactionKind = 'payout',
  providerId?: string,
): Promise<Transaction> {
  return world.prisma.transaction.create({
    data: {
      kind,
      direction: kind === 'collection' ? 'credit' : 'debit',
      status,
      amount: 10_000n,
      currency: 'NGN',
      reference: `ref-${randomUUID()}`,
      providerId,
    },
  });
}

/**
 * Inserts an active card holder of customer `customerId` straight into the world's database (its
 * address written as a legacy plaintext row: the repository reads both forms), in `status`.
 */
export function insertCardHolder(world: MediumWorld, customerId: string, status = 'active') {
  return world.prisma.cardHolder.create({
    data: {
      customerId,
      idType: 'NIN',
      idNumber: '1',
      firstName: 'A',
      lastName: 'B',
      phone: '+2340000000000',
      address: '{}',
      status,
    },
  });
}

/**
 * Inserts a virtual Visa card straight into the world's database: for customer `customerId` (else a
 * new customer) with a new card holder, `active` with a provider id unless `data` says otherwise.
 */
export async function insertCard(
  world: MediumWorld,
  data: Partial<Prisma.CardUncheckedCreateInput> = {},
  customerId?: string,
): Promise<Card> {
  const owner =
    customerId ??
    (
      await world.prisma.customer.create({
        data: { providerId: `cus-${randomUUID()}`, email: `${randomUUID()}@x.test` },
      })
    ).id;
  const holder = await insertCardHolder(world, owner);
  return world.prisma.card.create({
    data: {
      customerId: owner,
      cardHolderId: holder.id,
      brand: 'visa',
      type: 'virtual',
      status: 'active',
      providerId: `card-${randomUUID()}`,
      reference: `ref-${randomUUID()}`,
      ...data,
    },
  });
}
