import fc from 'fast-check';
import { MAX_JSON_DEPTH } from './http-limits';
import { isUnstorable, storableJson, storableText, TooDeepError, unstorableFields } from './storable-text';

describe('storable text', () => {
  it('tells NUL and unpaired surrogates from well-formed text, astral characters included', () => {
    for (const bad of ['\u0000', 'a\u0000b', '\ud800', 'x\udfff', '\udc00\ud800', '😀\ud83d'])
      expect(isUnstorable(bad)).toBe(true);
    for (const good of ['', 'Ada Obi', 'Ñandú', '😀', '\ud83d\ude00', '\uffff', '\u0001'])
      expect(isUnstorable(good)).toBe(false);
  });

  it('makes text storable: each NUL and lone surrogate replaced by U+FFFD, pairs and everything else kept', () => {
    expect(storableText('a\u0000b\ud800c\udc00😀')).toBe('a\ufffdb\ufffdc\ufffd😀');
    expect(storableText('x\ud800y')).toBe('x\ufffdy');
    expect(storableText('\udc00')).toBe('\ufffd');
    expect(storableText('\ud800\ud800\udc00')).toBe('\ufffd\ud800\udc00');
    expect(storableText('ok 😀 \u0001 é')).toBe('ok 😀 \u0001 é');
    expect(storableText('plain')).toBe('plain');
  });

  it('leaves no NUL or lone surrogate in any string, and keeps its length (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        const clean = storableText(s);
        expect(clean).not.toContain('\u0000');
        expect(clean.length).toBe(s.length);
        expect(isUnstorable(clean)).toBe(false);
        // Well formed: encodes to UTF-8 and back unchanged.
        expect(Buffer.from(clean, 'utf8').toString('utf8')).toBe(clean);
      }),
    );
  });

  it('sanitizes keys and values at every level and says whether it replaced anything', () => {
    expect(storableJson({ ['a\u0000']: ['\ud800', 1, null, true] })).toEqual({
      value: { 'a\ufffd': ['\ufffd', 1, null, true] },
      replaced: true,
    });
    expect(storableJson({ a: ['x\u0000', { ['k\ud800']: 1 }], b: null })).toEqual({
      value: { a: ['x\ufffd', { 'k\ufffd': 1 }], b: null },
      replaced: true,
    });
    const plain = { event: 'e', data: { id: 1, list: [true, 'ok'] } };
    expect(storableJson(plain)).toEqual({ value: plain, replaced: false });
  });

  it(`refuses nesting deeper than ${MAX_JSON_DEPTH} levels (the JSON body limit) without exhausting the stack`, () => {
    const nest = (levels: number) => JSON.parse('['.repeat(levels) + ']'.repeat(levels)) as unknown;
    expect(() => storableJson(nest(MAX_JSON_DEPTH))).not.toThrow();
    expect(() => storableJson(nest(MAX_JSON_DEPTH + 1))).toThrow(TooDeepError);
    expect(() => storableJson(nest(100_000))).toThrow(TooDeepError);
  });

  it('names every field (dotted path) whose value or key is unstorable, and nothing else', () => {
    const body = { lastName: 'x\u0000', payer: { accountName: '\ud800', ok: 'fine' }, items: ['ok', 'b\udc00'], n: 1 };
    expect(unstorableFields(body).map((e) => e.field)).toEqual(['lastName', 'payer.accountName', 'items.1']);
    expect(unstorableFields({ ['k\u0000']: 'v' })).toEqual([
      {
        field: 'k\ufffd',
        message: 'k\ufffd: field names must not contain NUL characters or unpaired UTF-16 surrogates',
      },
    ]);
    expect(unstorableFields('\u0000', 'id')).toEqual([
      { field: 'id', message: 'id must not contain NUL characters or unpaired UTF-16 surrogates' },
    ]);
    expect(unstorableFields({ a: 'ok', b: ['😀'] })).toEqual([]);
    expect(
      unstorableFields(
        Array.from({ length: 50 }, () => '\u0000'),
        '',
        5,
      ),
    ).toHaveLength(5);
  });
});
