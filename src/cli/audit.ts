/**
 * The audit trail from the command line.
 *
 *   npm run audit -- verify     seals pending events (as the gateway's sealer does), then recomputes
 *                               the chain; exit 0 when intact, 1 naming the first row that was
 *                               edited or after which rows were deleted
 *
 * In production (no dev dependencies): node dist/cli/audit.js verify
 * Uses DATABASE_URL (from the environment or .env).
 */
import 'dotenv/config';
import { verifyChain } from '../audit/audit-verify';
import { chainInOrder, sealPendingEvents } from '../audit/audit.repository';
import { createPgAdapter } from '../database/prisma.service';
import { PrismaClient } from '../generated/prisma/client';

const PROBLEMS = {
  edited: 'its content no longer matches its hash (the row was edited)',
  missing_before: 'the sequence jumps to it (a row before it was deleted)',
  relinked: "its prevHash is not the previous row's hash (a row before it was replaced or re-hashed)",
} as const;

async function main(): Promise<number> {
  const command = process.argv[2];
  if (command !== 'verify') {
    process.stderr.write('Usage: npm run audit -- verify\n');
    return 2;
  }
  const url = process.env.DATABASE_URL;
  if (!url) {
    process.stderr.write('DATABASE_URL is not set.\n');
    return 2;
  }
  const prisma = new PrismaClient({ adapter: createPgAdapter(url, 2) });
  try {
    const { sealed } = await sealPendingEvents(prisma, { wait: true });
    process.stdout.write(`Sealed ${sealed} pending event${sealed === 1 ? '' : 's'}.\n`);
    const report = await verifyChain(chainInOrder(prisma));
    if (report.ok) {
      process.stdout.write(
        `Audit chain intact: ${report.events} events${report.lastSeq ? `, last seq ${report.lastSeq}` : ''}.\n`,
      );
      return 0;
    }
    process.stdout.write(`Audit chain BROKEN at seq ${report.seq}: ${PROBLEMS[report.problem]}.\n`);
    return 1;
  } finally {
    await prisma.$disconnect();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(2);
  },
);
