/**
 * Personal data encryption at rest (docs/operations.md "Personal data encryption").
 *
 *   npm run pii -- rotate [--batch 500] [--max-batches N]
 *       Encrypts with the current key (the first of PII_ENCRYPTION_KEYS) every stored value that is
 *       a legacy plaintext or under an older key: card holders' id number, BVN, date of birth, phone
 *       and address (with their lookup hashes), and webhook subscription secrets. Batches of
 *       `--batch` rows in id order (keyset); each row is written only if unchanged since read.
 *       Resumable: stopped at any point (or by --max-batches), a rerun takes what is left; with
 *       nothing left it rewrites nothing. Run it after `prisma migrate deploy` on every deploy, and
 *       after putting a new key first. `encrypt-existing` is the same command.
 *   npm run pii -- generate-key [--id k2]
 *       Prints a new key entry `<id>:<base64 of 32 random bytes>` to put first in PII_ENCRYPTION_KEYS.
 *
 * In production (no dev dependencies): node dist/cli/pii.js rotate
 * Uses DATABASE_URL, NODE_ENV, PII_ENCRYPTION_KEYS and PII_HMAC_KEY (from the environment or .env).
 * Exit codes: 0 done, 1 failed (a value that does not decrypt: its key is missing from the ring), 2 bad usage.
 */
import 'dotenv/config';
import { parseArgs } from 'node:util';
import { ConfigService } from '@nestjs/config';
import { CardsRepository } from '../cards/cards.repository';
import { PiiCipher } from '../common/crypto/pii-cipher';
import { PiiKeyError, PiiKeyRing } from '../common/crypto/pii-key-ring';
import { formatRotation, rotatePersonalData } from '../common/crypto/pii-rotation';
import type { Env } from '../config/env';
import { PrismaService } from '../database/prisma.service';
import { ReadPool } from '../database/read-pool';
import { ShutdownService } from '../lifecycle/shutdown.service';
import { WebhookSubscriptionsRepository } from '../outbound/webhook-subscriptions.repository';

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(2);
}

function positiveInt(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) fail(`--${name} must be a positive integer.`);
  return n;
}

async function rotate(batchSize: number, maxBatches: number): Promise<void> {
  const url = process.env.DATABASE_URL ?? fail('DATABASE_URL is not set.');
  const config = new ConfigService<Env, true>({ ...process.env, DATABASE_URL: url, PROVIDER_TIMEOUT_MS: 10_000 });
  let pii: PiiCipher;
  try {
    pii = PiiCipher.fromConfig(config);
  } catch (error) {
    if (error instanceof PiiKeyError) fail(`PII_ENCRYPTION_KEYS: ${error.message}`);
    throw error;
  }
  // No Nest application here: the command disconnects the client itself (finally below).
  const prisma = new PrismaService(config, new ShutdownService());
  const reads = new ReadPool(config, new ShutdownService());
  try {
    const report = await rotatePersonalData(
      {
        cardHolders: new CardsRepository(prisma, reads, config, pii),
        webhookSubscriptions: new WebhookSubscriptionsRepository(prisma, pii),
      },
      { batchSize, maxBatches },
    );
    process.stdout.write(`Key ${pii.currentKeyId} is current.\n${formatRotation(report)}\n`);
  } finally {
    await Promise.all([prisma.$disconnect(), reads.end()]);
  }
}

async function main(): Promise<void> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      batch: { type: 'string' },
      'max-batches': { type: 'string' },
      id: { type: 'string' },
    },
  });
  switch (positionals[0]) {
    case 'rotate':
    case 'encrypt-existing':
      await rotate(
        positiveInt(values.batch, 'batch', 500),
        positiveInt(values['max-batches'], 'max-batches', Number.MAX_SAFE_INTEGER),
      );
      break;
    case 'generate-key':
      try {
        process.stdout.write(`${PiiKeyRing.generateEntry(values.id ?? 'k1')}\n`);
      } catch (error) {
        fail((error as Error).message);
      }
      break;
    default:
      fail('Usage: pii rotate [--batch N] [--max-batches N] | pii encrypt-existing | pii generate-key [--id ID]');
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
