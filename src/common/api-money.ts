import { ApiProperty } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';

/** The largest amount of minor units the API carries as a JSON number: 2^53 − 1 (exact in a double). */
export const MAX_MINOR_UNITS = Number.MAX_SAFE_INTEGER;

/**
 * The schema of a minor-unit amount in an answer: an integer within ±(2^53 − 1), `format: int64`
 * so that generated clients type it as a 64-bit integer (Kotlin `Long`, Swift `Int`), never a float.
 */
export const MINOR_UNITS_SCHEMA: SchemaObject = {
  type: 'integer',
  format: 'int64',
  minimum: -MAX_MINOR_UNITS,
  maximum: MAX_MINOR_UNITS,
};

/** An exact integer string of minor units: what an amount beyond ±(2^53 − 1) is answered as (money.ts minorToJson). */
export const MINOR_UNITS_STRING_SCHEMA: SchemaObject = { type: 'string', pattern: '^-?[0-9]+$' };

/**
 * Documents a minor-unit amount of an answer (MINOR_UNITS_SCHEMA). `nullable`: null when unknown.
 * `orString`: the value is an exact integer string beyond ±(2^53 − 1) (a stored or provider amount,
 * money.ts minorToJson), so the schema is one of the integer and the integer string.
 */
export const ApiMinorUnits = (
  options: { description: string; example?: number; nullable?: boolean; orString?: boolean } = { description: '' },
) => {
  const { nullable = false, orString = false, ...rest } = options;
  if (!orString)
    return ApiProperty({
      ...rest,
      type: 'integer',
      format: 'int64',
      minimum: -MAX_MINOR_UNITS,
      maximum: MAX_MINOR_UNITS,
      ...(nullable ? { nullable: true } : {}),
    });
  // OpenAPI 3.0's `nullable` needs a `type` beside it, so a nullable one-of says it on each branch.
  const branches = nullable
    ? [
        { ...MINOR_UNITS_SCHEMA, nullable: true },
        { ...MINOR_UNITS_STRING_SCHEMA, nullable: true },
      ]
    : [MINOR_UNITS_SCHEMA, MINOR_UNITS_STRING_SCHEMA];
  return ApiProperty({ ...rest, ...(nullable ? { anyOf: branches } : { oneOf: branches }) });
};
