import { applyDecorators, createParamDecorator, type ExecutionContext, SetMetadata } from '@nestjs/common';
import { ApiBearerAuth } from '@nestjs/swagger';
import { ApiProblem } from '../common/api-responses';
import type { Scope } from './scopes';

export const PUBLIC_ROUTE = 'auth:public';
export const REQUIRED_SCOPES = 'auth:scopes';
/** Marks a route for signed-in people (an access token), and only them. */
export const USER_ROUTE = 'auth:user-route';

/** The OpenAPI security scheme of people's routes (a person's access token), beside `bearer` (API keys). */
export const ACCESS_TOKEN_SCHEME = 'accessToken';

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

/**
 * A route for signed-in people only: a verified access token (docs/auth.md) whose scopes, cut down
 * to the customer scopes, hold every listed scope. An API key answers 403 `forbidden` here; a
 * person's token answers 403 `user_not_allowed_here` on every route without this decorator.
 */
export const ForUsers = (...scopes: Scope[]) =>
  applyDecorators(
    SetMetadata(REQUIRED_SCOPES, scopes),
    SetMetadata(USER_ROUTE, true),
    ApiBearerAuth(ACCESS_TOKEN_SCHEME),
    ApiProblem(
      401,
      'Missing or refused access token (`invalid_token`, with `WWW-Authenticate: Bearer error="invalid_token"`).',
    ),
    ApiProblem(403, `An API key (people only), or the token lacks scope ${scopes.join(', ')}.`),
    ApiProblem(429, 'Rate limit of the person exceeded (see Retry-After).'),
    ApiProblem(503, "identity_provider_unavailable: the provider's keys cannot be fetched and none are cached."),
  );

/** Injects the authenticated client into a controller method. */
export const CurrentClient = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): AuthenticatedClient =>
    ctx.switchToHttp().getRequest<{ apiClient: AuthenticatedClient }>().apiClient,
);
