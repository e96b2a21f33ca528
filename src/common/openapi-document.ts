import type { OpenAPIObject } from '@nestjs/swagger';

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

/**
 * Final touch Nest's generator cannot express with decorators (it drops an empty `security` list),
 * applied to the built document: an operation without `security` is a `@Public()` route (the app
 * refuses to start a route with neither `@Public` nor `@RequireScopes`, and `@RequireScopes` adds the
 * bearer requirement), so it states `security: []`, "no credentials", instead of leaving readers and
 * generators to guess. Mutates and returns `doc`.
 */
export function finishOpenApiDocument(doc: OpenAPIObject): OpenAPIObject {
  for (const item of Object.values(doc.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (operation && operation.security === undefined) operation.security = [];
    }
  }
  return doc;
}
