import 'reflect-metadata';
import { Transform, Type } from 'class-transformer';
import { IsInt, IsString, Max, Min } from 'class-validator';
import { ValidationError } from './errors';
import { createValidationPipe, OptionalNonNull, ParseCountryPipe, ZeroOrBetween } from './validation';

class OptionalQuery {
  @OptionalNonNull()
  @IsInt()
  limit?: number;

  @OptionalNonNull()
  @IsString()
  order = 'desc';
}

class RequiredQuery {
  @IsString()
  from!: string;
}

describe('the global validation pipe', () => {
  const query = (metatype: new () => object) => ({ type: 'query' as const, metatype, data: undefined });

  it('turns an empty query into the DTO, every time, defaults included', async () => {
    const pipe = createValidationPipe();
    for (let i = 0; i < 3; i++) {
      const first = await pipe.transform({}, query(OptionalQuery));
      expect(first).toBeInstanceOf(OptionalQuery);
      expect(first).toEqual(Object.assign(new OptionalQuery(), {}));
      (first as OptionalQuery).limit = 5; // a fresh instance each time: mutating one changes no other
    }
    expect(await pipe.transform({}, query(OptionalQuery))).not.toHaveProperty('limit', 5);
  });

  it('still refuses an empty query missing a required field, every time', async () => {
    const pipe = createValidationPipe();
    for (let i = 0; i < 2; i++) {
      await expect(pipe.transform({}, query(RequiredQuery))).rejects.toBeInstanceOf(ValidationError);
    }
  });

  it('validates a non-empty query after an empty one passed', async () => {
    const pipe = createValidationPipe();
    await pipe.transform({}, query(OptionalQuery));
    await expect(pipe.transform({ limit: 'x' }, query(OptionalQuery))).rejects.toBeInstanceOf(ValidationError);
    await expect(pipe.transform({ other: '1' }, query(OptionalQuery))).rejects.toBeInstanceOf(ValidationError);
  });
});

describe('OptionalNonNull', () => {
  class Body {
    @OptionalNonNull()
    @IsString()
    note?: string;
  }
  const body = { type: 'body' as const, metatype: Body, data: undefined };

  it('lets an absent field through unchecked, and checks a given one', async () => {
    const pipe = createValidationPipe();
    await expect(pipe.transform({}, body)).resolves.toBeInstanceOf(Body);
    await expect(pipe.transform({ note: 'x' }, body)).resolves.toEqual(Object.assign(new Body(), { note: 'x' }));
    await expect(pipe.transform({ note: 1 }, body)).rejects.toMatchObject({
      errors: [{ field: 'note', message: 'note must be a string' }],
    });
  });

  it('refuses an explicit null with one message naming the field', async () => {
    await expect(createValidationPipe().transform({ note: null }, body)).rejects.toMatchObject({
      errors: [{ field: 'note', message: 'note must not be null' }],
    });
  });
});

describe('ZeroOrBetween', () => {
  class Funding {
    @ZeroOrBetween(300, 250_000)
    amount!: number;
  }
  const body = { type: 'body' as const, metatype: Funding, data: undefined };

  it('accepts 0 and the range, refuses the rest naming the field', async () => {
    const pipe = createValidationPipe();
    for (const amount of [0, 300, 250_000])
      await expect(pipe.transform({ amount }, body)).resolves.toEqual(Object.assign(new Funding(), { amount }));
    for (const amount of [1, 299, 250_001, 300.5, -300, '300'])
      await expect(pipe.transform({ amount }, body)).rejects.toMatchObject({
        errors: [{ field: 'amount', message: 'amount must be 0, or between 300 and 250000' }],
      });
  });
});

