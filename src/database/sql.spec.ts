import { types as pgTypes } from 'pg';
import { parseTimestamptz } from './sql';

describe('parseTimestamptz', () => {
  const nodePostgres = pgTypes.getTypeParser(1184, 'text') as (value: string) => unknown;

  it('reads what PostgreSQL writes to the millisecond, as node-postgres does, whatever the offset', () => {
    for (const text of [
      '2026-11-25 10:42:27+00',
      '2026-11-25 10:42:27.1+00',
      '2026-11-25 10:42:27.123+00',
      '2026-11-25 10:42:27.999+00',
      '2026-11-25 10:42:27.057+00',
      '2024-02-29 23:59:59.5+05:30',
      '1999-12-31 23:00:00.001-08',
      '1900-01-01 00:00:00+00:19:32',
      '0100-03-01 12:00:00+00',
    ]) {
      const parsed = parseTimestamptz(text);
      expect(parsed).toBeInstanceOf(Date);
      expect((parsed as Date).getTime()).toBe((nodePostgres(text) as Date).getTime());
    }
    expect((parseTimestamptz('2026-11-25 10:42:27.123456+00') as Date).toISOString()).toBe('2026-11-25T10:42:27.123Z');
    expect((parseTimestamptz('2026-11-25 12:42:27.5+02') as Date).toISOString()).toBe('2026-11-25T10:42:27.500Z');
  });

  it('leaves anything else to node-postgres (BC, infinity, short years)', () => {
    for (const text of [
      'infinity',
      '-infinity',
      '2026-11-25 10:42:27+00 BC',
      '0099-01-01 00:00:00+00',
      '12026-01-01 00:00:00+00',
    ]) {
      expect(parseTimestamptz(text)).toEqual(nodePostgres(text));
    }
  });
});
