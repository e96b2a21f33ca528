interface Waiting<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

/**
 * The apply queue: items (stored inbox events) wait in arrival order and are handed, in batches, to
 * at most `concurrency` runs of `worker` at once. A free worker takes the oldest waiting items, up to
 * `maxBatch` and no more than its share of what waits (waiting ÷ free workers, rounded up), so a
 * quiet queue applies each event at once on its own while a busy one applies them many per batch
 * (the work of a batch is then a few statements instead of a few per event: WebhooksService).
 * Items pushed in the same tick are handed out together. `worker` resolves to one result per item,
 * in order; when it throws, every item of the batch is rejected with that error.
 */
export class ApplyQueue<T, R> {
  private waiting: Array<Waiting<T, R>> = [];
  private workers = 0;
  private inFlight = 0;
  private scheduled = false;
  private idleWaiters: Array<() => void> = [];
  /** Called each time the queue becomes idle (nothing waiting, nothing running). */
  onIdle: () => void = () => undefined;

  /**
   * @param worker applies one batch (never empty); one result per item, in order.
   * @param concurrency batches in flight at once (WEBHOOK_APPLY_CONCURRENCY).
   * @param maxBatch items per batch at most.
   */
  constructor(
    private readonly worker: (items: T[]) => Promise<R[]>,
    private readonly concurrency: number,
    private readonly maxBatch: number,
  ) {}

  /** Queues `item`; resolves to its result once its batch has run (rejects when that batch failed). */
  push(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        queueMicrotask(() => {
          this.scheduled = false;
          this.next();
        });
      }
    });
  }

  /** Items waiting for a worker. */
  length(): number {
    return this.waiting.length;
  }

  /** Items being applied now (in batches in flight). */
  running(): number {
    return this.inFlight;
  }

  /** Nothing waiting and nothing running. */
  idle(): boolean {
    return this.waiting.length === 0 && this.inFlight === 0 && !this.scheduled;
  }

  /** Resolves when the queue is idle (at once if it is). */
  drained(): Promise<void> {
    if (this.idle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private next(): void {
    while (this.workers < this.concurrency && this.waiting.length > 0) {
      const share = Math.ceil(this.waiting.length / (this.concurrency - this.workers));
      const batch = this.waiting.splice(0, Math.min(this.maxBatch, share));
      this.workers += 1;
      this.inFlight += batch.length;
      void this.run(batch);
    }
    if (this.idle()) this.becameIdle();
  }

  private async run(batch: Array<Waiting<T, R>>): Promise<void> {
    try {
      const results = await this.worker(batch.map((waiting) => waiting.item));
      batch.forEach((waiting, i) => waiting.resolve(results[i]));
    } catch (error) {
      for (const waiting of batch) waiting.reject(error);
    } finally {
      this.workers -= 1;
      this.inFlight -= batch.length;
      this.next();
    }
  }

  private becameIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
    this.onIdle();
  }
}
