import 'reflect-metadata';
import { IsInt, IsOptional, IsString } from 'class-validator';
import { ValidationError } from './errors';
import { createValidationPipe } from './validation';

class OptionalQuery {
  @IsOptional()
  @IsInt()
  limit?: number;

  @IsOptional()
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
