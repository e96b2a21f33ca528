import { ShutdownService } from '../lifecycle/shutdown.service';
import { PENDING_WRITES_MAX, PendingWrites } from './pending-writes';

const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

describe('PendingWrites', () => {
  let writes: PendingWrites;
  beforeEach(() => {
    writes = new PendingWrites(new ShutdownService());
  });

  it('writes in the order kept, trying again while the database is unavailable', async () => {
    const done: string[] = [];
    let down = 3;
    writes.keep('first', () => {
      if (down-- > 0) return Promise.reject(refused());
      done.push('first');
      return Promise.resolve();
    });
    writes.keep('second', () => {
      done.push('second');
      return Promise.resolve();
    });
    expect(writes.size).toBe(2);
    await writes.settled();
    expect(done).toEqual(['first', 'second']);
    expect(writes.size).toBe(0);
  });

  it('drops a write that fails for another reason than the database, and goes on', async () => {
    const done: string[] = [];
    writes.keep('bug', () => Promise.reject(new TypeError('bug')));
    writes.keep('next', () => {
      done.push('next');
      return Promise.resolve();
    });
    await writes.settled();
    expect(done).toEqual(['next']);
  });

  it(`keeps at most ${PENDING_WRITES_MAX} writes`, async () => {
    let ran = 0;
    const write = () => {
      ran++;
      return Promise.resolve();
    };
    for (let i = 0; i < PENDING_WRITES_MAX; i++) expect(writes.keep(`w${i}`, write)).toBe(true);
    expect(writes.keep('one too many', write)).toBe(false);
    await writes.settled();
    expect(ran).toBe(PENDING_WRITES_MAX);
  });
});
