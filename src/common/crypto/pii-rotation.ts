/** One batch of one table: rows after `afterId` (id order) re-encrypted; `lastId` null when none was left. */
type Batch = (afterId: string | null, limit: number) => Promise<{ lastId: string | null; rewritten: number }>;

/** What a rotation did, per table: rows rewritten, and whether the table was gone through to its end. */
export type RotationReport = Array<{ table: string; rewritten: number; done: boolean; started: boolean }>;

/**
 * Runs `batch` from the start of the table until a batch finds nothing left (or `maxBatches` ran).
 * Returns the rows rewritten, the batches run, and whether the table was finished.
 */
async function rotateTable(
  batch: Batch,
  size: number,
  maxBatches: number,
): Promise<{ rewritten: number; batches: number; done: boolean }> {
  let afterId: string | null = null;
  let rewritten = 0;
  let batches = 0;
  while (batches < maxBatches) {
    const result = await batch(afterId, size);
    batches += 1;
    rewritten += result.rewritten;
    if (result.lastId === null) return { rewritten, batches, done: true };
    afterId = result.lastId;
  }
  return { rewritten, batches, done: false };
}

/**
 * Re-encrypts with the current key (PII_ENCRYPTION_KEYS' first) every stored personal value that
 * is a legacy plaintext or under an older key — card holders (with their lookup hashes), then
 * webhook subscription secrets — in keyset batches of `batchSize` rows, at most `maxBatches`
 * batches in all (for a bounded run). Resumable and idempotent: each batch selects only rows not yet
 * current, so a rerun continues where a stopped one left off and, with nothing left, rewrites nothing.
 * @throws PiiDecryptError when a stored value does not decrypt (its key is not in the ring).
 */
export async function rotatePersonalData(
  repositories: {
    /** CardsRepository. */
    cardHolders: { reencryptHolders: Batch };
    /** WebhookSubscriptionsRepository. */
    webhookSubscriptions: { reencryptSecrets: Batch };
  },
  opts: { batchSize: number; maxBatches: number },
): Promise<RotationReport> {
  const tables: Array<[string, Batch]> = [
    ['card_holders', (after, limit) => repositories.cardHolders.reencryptHolders(after, limit)],
    ['webhook_subscriptions', (after, limit) => repositories.webhookSubscriptions.reencryptSecrets(after, limit)],
  ];
  let left = opts.maxBatches;
  const report: RotationReport = [];
  for (const [table, batch] of tables) {
    if (left <= 0) {
      report.push({ table, rewritten: 0, done: false, started: false });
      continue;
    }
    const { rewritten, batches, done } = await rotateTable(batch, opts.batchSize, left);
    left -= batches;
    report.push({ table, rewritten, done, started: true });
  }
  return report;
}

/** The report as lines for a person: one per table, then `Done: …` or `Partial: run again…`. */
export function formatRotation(report: RotationReport): string {
  const lines = report.map(({ table, rewritten, done, started }) =>
    started
      ? `${table}: ${rewritten} row(s) re-encrypted${done ? '' : ' (stopped: --max-batches reached)'}`
      : `${table}: not started (--max-batches reached)`,
  );
  const complete = report.every((r) => r.done);
  lines.push(complete ? 'Done: every value is under the current key.' : 'Partial: run again to continue.');
  return lines.join('\n');
}
