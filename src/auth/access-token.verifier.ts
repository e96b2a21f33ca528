import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import {
  createLocalJWKSet,
  decodeProtectedHeader,
  errors as joseErrors,
  type JWTPayload,
  jwtVerify,
  type ProtectedHeaderParameters,
} from 'jose';
import { BearerChallengeError, DomainError, ErrorCode, quoteAuthParam } from '../common/errors';
import type { Env } from '../config/env';
import { CUSTOMER_SCOPES } from './scopes';

/** Asymmetric signature algorithms accepted (never `none`, never HS*: a public key is no secret). */
export const ACCEPTED_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
] as const;

/**
 * `typ` values accepted: RFC 9068's `at+jwt` (also written `application/at+jwt`), and `JWT` or none
 * for providers that do not type their access tokens (Keycloak, Microsoft Entra ID). Any other type
 * (an ID token's, a logout token's, a DPoP proof's) is refused.
 */
const ACCEPTED_TYPES = new Set(['at+jwt', 'application/at+jwt', 'jwt', 'application/jwt']);

/** Largest token looked at, in characters; a longer one is refused unread. */
export const MAX_TOKEN_LENGTH = 8192;
/** Clock skew allowed on `exp`, `nbf` (and `iat`), in seconds. */
export const CLOCK_TOLERANCE_S = 60;
/** Least time between two JWKS fetches caused by an unknown `kid` (per instance), in ms. */
export const UNKNOWN_KID_REFETCH_MS = 60_000;
/** Cached keys are refreshed (in the background) when older than this, in ms. */
export const JWKS_MAX_AGE_MS = 10 * 60_000;
/** With no key cached, a failed fetch is not tried again before this, in ms (requests answer 503 meanwhile). */
export const JWKS_RETRY_WITHOUT_KEYS_MS = 5_000;
/** Time allowed for one discovery or JWKS request, in ms. */
export const JWKS_TIMEOUT_MS = 5_000;

/** Customer scopes a person's token may carry here; anything else in its `scope` is ignored. */
export const USER_SCOPES: readonly string[] = CUSTOMER_SCOPES;

/** A person signed in at the OpenID provider, as their verified access token says. */
export interface AppUser {
  /** `iss`: with `subject`, the person's identity. */
  issuer: string;
  /** `sub`. */
  subject: string;
  email?: string;
  /** True only when the token says `email_verified: true`. */
  emailVerified: boolean;
  name?: string;
  /** The token's scopes kept here: at most USER_SCOPES (never finance, approval or administration scopes). */
  scopes: string[];
  /** `auth_time`: when the person signed in, in seconds since the epoch. */
  authTime?: number;
  /** `acr`: how strongly they signed in. */
  acr?: string;
}

/** What the verifier needs: where the issuer is, the audience, and (tests) a clock and a fetch. */
export interface VerifierOptions {
  issuer: string;
  audience: string;
  fetch?: typeof fetch;
  now?: () => number;
}

/** 401 `invalid_token` with the RFC 6750 challenge. */
function invalidToken(description: string): BearerChallengeError {
  return new BearerChallengeError(
    ErrorCode.InvalidToken,
    `The access token is refused: ${description}.`,
    `Bearer error="invalid_token", error_description=${quoteAuthParam(description)}`,
  );
}

function unavailable(): DomainError {
  return new DomainError(
    ErrorCode.IdentityProviderUnavailable,
    "The identity provider's signing keys cannot be fetched now; retry later.",
    { retryAfter: Math.ceil(JWKS_RETRY_WITHOUT_KEYS_MS / 1000) },
  );
}

/**
 * Verifies app users' bearer access tokens (JWT, RFC 9068) with `jose` against the issuer's JWKS
 * (found through OpenID discovery). Keys are cached: an unknown `kid` fetches them again at most
 * once per UNKNOWN_KID_REFETCH_MS; they are refreshed in the background after JWKS_MAX_AGE_MS; a
 * failed fetch keeps the cached keys. Only ACCEPTED_ALGORITHMS; `iss`, `aud`, `exp` (required),
 * `nbf` checked with CLOCK_TOLERANCE_S of skew.
 */
export class AccessTokenVerifier {
  /** The clock (ms since the epoch); tests move it to pass the refetch interval. */
  now: () => number;
  private readonly fetcher: typeof fetch;
  private readonly issuer: string;
  private readonly audience: string;
  private jwksUri: string | undefined;
  private keys: ReturnType<typeof createLocalJWKSet> | undefined;
  private fetchedAt = 0;
  private lastAttemptAt = -Infinity;
  private inFlight: Promise<void> | undefined;

  constructor(options: VerifierOptions) {
    this.issuer = options.issuer;
    this.audience = options.audience;
    this.fetcher = options.fetch ?? fetch;
    this.now = options.now ?? Date.now;
  }

