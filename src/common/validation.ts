import { ParseUUIDPipe, ValidationError as ClassValidatorError, ValidationPipe } from '@nestjs/common';
import { FieldError, ValidationError } from './errors';

/** Flattens class-validator's nested errors into `{field, message}` with dotted field paths. */
export function flattenValidationErrors(errors: ClassValidatorError[], parent = ''): FieldError[] {
  return errors.flatMap((error) => {
    const field = parent ? `${parent}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) => ({ field, message }));
    return [...own, ...flattenValidationErrors(error.children ?? [], field)];
  });
}

/**
 * The global validation pipe: whitelist (unknown fields are refused, not silently dropped),
 * transform to DTO classes, and a 400 `validation_failed` problem listing every failing field.
 */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
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
