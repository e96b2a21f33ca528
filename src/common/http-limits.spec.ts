import { exceedsJsonDepth } from './http-limits';

describe('exceedsJsonDepth', () => {
  const deep = (n: number) => Buffer.from('['.repeat(n) + ']'.repeat(n));

  it('allows the limit and refuses one level more, for arrays and objects', () => {
    expect(exceedsJsonDepth(deep(32), 32)).toBe(false);
    expect(exceedsJsonDepth(deep(33), 32)).toBe(true);
    expect(exceedsJsonDepth(deep(10_000), 32)).toBe(true);
    const objects = (n: number) => Buffer.from('{"a":'.repeat(n) + '1' + '}'.repeat(n));
    expect(exceedsJsonDepth(objects(3), 3)).toBe(false);
    expect(exceedsJsonDepth(objects(4), 3)).toBe(true);
  });

  it('counts depth, not brackets: siblings do not add up', () => {
    expect(exceedsJsonDepth(Buffer.from(JSON.stringify(Array.from({ length: 1000 }, () => [[1]]))), 3)).toBe(false);
  });

  it('ignores brackets inside strings, escaped quotes and backslashes included', () => {
    expect(exceedsJsonDepth(Buffer.from(JSON.stringify({ s: '[[[[[[[[{{{{{{' })), 2)).toBe(false);
    expect(exceedsJsonDepth(Buffer.from(JSON.stringify({ s: 'a"[[[[\\[[[["' })), 2)).toBe(false);
    expect(exceedsJsonDepth(Buffer.from(JSON.stringify({ s: 'end\\', t: [[[[1]]]] })), 2)).toBe(true);
    expect(exceedsJsonDepth(Buffer.from(JSON.stringify({ ['[[[[[[']: 'é😀[[[[[[' })), 2)).toBe(false);
  });
});
