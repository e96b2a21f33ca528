import { ApplyQueue } from './apply-queue';

/** A worker whose batches finish when the test says so. */
function controlledWorker() {
  const batches: Array<{ items: number[]; finish: () => void; fail: (error: Error) => void }> = [];
  const worker = (items: number[]) =>
    new Promise<string[]>((resolve, reject) => {
      batches.push({ items, finish: () => resolve(items.map((i) => `r${i}`)), fail: reject });
    });
  return { batches, worker };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('ApplyQueue', () => {
  it('hands items pushed together to the free workers in arrival order, each its share, at most maxBatch', async () => {
    const { batches, worker } = controlledWorker();
    const queue = new ApplyQueue(worker, 2, 3);
    const results = Array.from({ length: 10 }, (_, i) => queue.push(i));
    await tick();
    // 10 waiting, 2 free workers: 5 each, capped at 3.
    expect(batches.map((b) => b.items)).toEqual([
      [0, 1, 2],
      [3, 4, 5],
    ]);
    expect(queue.length()).toBe(4);
    expect(queue.running()).toBe(6);
    batches[0].finish();
    await tick();
    // One free worker takes the oldest waiting, up to maxBatch.
    expect(batches[2].items).toEqual([6, 7, 8]);
    batches[1].finish();
    await tick();
    expect(batches[3].items).toEqual([9]);
    batches[2].finish();
    batches[3].finish();
    expect(await Promise.all(results)).toEqual(Array.from({ length: 10 }, (_, i) => `r${i}`));
    expect(queue.idle()).toBe(true);
  });

  it('applies an item pushed to an idle queue at once, alone', async () => {
    const { batches, worker } = controlledWorker();
    const queue = new ApplyQueue(worker, 4, 100);
    const result = queue.push(7);
    await tick();
    expect(batches.map((b) => b.items)).toEqual([[7]]);
    batches[0].finish();
    expect(await result).toBe('r7');
  });

  it('rejects every item of a batch whose worker throws, and goes on with the next batches', async () => {
    const { batches, worker } = controlledWorker();
    const queue = new ApplyQueue(worker, 1, 2);
    const first = [queue.push(1), queue.push(2)].map((p) => p.catch((error: Error) => error.message));
    const later = queue.push(3);
    await tick();
    batches[0].fail(new Error('database gone'));
    expect(await Promise.all(first)).toEqual(['database gone', 'database gone']);
    await tick();
    expect(batches[1].items).toEqual([3]);
    batches[1].finish();
    expect(await later).toBe('r3');
  });

  it('says when it is idle: drained() resolves and onIdle runs once the last batch is done', async () => {
    const { batches, worker } = controlledWorker();
    const queue = new ApplyQueue(worker, 2, 10);
    let idleCalls = 0;
    queue.onIdle = () => (idleCalls += 1);
    await queue.drained(); // already idle
    void queue.push(1);
    expect(queue.idle()).toBe(false); // pushed, not yet handed out
    let drained = false;
    const waiting = queue.drained().then(() => (drained = true));
    await tick();
    expect(drained).toBe(false);
    batches[0].finish();
    await waiting;
    expect(drained).toBe(true);
    expect(idleCalls).toBe(1);
  });
});
