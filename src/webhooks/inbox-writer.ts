import { randomUUID } from 'node:crypto';
import type { WebhookEvent } from '../generated/prisma/client';
import type { InboxInsert, InboxRepository } from './inbox.repository';

interface Waiting {
  id: string;
  values: InboxInsert;
  resolve: (row: WebhookEvent | null) => void;
  reject: (error: unknown) => void;
}

/** Single-row inserts in flight at once when a failed batch is retried row by row. */
const ROW_BY_ROW_CONCURRENCY = 8;

/**
 * Stores callbacks in the inbox with group inserts: when no insert is running, an event is written
 * at once (no added latency); events arriving while one runs wait for it and are then written
 * together in one multi-row `INSERT … ON CONFLICT (dedupe_key) DO NOTHING`, one commit for all.
 * Under load this turns hundreds of commits a second into a few dozen larger ones. A batch whose
 * statement fails is inserted again row by row (ROW_BY_ROW_CONCURRENCY at a time), so one row the
 * database refuses fails alone and its neighbours are stored. The SQL is InboxRepository.insertMany.
 * Events a full apply queue leaves in the inbox are marked due in groups too (`markDue`).
 */
export class InboxWriter {
  private waiting: Waiting[] = [];
  private running = 0;
  private dueWaiting: Array<{ id: string; resolve: () => void; reject: (error: unknown) => void }> = [];
  private markingDue = false;

  /**
   * @param maxConcurrent inserts in flight at once (each takes a pool connection).
   * @param maxBatch rows per statement at most.
   */
  constructor(
    private readonly repository: InboxRepository,
    private readonly maxConcurrent = 2,
    private readonly maxBatch = 200,
  ) {}

  /** Stores one event; resolves to its row, or null when an event with its dedupe key is already stored. */
  insert(values: InboxInsert): Promise<WebhookEvent | null> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ id: randomUUID(), values, resolve, reject });
      this.flush();
    });
  }

  /**
   * Marks event `id` due now (InboxRepository.markDue), grouped the same way: one statement at a
   * time, the ids arriving meanwhile marked together by the next. Resolves once it is written.
   */
  markDue(id: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.dueWaiting.push({ id, resolve, reject });
      void this.flushDue();
    });
  }

  private async flushDue(): Promise<void> {
    if (this.markingDue) return;
    this.markingDue = true;
    try {
      while (this.dueWaiting.length > 0) {
        const batch = this.dueWaiting.splice(0, this.maxBatch);
        try {
          await this.repository.markDue(
            batch.map((waiting) => waiting.id),
            new Date(),
          );
          for (const waiting of batch) waiting.resolve();
        } catch (error) {
          for (const waiting of batch) waiting.reject(error);
        }
      }
    } finally {
      this.markingDue = false;
    }
  }

  private flush(): void {
    while (this.running < this.maxConcurrent && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.maxBatch);
      this.running += 1;
      void this.write(batch).finally(() => {
        this.running -= 1;
        this.flush();
      });
    }
  }

  private async write(batch: Waiting[]): Promise<void> {
    let inserted: WebhookEvent[];
    try {
      inserted = await this.insertRows(batch);
    } catch (error) {
      if (batch.length === 1) {
        batch[0].reject(error);
        return;
      }
      // One bad row fails a whole statement: insert each on its own (a few at a time), so that only it fails.
      for (let i = 0; i < batch.length; i += ROW_BY_ROW_CONCURRENCY) {
        await Promise.all(batch.slice(i, i + ROW_BY_ROW_CONCURRENCY).map((waiting) => this.write([waiting])));
      }
      return;
    }
    const byId = new Map(inserted.map((row) => [row.id, row]));
    for (const waiting of batch) waiting.resolve(byId.get(waiting.id) ?? null);
  }

  private insertRows(batch: Waiting[]): Promise<WebhookEvent[]> {
    return this.repository.insertMany(batch.map(({ id, values }) => ({ id, values })));
  }
}
