import {
  type ArgumentMetadata,
  ParseUUIDPipe,
  type PipeTransform,
  type ValidationError as ClassValidatorError,
  ValidationPipe,
} from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { isISO31661Alpha2 } from 'class-validator';
import { type FieldError, ValidationError } from './errors';
import { unstorableFields } from './storable-text';

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
 * ValidationPipe with one check before any other, for every body, query and path parameter of
 * every route (whatever its type, DTO or not): a string or object key holding a NUL or an
 * unpaired UTF-16 surrogate is refused with 400 `validation_failed` naming the field, since
 * PostgreSQL cannot store it and the provider cannot be sent it (storable-text.ts). The provider's
 * callback route reads its raw request (`@Req()`) and so is not checked here: its payload is
 * stored by the webhook inbox.
 *
 * It also remembers, per query DTO class, that an empty query string is valid: the answer for `{}`
 * never changes, so later empty queries (most GETs) skip class-validator and only build the DTO
 * instance. Anything else is validated as usual.
 */
class GatewayValidationPipe extends ValidationPipe {
  private readonly validWhenEmpty = new WeakSet<object>();

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'body' || metadata.type === 'query' || metadata.type === 'param') {
      const unstorable = unstorableFields(value, metadata.data ?? '');
      if (unstorable.length) throw new ValidationError(unstorable);
    }
    const type = metadata.metatype;
    const emptyQuery =
      metadata.type === 'query' &&
      typeof type === 'function' &&
      value !== null &&
      typeof value === 'object' &&
      Object.keys(value).length === 0;
    if (emptyQuery && this.validWhenEmpty.has(type)) return plainToInstance(type, {});
    const result: unknown = await super.transform(value, metadata);
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

/**
 * Path-parameter pipe for a country: an ISO 3166-1 alpha-2 code (any case, trimmed) → upper case
 * (`ke` → `KE`), else 400 `validation_failed` naming the field, before the provider is asked.
 */
export class ParseCountryPipe implements PipeTransform<unknown, string> {
  constructor(private readonly field = 'country') {}

  transform(value: unknown): string {
    const code = typeof value === 'string' ? value.trim().toUpperCase() : '';
    if (!isISO31661Alpha2(code))
      throw new ValidationError([
        { field: this.field, message: `${this.field} must be an ISO 3166-1 alpha-2 country code such as KE` },
      ]);
    return code;
  }
}