describe('the global validation pipe: remembered valid queries', () => {
  class PageQuery {
    @OptionalNonNull()
    @Type(() => Number)
    @IsInt()
    @Min(1)
    @Max(100)
    limit?: number;

    @OptionalNonNull()
    @IsString()
    cursor?: string;
  }
  const query = { type: 'query' as const, metatype: PageQuery, data: undefined };

  it('builds a fresh, transformed instance for a repeated valid query, and still refuses invalid ones', async () => {
    const pipe = createValidationPipe();
    for (let i = 0; i < 3; i++) {
      const page = await pipe.transform({ limit: '20' }, query);
      expect(page).toBeInstanceOf(PageQuery);
      expect(page).toEqual(Object.assign(new PageQuery(), { limit: 20 }));
      (page as PageQuery).limit = 99; // a fresh instance each time: mutating one changes no other
    }
    for (const invalid of [{ limit: '0' }, { limit: '20', other: 'x' }, { limit: 'twenty' }, { limit: ['20', '21'] }]) {
      for (let i = 0; i < 2; i++) await expect(pipe.transform(invalid, query)).rejects.toBeInstanceOf(ValidationError);
    }
    // Another order of the same names is another query string: validated, then remembered too.
    expect(await pipe.transform({ cursor: 'abc', limit: '5' }, query)).toEqual(
      Object.assign(new PageQuery(), { cursor: 'abc', limit: 5 }),
    );
  });
});

describe('the global validation pipe: remembered queries whose instance holds objects', () => {
  class TagsQuery {
    @OptionalNonNull()
    @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.split(',') : value))
    @IsString({ each: true })
    tags?: string[];
  }
  const query = { type: 'query' as const, metatype: TagsQuery, data: undefined };

  it('builds a new instance each time, sharing no array with an earlier answer', async () => {
    const pipe = createValidationPipe();
    for (let i = 0; i < 3; i++) {
      const tags = (await pipe.transform({ tags: 'a,b' }, query)) as TagsQuery;
      expect(tags).toBeInstanceOf(TagsQuery);
      expect(tags.tags).toEqual(['a', 'b']);
      tags.tags?.push('mutated'); // a fresh array each time: mutating one changes no other
    }
  });
});

describe('the global validation pipe: text PostgreSQL cannot store', () => {
  const pipe = createValidationPipe();
  const refused = async (value: unknown, metadata: Parameters<typeof pipe.transform>[1]) => {
    try {
      await pipe.transform(value, metadata);
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      return (error as ValidationError).errors.map((e) => e.field);
    }
    throw new Error('not refused');
  };

  it('refuses NUL and lone surrogates in bodies, queries and path parameters, whatever their type, naming the field', async () => {
    expect(await refused({ from: 'a\u0000' }, { type: 'query', metatype: RequiredQuery, data: undefined })).toEqual([
      'from',
    ]);
    expect(await refused({ a: { b: ['\ud800'] } }, { type: 'body', metatype: Object, data: undefined })).toEqual([
      'a.b.0',
    ]);
    expect(await refused('\udc00', { type: 'param', metatype: String, data: 'country' })).toEqual(['country']);
    expect(await refused({ x: '\u0000' }, { type: 'body', metatype: Object, data: 'payer' })).toEqual(['payer.x']);
  });

  it('leaves other arguments and well-formed text alone', async () => {
    const client = { name: 'a\u0000' };
    expect(await pipe.transform(client, { type: 'custom', metatype: Object, data: undefined })).toBe(client);
    expect(await pipe.transform('Ñandú 😀', { type: 'param', metatype: String, data: 'id' })).toBe('Ñandú 😀');
  });
});

describe('ParseCountryPipe', () => {
  const pipe = new ParseCountryPipe();

  it('takes ISO 3166-1 alpha-2 codes in any case, upper-cased', () => {
    expect(pipe.transform('ke')).toBe('KE');
    expect(pipe.transform(' NG ')).toBe('NG');
  });

  it('refuses anything else with 400 naming the field', () => {
    for (const bad of ['ZZ', 'ZZZ', 'K', '', '12', 'KEN', '\u0000', undefined]) {
      expect(() => pipe.transform(bad)).toThrow(
        expect.objectContaining({ errors: [expect.objectContaining({ field: 'country' })] }),
      );
    }
  });
});
