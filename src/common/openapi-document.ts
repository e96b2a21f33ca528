import type { OpenAPIObject } from '@nestjs/swagger';
import type {
  OperationObject,
  ParameterObject,
  ResponseObject,
} from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { PROBLEM_MEDIA_TYPE } from './api-responses';
import { MAX_JSON_DEPTH, MAX_PARAM_LENGTH, MAX_URL_LENGTH } from './http-limits';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/**
 * The operationId of a route: the controller's name without `Controller`, camel-cased, then the
 * method's name (`PayoutsController.create` → `payouts_create`, `CardHoldersController.register` →
 * `cardHolders_register`). Stable as long as the code names are, and unique because Nest refuses two
 * methods of one name in a class; the generated client's functions are named from it
 * (`payouts_create` → `payoutsCreate`, docs/api.md "Typed client").
 */
export function operationIdOf(controllerKey: string, methodKey: string): string {
  const resource = controllerKey.replace(/Controller$/, '');
  return `${resource.charAt(0).toLowerCase()}${resource.slice(1)}_${methodKey}`;
}

/** A problem+json answer of the document (the schema every error decorator of the API uses). */
function problemAnswer(description: string): ResponseObject {
  return { description, content: { [PROBLEM_MEDIA_TYPE]: { schema: { $ref: '#/components/schemas/ProblemDto' } } } };
}

/**
 * The error answers any route can give whatever its decorators say, from the layers in front of it
 * (http-limits.ts, app.ts, the validation pipe, the provider client), added to each operation that
 * does not state them already; an operation stating the status keeps its own description, extended
 * where a layer adds a code to it. Every status a route can answer is then in the document.
 */
function addLayerAnswers(operation: OperationObject): void {
  const responses = operation.responses;
  const add = (status: string, description: string) => {
    if (!responses[status]) responses[status] = problemAnswer(description);
  };
  const extend = (status: string, description: string) => {
    const existing = responses[status] as ResponseObject | undefined;
    if (!existing) responses[status] = problemAnswer(description);
    else if (!existing.description.includes(description)) existing.description += ` ${description}`;
  };
  const parameters = (operation.parameters ?? []) as ParameterObject[];
  const hasBody = operation.requestBody !== undefined;
  if (hasBody || parameters.length) add('400', 'validation_failed: the failing fields are in `errors`.');
  if (parameters.some((parameter) => parameter.in === 'header' && parameter.name === 'Idempotency-Key'))
    extend('400', 'idempotency_key_missing: no Idempotency-Key header, or not 1–255 printable ASCII characters.');
  if (hasBody) {
    extend('400', `validation_failed: a body that is not JSON, or nested deeper than ${MAX_JSON_DEPTH} levels.`);
    add('413', 'payload_too_large: the body is over BODY_LIMIT_BYTES.');
    add('415', 'validation_failed: the body is not application/json.');
  }
  add('414', `uri_too_long: the URL is over ${MAX_URL_LENGTH} characters, or a path segment over ${MAX_PARAM_LENGTH}.`);
  add('431', 'request_headers_too_large: the request line and headers are over the size limit.');
  add('500', 'internal_error: an unexpected error (logged with the request id).');
  // A route that calls the provider (it documents provider_unavailable) can also be told to retry later.
  if (responses['502'])
    extend(
      '503',
      'provider_retry_later: the provider is not called for now (circuit open, too many calls in flight, or it ' +
        'answered 429); nothing moved; retry after Retry-After.',
    );
  extend('503', 'shutting_down: this instance is closing; retry (another instance answers).');
}

/**
 * Final touch Nest's generator cannot express with decorators (it drops an empty `security` list),
 * applied to the built document: an operation without `security` is a `@Public()` route (the app
 * refuses to start a route with neither `@Public` nor `@RequireScopes`, and `@RequireScopes` adds the
 * bearer requirement), so it states `security: []`, "no credentials", instead of leaving readers and
 * generators to guess; and each operation states the error answers of the layers in front of it
 * (addLayerAnswers). Mutates and returns `doc`.
 */
export function finishOpenApiDocument(doc: OpenAPIObject): OpenAPIObject {
  for (const item of Object.values(doc.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      if (operation.security === undefined) operation.security = [];
      addLayerAnswers(operation);
    }
  }
  return doc;
}
