import { ParseUUIDPipe, type Type } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import type { OpenAPIObject } from '@nestjs/swagger';
import type { ParameterObject, SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { defaultMetadataStorage } from 'class-transformer/cjs/storage';
import { getMetadataStorage } from 'class-validator';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata';
import { CountryCodes } from 'validator/lib/isISO31661Alpha2';
import { lower, ParseCountryPipe, trim, upper } from './validation';

/** Where @nestjs/swagger keeps a class's `@ApiProperty` options (its DECORATORS constants). */
const API_MODEL_PROPERTIES = 'swagger/apiModelProperties';
const API_MODEL_PROPERTIES_ARRAY = 'swagger/apiModelPropertiesArray';

/** The largest 32-bit signed integer: an integer field bounded above it is described as `int64`. */
const INT32_MAX = 2 ** 31 - 1;

/**
 * What `@IsUUID()` and ParseIdPipe accept (validator's and Nest's `all`: versions 1 to 8 with the
 * RFC variant, the nil and the max UUID, any case), as an ECMA-262 pattern without flags: stated
 * beside `format: uuid`, whose usual checkers accept any version nibble.
 */
export const UUID_PATTERN =
  '^(?:[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[1-8][0-9A-Fa-f]{3}-[89ABab][0-9A-Fa-f]{3}-[0-9A-Fa-f]{12}|' +
  '00000000-0000-0000-0000-000000000000|[Ff]{8}-[Ff]{4}-[Ff]{4}-[Ff]{4}-[Ff]{12})$';

/** The ISO 3166-1 alpha-2 codes `@IsISO31661Alpha2` and ParseCountryPipe accept (validator's own list), sorted. */
const COUNTRY_CODES = [...CountryCodes].sort();

/** The swagger options one validation rule implies (merged over the property's own `@ApiProperty`). */
type Derived = Record<string, unknown>;

/** The OpenAPI keywords implied by one class-validator rule of a property (empty when it implies none). */
function describeRule(rule: ValidationMetadata): Derived {
  const [first] = (rule.constraints ?? []) as unknown[];
  const each = rule.each === true;
  switch (rule.name ?? '') {
    case 'isInt':
      return { type: 'integer' };
    case 'min':
      return { minimum: first };
    case 'max':
      return typeof first === 'number' && first > INT32_MAX ? { maximum: first, format: 'int64' } : { maximum: first };
    case 'maxLength':
      return { maxLength: first };
    case 'minLength':
      return { minLength: first };
    case 'isNotEmpty':
      return { minLength: 1 };
    case 'matches':
      return first instanceof RegExp ? { pattern: first.source } : {};
    case 'isIn':
      return each ? { items: { type: 'string', enum: first } } : { enum: first };
    case 'isUuid':
      return { format: 'uuid', pattern: UUID_PATTERN };
    case 'isEmail':
      return { format: 'email' };
    case 'isUrl':
      return { format: 'uri' };
    case 'isISO31661Alpha2':
      return { enum: COUNTRY_CODES };
    case 'isBoolean':
      return { type: 'boolean' };
    case 'zeroOrBetween': {
      const [min, max] = rule.constraints as [number, number];
      return {
        anyOf: [
          { type: 'integer', minimum: 0, maximum: 0 },
          { type: 'integer', minimum: min, maximum: max },
        ],
      };
    }
    case 'arrayMaxSize':
      return { maxItems: first };
    case 'arrayMinSize':
      return { minItems: first };
    case 'arrayUnique':
      return { uniqueItems: true };
    default:
      return {};
  }
}

/** What a string field's `@Transform` does to it before it is checked, in words for its description. */
function normalisation(target: Type, property: string): string | undefined {
  const transforms = defaultMetadataStorage.findTransformMetadatas(target, property, 0 /* plainToClass */);
  const fns = new Set<unknown>(transforms.map((item) => item.transformFn));
  if (fns.has(upper)) return 'Trimmed and upper-cased before it is checked.';
  if (fns.has(lower)) return 'Trimmed and lower-cased before it is checked.';
  if (fns.has(trim)) return 'Trimmed before it is checked.';
  return undefined;
}

/** Every class class-validator knows (each body, query and nested DTO), with its own rules by property. */
function validatedClasses(): Map<Type, Map<string, ValidationMetadata[]>> {
  const storage = getMetadataStorage() as unknown as { validationMetadatas: Map<Type, ValidationMetadata[]> };
  const classes = new Map<Type, Map<string, ValidationMetadata[]>>();
  for (const [target, rules] of storage.validationMetadatas) {
    if (typeof target !== 'function') continue;
    const byProperty = new Map<string, ValidationMetadata[]>();
    for (const rule of rules) {
      if (rule.type === 'whitelistValidation') continue;
      byProperty.set(rule.propertyName, [...(byProperty.get(rule.propertyName) ?? []), rule]);
    }
    classes.set(target, byProperty);
  }
  return classes;
}

/**
 * Writes what each validated property's class-validator rules enforce into its `@ApiProperty`
 * options, so that the OpenAPI document states the validators (one source: the rules on the DTO):
 * `@IsInt` → `type: integer`, `@Min`/`@Max` → `minimum`/`maximum` (`format: int64` above 2^31−1),
 * `@MaxLength`/`@MinLength`/`@IsNotEmpty` → lengths, `@Matches` → `pattern`, `@IsIn` → `enum`,
 * `ZeroOrBetween` → a choice of 0 and the range, `@IsUUID` → `format: uuid` and UUID_PATTERN, `@IsEmail`/`@IsUrl` → `format`, `@IsISO31661Alpha2`
 * → the enum of the codes it accepts, array sizes and
 * uniqueness. A field trimmed or case-folded by `trim`/`upper`/`lower` says so in its description
 * (its pattern describes the value after that), and one trimmed and required non-empty also gets
 * the pattern `\S` when it has none (blank text is refused). Idempotent (safe to run before each
 * document). Returns the names of the validated classes: request objects, closed by
 * `closeRequestSchemas` since the validation pipe refuses unknown properties.
 */
export function describeValidators(): Set<string> {
  const names = new Set<string>();
  for (const [target, byProperty] of validatedClasses()) {
    names.add(target.name);
    const prototype = target.prototype as object;
    for (const [property, rules] of byProperty) {
      const derived: Derived = {};
      for (const rule of rules) Object.assign(derived, describeRule(rule));
      const note = normalisation(target, property);
      if (note && derived.minLength === 1 && derived.pattern === undefined) derived.pattern = '\\S';
      const existing = (Reflect.getMetadata(API_MODEL_PROPERTIES, prototype, property) ?? {}) as Derived;
      const merged: Derived = { ...existing, ...derived };
      if (derived.type === 'integer' || derived.type === 'boolean') merged.type = derived.type;
      // A choice of ranges states its bounds in its branches only (and `type: integer` beside them).
      if (derived.anyOf) for (const key of ['format', 'minimum', 'maximum']) delete merged[key];
      if (derived.items) merged.items = { ...(existing.items ?? {}), ...(derived.items as Derived) };
      const description = typeof existing.description === 'string' ? existing.description : '';
      if (note && !description.includes(note)) merged.description = description ? `${description} ${note}` : note;
      if (merged.required === undefined) merged.required = !rules.some((rule) => rule.type === 'conditionalValidation');
      Reflect.defineMetadata(API_MODEL_PROPERTIES, merged, prototype, property);
      const listed = (Reflect.getMetadata(API_MODEL_PROPERTIES_ARRAY, prototype) ?? []) as string[];
      if (!listed.includes(`:${property}`))
        Reflect.defineMetadata(API_MODEL_PROPERTIES_ARRAY, [...listed, `:${property}`], prototype);
    }
  }
  return names;
}

/**
 * Marks the component schema of every validated class (request bodies and their nested objects)
 * `additionalProperties: false`: the validation pipe (whitelist, forbidNonWhitelisted) refuses a
 * property the class does not declare. Mutates `doc`.
 */
export function closeRequestSchemas(doc: OpenAPIObject, validated: Set<string>): void {
  for (const [name, schema] of Object.entries(doc.components?.schemas ?? {})) {
    if (validated.has(name) && !('$ref' in schema)) schema.additionalProperties = false;
  }
}

/** The OpenAPI schema a path parameter's pipes enforce (a UUID, a country code), or undefined. */
function describePipes(pipes: unknown[], name: string): { schema: SchemaObject; description?: string } | undefined {
  if (pipes.some((pipe) => pipe instanceof ParseUUIDPipe))
    return { schema: { type: 'string', format: 'uuid', pattern: UUID_PATTERN } };
  if (pipes.some((pipe) => pipe instanceof ParseCountryPipe))
    return {
      schema: { type: 'string', enum: COUNTRY_CODES },
      description: `${name}: an ISO 3166-1 alpha-2 country code (also accepted in lower case).`,
    };
  return undefined;
}

/**
 * Writes into each operation's path parameters what the pipes of its `@Param` enforce (ParseIdPipe:
 * `format: uuid` and UUID_PATTERN; ParseCountryPipe: the country codes), read from the route's own
 * parameter metadata.
 * `controllers` are the app's controller classes; operations are found by their operationId
 * (`operationIdOf`). Mutates `doc`.
 */
export function describePathPipes(
  doc: OpenAPIObject,
  controllers: Type[],
  operationIdOf: (controllerKey: string, methodKey: string) => string,
): void {
  const operations = new Map<string, { parameters?: unknown[] }>();
  for (const item of Object.values(doc.paths))
    for (const operation of Object.values(item) as { operationId?: string; parameters?: unknown[] }[])
      if (operation && typeof operation === 'object' && operation.operationId)
        operations.set(operation.operationId, operation);
  for (const controller of controllers) {
    const prototype = controller.prototype as Record<string, unknown>;
    for (const methodKey of Object.getOwnPropertyNames(prototype)) {
      const operation = operations.get(operationIdOf(controller.name, methodKey));
      if (!operation) continue;
      const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, methodKey) ?? {}) as Record<
        string,
        { data?: unknown; pipes?: unknown[] }
      >;
      for (const [key, arg] of Object.entries(args)) {
        if (Number(key.split(':')[0]) !== (RouteParamtypes.PARAM as number) || typeof arg.data !== 'string') continue;
        const described = describePipes(arg.pipes ?? [], arg.data);
        const parameter = (operation.parameters ?? []).find(
          (item): item is ParameterObject =>
            (item as ParameterObject).in === 'path' && (item as ParameterObject).name === arg.data,
        );
        if (!described || !parameter) continue;
        parameter.schema = described.schema;
        if (described.description && !parameter.description) parameter.description = described.description;
      }
    }
  }
}
