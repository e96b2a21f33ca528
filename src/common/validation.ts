import {
  applyDecorators,
  type ArgumentMetadata,
  ParseUUIDPipe,
  type PipeTransform,
  type ValidationError as ClassValidatorError,
  ValidationPipe,
} from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { isISO31661Alpha2, ValidateBy, ValidateIf } from 'class-validator';
import { type FieldError, ValidationError } from './errors';
import { unstorableFields } from './storable-text';

/** `@Transform` helpers for DTO strings: trimmed, and optionally upper- or lower-cased (other values pass through). */
export const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);
export const upper = ({ value }: { value: unknown }) =>
  typeof value === 'string' ? value.trim().toUpperCase() : value;
export const lower = ({ value }: { value: unknown }) =>
  typeof value === 'string' ? value.trim().toLowerCase() : value;

/** The name of OptionalNonNull's rule (its failure is the field's only message). */
const NOT_NULL = 'isNotNull';

/**
 * An optional field: it may be left out (absent or `undefined`), and is then not checked; an
 * explicit `null` is refused with 400 `validation_failed` naming the field ("x must not be null"),
 * never taken as "not given" (a `null` currency would otherwise fall back to a default, a `null`
 * name pass an "at least one field" check). Use it instead of class-validator's `@IsOptional`,
 * which lets `null` through (eslint.config.mjs refuses that import). The API description says the
 * same: the field is not required and not `nullable`. A field whose `null` means "clear this value"
 * would declare so itself (`@ValidateIf` with its own rule, and `nullable: true` in its ApiProperty);
 * none does today.
 */
export const OptionalNonNull = () =>
  applyDecorators(
    ValidateIf((_object: object, value: unknown) => value !== undefined),
    ValidateBy({
      name: NOT_NULL,
      validator: {
        validate: (value: unknown) => value !== null,
        defaultMessage: (args) => `${args?.property ?? 'value'} must not be null`,
      },
    }),
  );

/**
 * An integer amount that is either 0 (nothing) or within [min, max] (e.g. a card's initial funding:
 * none, or within the top-up bounds). Described in the API as a choice of those two integer ranges
 * (openapi-validators.ts, rule `zeroOrBetween`).
 */
export const ZeroOrBetween = (min: number, max: number, message?: string) =>
  ValidateBy({
    name: 'zeroOrBetween',
    constraints: [min, max],
    validator: {
      validate: (value: unknown) =>
        typeof value === 'number' && Number.isInteger(value) && (value === 0 || (value >= min && value <= max)),
      defaultMessage: (args) => message ?? `${args?.property ?? 'value'} must be 0, or between ${min} and ${max}`,
    },
  });

/**
 * Flattens class-validator's nested errors into `{field, message}` with dotted field paths. A field
 * refused for being `null` (OptionalNonNull) gets that one message, not also its type's.
 */
export function flattenValidationErrors(errors: ClassValidatorError[], parent = ''): FieldError[] {
  return errors.flatMap((error) => {
    const field = parent ? `${parent}.${error.property}` : error.property;
    const constraints = error.constraints ?? {};
    const messages = constraints[NOT_NULL] ? [constraints[NOT_NULL]] : Object.values(constraints);
    const own = messages.map((message) => ({ field, message }));
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
 * It also remembers, per query DTO class, the query strings it found valid (at most
 * VALID_QUERIES_PER_TYPE each, forgotten all at once beyond): whether a query is valid depends on
 * it alone, so a repeated one (a page size, `refresh=false`, an empty query: most GETs) skips
 * class-validator. It is answered with a copy of the instance built the first time (a new object
 * of the DTO's class with the same own fields), when every field of that instance is a primitive
 * (string, number, boolean, null, undefined), else with a new instance built by class-transformer
 * as a valid one is built. Only plain queries are remembered (names of letters, digits and `_`;
 * string values); anything else is validated as usual.
 */
class GatewayValidationPipe extends ValidationPipe {
  /** Per query DTO class: valid query string → a pristine copy of its instance (null: rebuild it). */
  private readonly validQueries = new WeakMap<object, Map<string, object | null>>();

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'body' || metadata.type === 'query' || metadata.type === 'param') {
      const unstorable = unstorableFields(value, metadata.data ?? '');
      if (unstorable.length) throw new ValidationError(unstorable);
    }
    const type = metadata.metatype;
    const key = metadata.type === 'query' && typeof type === 'function' ? plainQueryKey(value) : undefined;
    if (key === undefined || typeof type !== 'function') return super.transform(value, metadata);
    const known = this.validQueries.get(type);
    const template = known?.get(key);
    if (template) return copyOf(template);
    if (template === null) return plainToInstance(type, value);
    const result: unknown = await super.transform(value, metadata);
    const kept = typeof result === 'object' && result !== null && onlyPrimitives(result) ? copyOf(result) : null;
    if (!known) this.validQueries.set(type, new Map([[key, kept]]));
    else {
      if (known.size >= VALID_QUERIES_PER_TYPE) known.clear();
      known.set(key, kept);
    }
    return result;
  }
}

/** A new object of `instance`'s class holding its own fields (shallow: for instances of primitives only). */
function copyOf(instance: object): object {
  return Object.assign(Object.create(Object.getPrototypeOf(instance) as object | null) as object, instance);
}

/** Whether every own field of `instance` is a primitive (so a shallow copy shares nothing mutable). */
function onlyPrimitives(instance: object): boolean {
  return Object.values(instance).every(
    (item) => item === null || (typeof item !== 'object' && typeof item !== 'function'),
  );
}

/** How many valid query strings the validation pipe remembers per query DTO class. */
const VALID_QUERIES_PER_TYPE = 256;

const PLAIN_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;

/** A query object's identity for the valid-query memory, or undefined unless every key is a plain name with a string value. */
function plainQueryKey(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const entries = Object.entries(value);
  for (const [name, item] of entries) if (!PLAIN_NAME.test(name) || typeof item !== 'string') return undefined;
  return JSON.stringify(entries);
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
