import { Injectable, Logger } from '@nestjs/common';
import { ShutdownService } from '../lifecycle/shutdown.service';
import { isDatabaseUnavailable } from './unavailable';

/** A write kept in memory until the database takes it. */
interface PendingWrite {
  /** What it writes, for the log (e.g. `ledger 7c59… → initiated`). */
  what: string;
  /** Runs the write; rejects with a database-unavailable error while the database is away. */
  write: () => Promise<unknown>;
  /** When it was kept, ms since the epoch. */
  since: number;
}

/** The most writes kept at once; past it a new one is dropped (logged) and left to reconciliation. */
export const PENDING_WRITES_MAX = 1000;
/** How long a write is tried before it is dropped (logged) and left to reconciliation, ms. */
export const PENDING_WRITE_MAX_AGE_MS = 5 * 60_000;
/** First wait before a write is tried again, ms; it doubles after each failed try up to PENDING_RETRY_MAX_MS. */
const PENDING_RETRY_FIRST_MS = 100;
const PENDING_RETRY_MAX_MS = 1000;

/**
 * Writes that finish a money request cut by a database outage, kept in this process's memory and
 * written as soon as the database is back (not only after SETTLEMENT_DEADLINE). When a request
 * wrote its ledger row ahead of the provider call and the database went away afterwards, what the
 * gateway knows and could not write is kept here: the provider's answer (the row's move and the
 * Idempotency-Key's answer, LedgerService), the release of a row whose provider call was never made,
 * and the key's claim (IdempotencyService). The client that got 503 `database_unavailable` retries
 * with the same key and gets the request's one outcome; the provider is not called again.
 *
 * Writes run one at a time in the order they were kept (a key's claim is settled after its row's
 * move). A write failing for the database (`isDatabaseUnavailable`) is tried again after a wait
 * (100 ms doubling to 1 s); any other failure drops it (logged). Bounded: at most PENDING_WRITES_MAX
 * writes, each tried for PENDING_WRITE_MAX_AGE_MS; a write dropped (or lost with the process) leaves
 * its row `created`/`unknown` for reconciliation, as a crash would. At shutdown the writes still
 * kept are logged.
 */
@Injectable()
export class PendingWrites {
  private readonly logger = new Logger('PendingWrites');
  private readonly queue: PendingWrite[] = [];
  private running?: Promise<void>;
  private timer?: NodeJS.Timeout;
  private wake?: () => void;
  private closed = false;

  constructor(shutdown: ShutdownService) {
    // Before the pools close: the writes the database takes by then are written, the rest logged.
    shutdown.register('jobs', 'pending writes', () => this.close());
  }

  /**
   * Keeps `write` (described by `what`) to be run as soon as the database takes it (see the class
   * comment). Returns false when it was not kept (the queue is full, or the instance is closing).
   */
  keep(what: string, write: () => Promise<unknown>): boolean {
    if (this.closed || this.queue.length >= PENDING_WRITES_MAX) {
      this.logger.error({ what, kept: this.queue.length }, 'pending write dropped: left to reconciliation');
      return false;
    }
    this.queue.push({ what, write, since: Date.now() });
    this.logger.warn({ what, kept: this.queue.length }, 'database unavailable: write kept until it is back');
    this.running ??= this.drain().finally(() => {
      this.running = undefined;
    });
    return true;
  }

  /** How many writes are kept now (for /metrics and tests). */
  get size(): number {
    return this.queue.length;
  }

  /** Resolves once every write kept now has been written or dropped. */
  async settled(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Runs the kept writes in order, waiting while the database is away. */
  private async drain(): Promise<void> {
    let wait = PENDING_RETRY_FIRST_MS;
    // Let the request that kept the first write finish keeping its others (its key's claim) first.
    await this.sleep(PENDING_RETRY_FIRST_MS);
    while (this.queue.length > 0 && !this.closed) {
      const head = this.queue[0];
      try {
        await head.write();
        this.queue.shift();
        wait = PENDING_RETRY_FIRST_MS;
        this.logger.log({ what: head.what, kept: this.queue.length }, 'pending write written');
      } catch (error) {
        if (!isDatabaseUnavailable(error)) {
          this.queue.shift();
          this.logger.error({ what: head.what, error: (error as Error).message }, 'pending write failed: dropped');
        } else if (Date.now() - head.since > PENDING_WRITE_MAX_AGE_MS) {
          this.queue.shift();
          this.logger.error({ what: head.what }, 'pending write too old: dropped, left to reconciliation');
        } else {
          await this.sleep(wait);
          wait = Math.min(wait * 2, PENDING_RETRY_MAX_MS);
        }
      }
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.wake = resolve;
      this.timer = setTimeout(resolve, ms);
    });
  }

  /** At shutdown: stops trying; what is still kept is logged and left to reconciliation. */
  private async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.wake?.();
    await this.running;
    for (const { what } of this.queue) this.logger.error({ what }, 'pending write not written at shutdown');
  }
}
