import { applyDecorators, createParamDecorator, type ExecutionContext, SetMetadata } from '@nestjs/common';
import { ApiBearerAuth } from '@nestjs/swagger';
import { ApiProblem } from '../common/api-responses';
import type { Scope } from './scopes';

export const PUBLIC_ROUTE = 'auth:public';
export const REQUIRED_SCOPES = 'auth:scopes';

/** The authenticated caller, attached to the request by `ApiKeyGuard`. */
export interface AuthenticatedClient {
  id: string;
  name: string;
  scopes: string[];
}

/** Marks a route as needing no client key (health, metrics, docs, provider webhooks). */
export const Public = () => SetMetadata(PUBLIC_ROUTE, true);

/**
 * Requires a client key holding every listed scope: 401 without a valid key, 403 without the
 * scope. Also documents both answers in OpenAPI.
 */
export const RequireScopes = (...scopes: Scope[]) =>
  applyDecorators(
    SetMetadata(REQUIRED_SCOPES, scopes),
    ApiBearerAuth(),
    ApiProblem(401, 'Missing, unknown or revoked API key.'),
    ApiProblem(403, `The key lacks scope ${scopes.join(', ')}.`),
    ApiProblem(429, 'Rate limit of the API key exceeded (see Retry-After).'),
  );

/**
 * Requires a valid client key and no particular scope: 401 without a valid key. For routes about
 * the key itself (GET /v1/api-keys/me), which any key may ask. Documents the answers in OpenAPI.
 */
export const RequireKey = () =>
  applyDecorators(
    SetMetadata(REQUIRED_SCOPES, []),
    ApiBearerAuth(),
    ApiProblem(401, 'Missing, unknown or revoked API key.'),
    ApiProblem(429, 'Rate limit of the API key exceeded (see Retry-After).'),
  );

/** Injects the authenticated client into a controller method. */
export const CurrentClient = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): AuthenticatedClient =>
    ctx.switchToHttp().getRequest<{ apiClient: AuthenticatedClient }>().apiClient,
);
