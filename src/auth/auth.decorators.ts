import { applyDecorators, createParamDecorator, type ExecutionContext, SetMetadata } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiForbiddenResponse,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { ProblemDto } from '../common/problem.dto';
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
    ApiUnauthorizedResponse({ type: ProblemDto, description: 'Missing, unknown or revoked API key.' }),
    ApiForbiddenResponse({ type: ProblemDto, description: `The key lacks scope ${scopes.join(', ')}.` }),
    ApiTooManyRequestsResponse({
      type: ProblemDto,
      description: 'Rate limit of the API key exceeded (see Retry-After).',
    }),
  );

/** Injects the authenticated client into a controller method. */
export const CurrentClient = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): AuthenticatedClient =>
    ctx.switchToHttp().getRequest<{ apiClient: AuthenticatedClient }>().apiClient,
);
