import { randomUUID } from 'node:crypto';
import { ValidationError } from './errors';
import { decodeCursor, encodeCursor } from './pagination';

describe('keyset cursors', () => {
  it('round-trips a position', () => {
    const position = { createdAt: new Date('2026-11-23T10:00:00.123Z'), id: randomUUID() };
    expect(decodeCursor(encodeCursor(position))).toEqual(position);
  });

  it('encodes a position whose createdAt is isoTime text as the same position given as a Date', () => {
    const id = randomUUID();
    const asText = encodeCursor({ createdAt: '2026-11-23T10:00:00.123Z', id });
    expect(asText).toBe(encodeCursor({ createdAt: new Date('2026-11-23T10:00:00.123Z'), id }));
    expect(decodeCursor(asText)).toEqual({ createdAt: new Date('2026-11-23T10:00:00.123Z'), id });
  });

  it.each([
    ['not base64 JSON', 'nope'],
    ['a bad date', Buffer.from(JSON.stringify(['yesterday', randomUUID()])).toString('base64url')],
    [
      'an id that is not a UUID',
      Buffer.from(JSON.stringify(['2026-11-23T10:00:00Z', "x' OR 1=1"])).toString('base64url'),
    ],
    ['a number for the id', Buffer.from(JSON.stringify(['2026-11-23T10:00:00Z', 7])).toString('base64url')],
  ])('refuses a token with %s as a 400 on the cursor field', (_what, token) => {
    expect(() => decodeCursor(token)).toThrow(ValidationError);
    try {
      decodeCursor(token);
    } catch (error) {
      expect((error as ValidationError).errors).toEqual([
        { field: 'cursor', message: 'cursor is not a valid page cursor' },
      ]);
    }
  });
});
