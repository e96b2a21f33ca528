import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Reflector } from '@nestjs/core';
import { DomainError, ErrorCode } from '../common/errors';
import { currentRequestContext } from '../common/request-context';
import type { Env } from '../config/env';
import { type AppUser, AppUserAuth, type AccessTokenVerifier } from './access-token.verifier';
import { ApiClientsRepository } from './api-clients.repository';
import { API_KEY_PREFIX, hashApiKey } from './api-key';
import { AuthenticatedClient, PUBLIC_ROUTE, REQUIRED_SCOPES, USER_ROUTE } from './auth.decorators';

/** How long a verified key is trusted without another database read. Revocation takes at most this long. */
export const KEY_CACHE_TTL_MS = 5_000;

/** What a route declares to the guard: `@Public()`, the scopes of `@RequireScopes` (undefined: none declared), `@ForUsers`. */
interface RouteAuth {
  isPublic: boolean;
  required: string[] | undefined;
  forUsers: boolean;
}

/** The request as the guard sees it and leaves it: its headers, then who it acts for. */
interface GuardedRequest {
  headers: Record<string, unknown>;
  apiClient?: AuthenticatedClient;
  appUser?: AppUser;
}

/**
 * Global guard: every route needs `Authorization: Bearer <client key>` unless marked `@Public()`.
 * Missing, unknown or revoked key → 401 `unauthorized`; a scope from `@RequireScopes` missing → 403 `forbidden`;
 * a route with neither `@Public()` nor `@RequireScopes(...)` → 403 for every key. A request let
 * through carries its client on the request context (`actor`, and `ownerOnly` under OWNERSHIP=client).
 *
 * With OIDC_ISSUER set, a bearer value that is not an API key (no `wgk_` prefix) is read as a
 * person's access token (docs/auth.md): refused → 401 `invalid_token`; keys not fetchable → 503;
 * on a route without `@ForUsers` → 403 `user_not_allowed_here`; a scope missing → 403 `forbidden`.
 * API keys on `@ForUsers` routes → 403 `forbidden`. API keys are otherwise checked exactly as before.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  /** Verified keys (by their SHA-256, not the key itself) → their client, until `expiresAt` (ms since epoch). */
  private readonly cache = new Map<string, { client: AuthenticatedClient; expiresAt: number }>();

  /** Per route handler: whether it is public and the scopes it requires. */
  private readonly routes = new WeakMap<object, RouteAuth>();

  /** OWNERSHIP=client: a key sees only what its client created (audit/ownership.ts). */
  private readonly ownerOnly: boolean;

  constructor(
    private readonly reflector: Reflector,
    private readonly clients: ApiClientsRepository,
    config: ConfigService<Env, true>,
    users: AppUserAuth,
  ) {
    this.ownerOnly = config.get('OWNERSHIP', { infer: true }) === 'client';
    this.verifier = users.verifier;
  }

  /** Verifies people's access tokens; null without OIDC_ISSUER. */
  private readonly verifier: AccessTokenVerifier | null;

  /**
   * Lets the request through (true) or throws (see the class comment). Synchronous when the key was
   * verified within KEY_CACHE_TTL_MS (most requests): Nest then awaits nothing for this guard.
   */
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const route = this.routeOf(context);
    if (route.isPublic) return true;
    const request = context.switchToHttp().getRequest<GuardedRequest>();
    const header = request.headers.authorization;
    if (this.verifier && typeof header === 'string') {
      const token = /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
      if (token && !token.startsWith(API_KEY_PREFIX)) {
        return this.verifier.verify(token).then((user) => this.admitUser(request, route, user));
      }
    }
    if (route.forUsers) {
      // An API key is no person: the route answers for the signed-in person only.
      const client = this.authenticate(header);
      const refuse = (): never => {
        throw new DomainError(
          ErrorCode.Forbidden,
          'This route is for signed-in people (an access token), not API keys.',
        );
      };
      return client instanceof Promise ? client.then(refuse) : refuse();
    }
    const known = this.authenticate(header);
    if (known instanceof Promise) return known.then((client) => this.admit(request, route.required, client));
    return this.admit(request, route.required, known);
  }

  /** What a route declares (`@Public()`, `@RequireScopes`), read once per handler: metadata does not change. */
  private routeOf(context: ExecutionContext): RouteAuth {
    const handler = context.getHandler();
    let route = this.routes.get(handler);
    if (!route) {
      const targets = [handler, context.getClass()];
      route = {
        isPublic: this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, targets) === true,
        required: this.reflector.getAllAndOverride<string[] | undefined>(REQUIRED_SCOPES, targets),
        forUsers: this.reflector.getAllAndOverride<boolean>(USER_ROUTE, targets) === true,
      };
      this.routes.set(handler, route);
    }
    return route;
  }

  /**
   * Checks `client`'s scopes against the route's and records who the request acts for.
   * @throws DomainError `forbidden` (403) when the route declares no scope or a scope is missing.
   */
  private admit(
    request: { apiClient?: AuthenticatedClient },
    required: string[] | undefined,
    client: AuthenticatedClient,
  ): boolean {
    request.apiClient = client;
    // A route that declares no scope is never open to any key (RouteScopesCheck also stops the app at start).
    if (required === undefined) {
      throw new DomainError(ErrorCode.Forbidden, 'This route declares no scope; no key may call it.');
    }
    const missing = required.filter((scope) => !client.scopes.includes(scope));
    if (missing.length > 0) {
      throw new DomainError(ErrorCode.Forbidden, `This API key lacks the scope ${missing.join(', ')}.`, {
        missingScopes: missing,
      });
    }
    // Who the request acts for, for the audit trail and (OWNERSHIP=client) the ownership rule.
    const store = currentRequestContext();
    if (store) {
      store.actor = { id: client.id, name: client.name };
      // The checker of maker-checker approves other clients' payouts, so a key holding
      // payouts:approve (a finance role) is not restricted by the rule (docs/api.md "Who sees what").
      store.ownerOnly = this.ownerOnly && !client.scopes.includes('payouts:approve');
    }
    return true;
  }

  /**
   * Lets a person's verified token through on a `@ForUsers` route holding its scopes, and records
   * who the request acts for (the audit trail names the person: no API client id).
   * @throws DomainError `user_not_allowed_here` (403) on any other route; `forbidden` (403) for a missing scope.
   */
  private admitUser(request: GuardedRequest, route: RouteAuth, user: AppUser): boolean {
    if (!route.forUsers) {
      throw new DomainError(
        ErrorCode.UserNotAllowedHere,
        'Signed-in people may call only /v1/me routes for now; this route takes an API key.',
      );
    }
    const missing = (route.required ?? []).filter((scope) => !user.scopes.includes(scope));
    if (missing.length > 0) {
      throw new DomainError(ErrorCode.Forbidden, `The access token lacks the scope ${missing.join(', ')}.`, {
        missingScopes: missing,
      });
    }
    request.appUser = user;
    const store = currentRequestContext();
    if (store) {
      store.actor = { id: null, name: `user ${user.subject} at ${user.issuer}` };
      store.ownerOnly = false;
    }
    return true;
  }

  /**
   * The client of a `Bearer` key. Verified keys are remembered for KEY_CACHE_TTL_MS by their
   * SHA-256 (never the key itself: a plain key kept in a long-lived map would outlive its request
   * in the heap), so a repeat costs one hash and a Map lookup (answered synchronously); the database
   * is asked by the hash.
   * @throws DomainError `unauthorized` (401) for a missing or malformed key (thrown); a promise rejected
   * with it for an unknown or revoked key.
   */
  private authenticate(header: unknown): AuthenticatedClient | Promise<AuthenticatedClient> {
    const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!match) throw new DomainError(ErrorCode.Unauthorized, 'Send an API key as "Authorization: Bearer <key>".');
    const keyHash = hashApiKey(match[1]);
    const cached = this.cache.get(keyHash);
    if (cached && cached.expiresAt > Date.now()) return cached.client;
    return this.lookUp(keyHash);
  }

  /** A key not remembered (or expired): its client from the database, remembered for KEY_CACHE_TTL_MS. */
  private async lookUp(keyHash: string): Promise<AuthenticatedClient> {
    const row = await this.clients.findActiveByKeyHash(keyHash);
    if (!row) {
      this.cache.delete(keyHash);
      throw new DomainError(ErrorCode.Unauthorized, 'The API key is unknown or revoked.');
    }
    const client = { id: row.id, name: row.name, scopes: row.scopes };
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(keyHash, { client, expiresAt: Date.now() + KEY_CACHE_TTL_MS });
    return client;
  }
}