  /**
   * The person the token speaks for.
   * @throws BearerChallengeError 401 `invalid_token` for any refused token (nothing else is said).
   * @throws DomainError 503 `identity_provider_unavailable` when no key is cached and none can be fetched.
   */
  async verify(token: string): Promise<AppUser> {
    if (token.length > MAX_TOKEN_LENGTH) throw invalidToken('too long');
    let header: ProtectedHeaderParameters;
    try {
      header = decodeProtectedHeader(token);
    } catch {
      throw invalidToken('not a signed JWT');
    }
    if (typeof header.alg !== 'string' || !(ACCEPTED_ALGORITHMS as readonly string[]).includes(header.alg)) {
      throw invalidToken('algorithm not accepted');
    }
    if (header.typ !== undefined && !ACCEPTED_TYPES.has(String(header.typ).toLowerCase())) {
      throw invalidToken('not an access token');
    }
    if (header.crit !== undefined) throw invalidToken('critical header parameters are not supported');
    const keys = await this.keysFor(header);
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keys, {
        issuer: this.issuer,
        audience: this.audience,
        algorithms: [...ACCEPTED_ALGORITHMS],
        clockTolerance: CLOCK_TOLERANCE_S,
        currentDate: new Date(this.now()),
        requiredClaims: ['exp', 'sub'],
      }));
    } catch (error) {
      throw invalidToken(describe(error));
    }
    return toAppUser(payload);
  }

  /** The key set to verify `header`'s token with, fetched or refreshed as the class comment says. */
  private async keysFor(header: ProtectedHeaderParameters): Promise<ReturnType<typeof createLocalJWKSet>> {
    const now = this.now();
    if (!this.keys) {
      if (now - this.lastAttemptAt < JWKS_RETRY_WITHOUT_KEYS_MS && !this.inFlight) throw unavailable();
      await this.refresh().catch(() => undefined);
      if (!this.keys) throw unavailable();
      return this.keys;
    }
    if (now - this.fetchedAt > JWKS_MAX_AGE_MS && now - this.lastAttemptAt >= UNKNOWN_KID_REFETCH_MS) {
      void this.refresh().catch(() => undefined); // stale: refresh for later requests; this one uses what is cached
    }
    if (await this.hasKey(this.keys, header)) return this.keys;
    if (now - this.lastAttemptAt >= UNKNOWN_KID_REFETCH_MS || this.inFlight) {
      await this.refresh().catch(() => undefined); // down: the cached keys stay
    }
    return this.keys;
  }

  /** Whether `keys` holds a key for `header` (jose's own matching by kid, alg and kty). */
  private async hasKey(
    keys: ReturnType<typeof createLocalJWKSet>,
    header: ProtectedHeaderParameters,
  ): Promise<boolean> {
    try {
      await keys(header);
      return true;
    } catch {
      return false;
    }
  }

  /** Fetches discovery (once) and the JWKS; one fetch at a time (concurrent callers share it). */
  private refresh(): Promise<void> {
    this.inFlight ??= this.fetchKeys().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  private async fetchKeys(): Promise<void> {
    this.lastAttemptAt = this.now();
    if (!this.jwksUri) {
      const discovery = await this.getJson(`${this.issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`);
      if (discovery.issuer !== this.issuer || typeof discovery.jwks_uri !== 'string') {
        throw new Error('discovery document does not match OIDC_ISSUER or has no jwks_uri');
      }
      this.jwksUri = discovery.jwks_uri;
    }
    const jwks = await this.getJson(this.jwksUri);
    if (!Array.isArray(jwks.keys)) throw new Error('JWKS has no keys array');
    // Only public asymmetric keys are kept: a symmetric ("oct") key in a JWKS would be public knowledge.
    const keys = (jwks.keys as Array<Record<string, unknown>>).filter((k) => k.kty !== 'oct' && k.d === undefined);
    this.keys = createLocalJWKSet({ keys });
    this.fetchedAt = this.now();
  }

  private async getJson(url: string): Promise<Record<string, unknown>> {
    const response = await this.fetcher(url, {
      signal: AbortSignal.timeout(JWKS_TIMEOUT_MS),
      headers: { accept: 'application/json' },
    });
    if (!response.ok) throw new Error(`${url} answered HTTP ${response.status}`);
    const body: unknown = await response.json();
    if (typeof body !== 'object' || body === null) throw new Error(`${url} answered no JSON object`);
    return body as Record<string, unknown>;
  }
}

/** A refusal's reason as told to the caller (jose's codes, never a stack or a key). */
function describe(error: unknown): string {
  if (error instanceof joseErrors.JWTExpired) return 'expired';
  if (error instanceof joseErrors.JWTClaimValidationFailed) return `claim ${error.claim} ${error.reason}`;
  if (error instanceof joseErrors.JWKSNoMatchingKey) return 'unknown signing key';
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return 'bad signature';
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return 'algorithm not accepted';
  return 'malformed';
}

/** The verified payload as an AppUser: scopes cut down to USER_SCOPES. */
function toAppUser(payload: JWTPayload): AppUser {
  const scope = typeof payload.scope === 'string' ? payload.scope.split(' ') : [];
  return {
    issuer: payload.iss as string,
    subject: payload.sub as string,
    email: typeof payload.email === 'string' ? payload.email : undefined,
    emailVerified: payload.email_verified === true,
    name: typeof payload.name === 'string' ? payload.name : undefined,
    scopes: USER_SCOPES.filter((s) => scope.includes(s)),
    authTime: typeof payload.auth_time === 'number' ? payload.auth_time : undefined,
    acr: typeof payload.acr === 'string' ? payload.acr : undefined,
  };
}

/**
 * The app's verifier: null when OIDC_ISSUER is unset (API keys only). One per instance.
 */
@Injectable()
export class AppUserAuth {
  readonly verifier: AccessTokenVerifier | null;

  constructor(config: ConfigService<Env, true>) {
    const issuer = config.get('OIDC_ISSUER', { infer: true });
    const audience = config.get('OIDC_AUDIENCE', { infer: true });
    this.verifier = issuer && audience ? new AccessTokenVerifier({ issuer, audience }) : null;
  }
}
