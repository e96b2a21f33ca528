import { afterCommit, runTracked } from './after-commit';

/** A stand-in for Prisma's `$transaction(fn)`: runs `fn` with a new client, and "commits" unless it or `failCommit` throws. */
function begin(failCommit = false) {
  return async <T>(body: (tx: object) => Promise<T>): Promise<T> => {
    const result = await body({});
    if (failCommit) throw new Error('commit failed');
    return result;
  };
}

describe('afterCommit / runTracked', () => {
  it('runs the registered work after the commit, in order, and answers the body result', async () => {
    const done: string[] = [];
    const result = await runTracked(begin(), (tx) => {
      expect(afterCommit(tx, () => done.push('a'))).toBe(true);
      afterCommit(tx, () => done.push('b'));
      expect(done).toEqual([]);
      return Promise.resolve(42);
    });
    expect(result).toBe(42);
    expect(done).toEqual(['a', 'b']);
  });

  it('drops the work when the body throws or the commit fails', async () => {
    const done: string[] = [];
    await expect(
      runTracked(begin(), (tx) => {
        afterCommit(tx, () => done.push('body failed'));
        return Promise.reject(new Error('rolled back'));
      }),
    ).rejects.toThrow('rolled back');
    await expect(
      runTracked(begin(true), (tx) => {
        afterCommit(tx, () => done.push('commit failed'));
        return Promise.resolve();
      }),
    ).rejects.toThrow('commit failed');
    expect(done).toEqual([]);
  });

  it('refuses a client that is not a tracked transaction (false, nothing registered)', () => {
    expect(afterCommit({}, () => undefined)).toBe(false);
  });
});
