import { FixedWindowThrottlerStorage } from './fixed-window.storage';

describe('FixedWindowThrottlerStorage', () => {
  let now = 1_000_000;
  const storage = new FixedWindowThrottlerStorage(() => now);

  it('counts hits per key within the window and blocks above the limit until it ends', async () => {
    for (let i = 1; i <= 3; i++) {
      expect(await storage.increment('a', 60_000, 3, 0, 'default')).toMatchObject({ totalHits: i, isBlocked: false });
    }
    const blocked = await storage.increment('a', 60_000, 3, 0, 'default');
    expect(blocked).toMatchObject({ isBlocked: true, timeToBlockExpire: 60 });
    expect(await storage.increment('b', 60_000, 3, 0, 'default')).toMatchObject({ totalHits: 1, isBlocked: false });
    now += 30_000;
    expect((await storage.increment('a', 60_000, 3, 0, 'default')).timeToBlockExpire).toBe(30);
    now += 30_001;
    expect(await storage.increment('a', 60_000, 3, 0, 'default')).toMatchObject({ totalHits: 1, isBlocked: false });
  });

  it('honours a block duration longer than the window', async () => {
    await storage.increment('c', 1_000, 1, 0, 'default');
    const blocked = await storage.increment('c', 1_000, 1, 10_000, 'default');
    expect(blocked).toMatchObject({ isBlocked: true, timeToBlockExpire: 10 });
    now += 5_000;
    expect((await storage.increment('c', 1_000, 1, 10_000, 'default')).isBlocked).toBe(true);
    now += 5_001;
    expect((await storage.increment('c', 1_000, 1, 10_000, 'default')).isBlocked).toBe(false);
  });
});
