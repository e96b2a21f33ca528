/**
 * The local OpenID provider for development and tests (DEVELOPMENT ONLY: demo people with a shared
 * demo password). Built on panva's `oidc-provider` (a certified OpenID Connect implementation), so
 * the gateway meets real discovery, a real JWKS and real RFC 9068 JWT access tokens, never a
 * hand-written token minter. Sign-in runs the authorization code flow with PKCE through this
 * module's own login form (`/interaction/:uid`); `getDemoToken` (idp/token.ts) drives that form
 * without a browser.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import Provider, { errors, type Configuration } from 'oidc-provider';
import {
  ACR_MFA,
  ACR_PASSWORD,
  DEMO_CLIENT_ID,
  DEMO_ONE_TIME_CODE,
  DEMO_PASSWORD,
  DEMO_PEOPLE,
  DEMO_REDIRECT_URI,
  GATEWAY_RESOURCE_SCOPES,
} from './demo';

export * from './demo';

/** A signing key of the provider: the private JWK (with `kid` and `alg`). */
export type SigningKey = JWK & { kid: string; alg: string };

/** A new ES256 signing key with a random `kid`. */
export async function newSigningKey(): Promise<SigningKey> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = await exportJWK(privateKey);
  return { ...jwk, kid: `dev-${randomBytes(6).toString('hex')}`, alg: 'ES256', use: 'sig' };
}

export interface LocalIdpOptions {
  /** The gateway's OIDC_AUDIENCE: the only resource tokens are issued for. */
  audience: string;
  /** Port to listen on (0: a free one). */
  port?: number;
  host?: string;
  /** Signing keys, newest first: the first signs, all are published (rotation). Default: one new key. */
  keys?: SigningKey[];
  /** Lifetime of access tokens, in seconds (default 600). */
  accessTokenTtl?: number;
}

/** A running local provider. */
export interface LocalIdp {
  /** Its issuer URL (= OIDC_ISSUER), e.g. http://127.0.0.1:4020. */
  issuer: string;
  audience: string;
  /** The signing keys, newest first (private JWKs: tests sign hostile tokens with them). */
  keys: SigningKey[];
  /** Requests the provider answered at its JWKS endpoint (`/jwks`) so far. */
  jwksRequests(): number;
  /** Tests: false makes every endpoint answer 503 (the provider down), true brings it back. */
  setAvailable(available: boolean): void;
  stop(): Promise<void>;
}

/** Escapes text for HTML. */
function html(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  let body = '';
  for await (const chunk of req) {
    body += String(chunk);
    if (body.length > 10_000) throw new Error('form too large');
  }
  return new URLSearchParams(body);
}

function loginPage(uid: string, error?: string): string {
  const people = DEMO_PEOPLE.map((p) => `<li><code>${p.login}</code>: ${html(p.name)}, ${p.description}</li>`).join('');
  return `<!doctype html><html><head><meta charset="utf-8"><title>Sign in (local development provider)</title></head>
<body><h1>Sign in</h1><p><strong>Local development provider: demo people only.</strong></p>
${error ? `<p role="alert">${html(error)}</p>` : ''}
<form method="post" action="/interaction/${html(uid)}/login">
<label>Login <input name="login" autocomplete="username" autofocus></label>
<label>Password <input name="password" type="password" autocomplete="current-password"></label>
<label>One-time code (optional, a strong sign-in) <input name="otp" inputmode="numeric"></label>
<button type="submit">Sign in</button></form>
<p>Password <code>${DEMO_PASSWORD}</code>, one-time code <code>${DEMO_ONE_TIME_CODE}</code>.</p><ul>${people}</ul></body></html>`;
}

/**
 * Starts the local provider. Access tokens for `audience` are RFC 9068 JWTs (`typ: at+jwt`) signed
 * ES256 with the first of `keys`, carrying sub, email, email_verified, name, roles, auth_time, acr
 * (and amr). The login form accepts a demo person's login with DEMO_PASSWORD (acr ACR_PASSWORD),
 * plus DEMO_ONE_TIME_CODE for ACR_MFA. Consent is implied for the one demo client.
 */
