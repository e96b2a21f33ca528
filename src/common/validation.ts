import {
  type ArgumentMetadata,
  ParseUUIDPipe,
  ValidationError as ClassValidatorError,
  ValidationPipe,
} from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { FieldError, ValidationError } from './errors';

/** `@Transform` helpers for DTO strings: trimmed, and optionally upper- or lower-cased (other values pass through). */
export const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);
export const upper = ({ value }: { value: unknown }) =>
  typeof value === 'string' ? value.trim().toUpperCase() : value;
export const lower = ({ value }: { value: unknown }) =>
  typeof value === 'string' ? value.trim().toLowerCase() : value;

/** Flattens class-validator's nested errors into `{field, message}` with dotted field paths. */
export function flattenValidationErrors(errors: ClassValidatorError[], parent = ''): FieldError[] {
  return errors.flatMap((error) => {
    const field = parent ? `${parent}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) => ({ field, message }));
    return [...own, ...flattenValidationErrors(error.children ?? [], field)];
  });
}

/**
 * ValidationPipe that remembers, per query DTO class, that an empty query string is valid: the
 * answer for `{}` never changes, so later empty queries (most GETs) skip class-validator and only
 * build the DTO instance. Anything else is validated as usual.
 */
class GatewayValidationPipe extends ValidationPipe {
  private readonly validWhenEmpty = new WeakSet<object>();

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const type = metadata.metatype;
    const emptyQuery =
      metadata.type === 'query' &&
      typeof type === 'function' &&
      value !== null &&
      typeof value === 'object' &&
      Object.keys(value).length === 0;
    if (emptyQuery && this.validWhenEmpty.has(type)) return plainToInstance(type, {});
    const result = await super.transform(value, metadata);
    if (emptyQuery) this.validWhenEmpty.add(type);
    return result;
  }
}

/**
 * The global validation pipe: whitelist (unknown fields are refused, not silently dropped),
 * transform to DTO classes, and a 400 `validation_failed` problem listing every failing field.
 */
export function createValidationPipe(): ValidationPipe {
  return new GatewayValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    transformOptions: { enableImplicitConversion: false },
    exceptionFactory: (errors) => new ValidationError(flattenValidationErrors(errors)),
  });
}

/** Path-parameter pipe for gateway ids: a UUID, else 400 `validation_failed` naming the field. */
export function ParseIdPipe(field = 'id'): ParseUUIDPipe {
  return new ParseUUIDPipe({
    exceptionFactory: () => new ValidationError([{ field, message: `${field} must be a UUID` }]),
  });
}
