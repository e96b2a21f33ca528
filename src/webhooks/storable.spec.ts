import fc from 'fast-check';
import { MAX_CALLBACK_DEPTH, storableJson, storableText, TooDeepError } from './storable';

describe('storable callbacks', () => {
  it('replaces NUL and lone surrogates by U+FFFD, keeps valid pairs and everything else', () => {
    expect(storableText('a\u0000b')).toBe('a\ufffdb');
    expect(storableText('x\ud800y')).toBe('x\ufffdy');
    expect(storableText('\udc00')).toBe('\ufffd');
    expect(storableText('\ud800\ud800\udc00')).toBe('\ufffd\ud800\udc00');
    expect(storableText('ok 😀 \u0001 é')).toBe('ok 😀 \u0001 é');
  });

  it('leaves no NUL or lone surrogate in any string (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        const clean = storableText(s);
        expect(clean).not.toContain('\u0000');
        expect(clean.length).toBe(s.length);
        // Well formed: encodes to UTF-8 and back unchanged.
        expect(Buffer.from(clean, 'utf8').toString('utf8')).toBe(clean);
      }),
    );
  });

  it('sanitizes keys and values at every level and says whether it replaced anything', () => {
    expect(storableJson({ a: ['x\u0000', { ['k\ud800']: 1 }], b: null })).toEqual({
      value: { a: ['x\ufffd', { 'k\ufffd': 1 }], b: null },
      replaced: true,
    });
    const plain = { event: 'e', data: { id: 1, list: [true, 'ok'] } };
    expect(storableJson(plain)).toEqual({ value: plain, replaced: false });
  });

  it(`refuses nesting deeper than ${MAX_CALLBACK_DEPTH} levels without exhausting the stack`, () => {
    const nest = (levels: number) => JSON.parse('['.repeat(levels) + ']'.repeat(levels));
    expect(() => storableJson(nest(MAX_CALLBACK_DEPTH))).not.toThrow();
    expect(() => storableJson(nest(MAX_CALLBACK_DEPTH + 1))).toThrow(TooDeepError);
    expect(() => storableJson(nest(100_000))).toThrow(TooDeepError);
  });
});