export async function startLocalIdp(options: LocalIdpOptions): Promise<LocalIdp> {
  const keys = options.keys ?? [await newSigningKey()];
  const host = options.host ?? '127.0.0.1';
  const server: Server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, resolve);
  });
  const issuer = `http://${host}:${(server.address() as AddressInfo).port}`;
  const { audience } = options;
  const byAccount = new Map(DEMO_PEOPLE.map((p) => [p.sub, p]));

  const configuration: Configuration = {
    clients: [
      {
        client_id: DEMO_CLIENT_ID,
        application_type: 'native',
        token_endpoint_auth_method: 'none',
        redirect_uris: [DEMO_REDIRECT_URI],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        id_token_signed_response_alg: 'ES256',
      },
    ],
    clientDefaults: { id_token_signed_response_alg: 'ES256' },
    jwks: { keys },
    pkce: { required: () => true },
    acrValues: [ACR_PASSWORD, ACR_MFA],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'], roles: ['roles'] },
    scopes: ['openid', 'offline_access', 'email', 'profile', 'roles', ...GATEWAY_RESOURCE_SCOPES],
    ttl: {
      AccessToken: options.accessTokenTtl ?? 600,
      AuthorizationCode: 60,
      IdToken: 600,
      RefreshToken: 86_400,
      Interaction: 600,
      Session: 3_600,
      Grant: 86_400,
    },
    cookies: { keys: [randomBytes(32).toString('hex')] },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    features: {
      devInteractions: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => audience,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => {
          if (resource !== audience) throw new errors.InvalidTarget();
          return {
            scope: GATEWAY_RESOURCE_SCOPES.join(' '),
            audience,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'ES256' } },
          };
        },
      },
    },
    findAccount: (_ctx, sub) => {
      const person = byAccount.get(sub);
      if (!person) return undefined;
      return {
        accountId: sub,
        claims: () => ({
          sub,
          email: person.email,
          email_verified: person.email_verified,
          name: person.name,
          roles: person.roles,
        }),
      };
    },
    // The person's claims and how they signed in, in the access token (RFC 9068 §2.2).
    extraTokenClaims: (ctx, token) => {
      if (token.kind !== 'AccessToken' || !('accountId' in token) || typeof token.accountId !== 'string') {
        return undefined;
      }
      const person = byAccount.get(token.accountId);
      const source = (ctx.oidc.entities.AuthorizationCode ?? ctx.oidc.entities.RefreshToken) as
        { authTime?: number; acr?: string; amr?: string[] } | undefined;
      if (!person) return undefined;
      return {
        email: person.email,
        email_verified: person.email_verified,
        name: person.name,
        roles: person.roles,
        auth_time: source?.authTime,
        acr: source?.acr,
        amr: source?.amr,
      };
    },
    renderError: (ctx, out) => {
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = `${out.error}: ${out.error_description ?? ''}`;
    },
  };

  const provider = new Provider(issuer, configuration);
  const callback = provider.callback();

  async function newGrant(accountId: string, clientId: unknown): Promise<string> {
    const grant = new provider.Grant({ accountId, clientId: String(clientId) });
    return grant.save();
  }

  async function interaction(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const details = await provider.interactionDetails(req, res);
    if (req.method === 'GET' && path === `/interaction/${details.uid}` && details.prompt.name === 'consent') {
      // The one demo client is first-party: consent is implied, granted without a screen.
      const grantId = details.grantId ?? (await newGrant(details.session?.accountId ?? '', details.params.client_id));
      const grant = await provider.Grant.find(grantId);
      if (!grant) throw new Error('grant not found');
      const missing = details.prompt.details as {
        missingOIDCScope?: string[];
        missingResourceScopes?: Record<string, string[]>;
      };
      if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
      for (const [resource, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
        grant.addResourceScope(resource, scopes.join(' '));
      }
      await grant.save();
      await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
      return;
    }
    if (req.method === 'GET' && path === `/interaction/${details.uid}`) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(loginPage(details.uid));
      return;
    }
    if (req.method === 'POST' && path === `/interaction/${details.uid}/login`) {
      const form = await readForm(req);
      const person = DEMO_PEOPLE.find((p) => p.login === form.get('login'));
      if (!person || form.get('password') !== DEMO_PASSWORD) {
        res.writeHead(401, { 'content-type': 'text/html; charset=utf-8' });
        res.end(loginPage(details.uid, 'Unknown login or wrong password.'));
        return;
      }
      const otp = form.get('otp') ?? '';
      if (otp !== '' && otp !== DEMO_ONE_TIME_CODE) {
        res.writeHead(401, { 'content-type': 'text/html; charset=utf-8' });
        res.end(loginPage(details.uid, 'Wrong one-time code.'));
        return;
      }
      const strong = otp === DEMO_ONE_TIME_CODE;
      await provider.interactionFinished(
        req,
        res,
        {
          login: {
            accountId: person.sub,
            acr: strong ? ACR_MFA : ACR_PASSWORD,
            amr: strong ? ['pwd', 'otp'] : ['pwd'],
          },
        },
        { mergeWithLastSubmission: false },
      );
      return;
    }
    res.writeHead(404).end();
  }

  let jwksRequests = 0;
  let available = true;
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0];
    if (!available) {
      res.writeHead(503, { 'content-type': 'text/plain' }).end('down (test)');
      return;
    }
    if (path === '/jwks') jwksRequests += 1;
    if (path.startsWith('/interaction/')) {
      interaction(req, res, path).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(400, { 'content-type': 'text/plain; charset=utf-8' });
        res.end(`interaction failed: ${(error as Error).message}`);
      });
      return;
    }
    void callback(req, res);
  });

  return {
    issuer,
    audience,
    keys,
    jwksRequests: () => jwksRequests,
    setAvailable: (value) => {
      available = value;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
