import { isUnstorable, storableJson, storableText, unstorableFields } from './storable-text';

describe('storable text', () => {
  it('tells NUL and unpaired surrogates from well-formed text, astral characters included', () => {
    for (const bad of ['\u0000', 'a\u0000b', '\ud800', 'x\udfff', '\udc00\ud800', '😀\ud83d'])
      expect(isUnstorable(bad)).toBe(true);
    for (const good of ['', 'Ada Obi', 'Ñandú', '😀', '\ud83d\ude00', '\uffff', '\u0001'])
      expect(isUnstorable(good)).toBe(false);
  });

  it('makes text storable: NUL removed, each lone surrogate replaced by U+FFFD, pairs kept', () => {
    expect(storableText('a\u0000b\ud800c\udc00😀')).toBe('ab\ufffdc\ufffd😀');
    expect(storableText('plain')).toBe('plain');
    expect(storableJson({ ['a\u0000']: ['\ud800', 1, null, true] })).toEqual({ a: ['\ufffd', 1, null, true] });
  });

  it('names every field (dotted path) whose value or key is unstorable, and nothing else', () => {
    const body = { lastName: 'x\u0000', payer: { accountName: '\ud800', ok: 'fine' }, items: ['ok', 'b\udc00'], n: 1 };
    expect(unstorableFields(body).map((e) => e.field)).toEqual(['lastName', 'payer.accountName', 'items.1']);
    expect(unstorableFields({ ['k\u0000']: 'v' })).toEqual([
      { field: 'k', message: 'k: field names must not contain NUL characters or unpaired UTF-16 surrogates' },
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
