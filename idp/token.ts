/**
 * Gets an access token from an OpenID provider as a person, without a browser (DEVELOPMENT AND
 * TESTS ONLY): runs the authorization code flow with PKCE as the demo public client and fills the
 * local provider's own login form (idp/provider.ts) with the demo password, as a browser would.
 * Nothing here mints a token: the provider issues it at its token endpoint.
 */
import { createHash, randomBytes } from 'node:crypto';
import { DEMO_CLIENT_ID, DEMO_PASSWORD, DEMO_REDIRECT_URI } from './demo';

export interface DemoTokenOptions {
  /** Default DEMO_PASSWORD. */
  password?: string;
  /** The demo one-time code, for a strong sign-in (acr ACR_MFA). */
  otp?: string;
  /** The resource (the gateway's OIDC_AUDIENCE); default: the provider's default resource. */
  resource?: string;
  /** Scopes asked for; default `openid email profile customers:read customers:write`. */
  scope?: string;
}

/** The tokens the provider answered. */
export interface DemoTokens {
  access_token: string;
  id_token?: string;
  expires_in: number;
  scope?: string;
}

/** A minimal cookie jar: name → value, for one sign-in. */
class Cookies {
  private readonly jar = new Map<string, string>();

  take(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) this.jar.delete(name);
      else this.jar.set(name, value);
    }
  }

  header(): string {
    return [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

function base64url(buffer: Buffer): string {
  return buffer.toString('base64url');
}

/**
 * Signs `login` in at `issuer` and returns the tokens.
 * @throws Error when the provider refuses the sign-in or answers unexpectedly.
 */
export async function getDemoToken(issuer: string, login: string, options: DemoTokenOptions = {}): Promise<DemoTokens> {
  const cookies = new Cookies();
  const verifier = base64url(randomBytes(32));
  const challenge = base64url(createHash('sha256').update(verifier).digest());
  const authorize = new URL('/auth', issuer);
  authorize.search = new URLSearchParams({
    client_id: DEMO_CLIENT_ID,
    response_type: 'code',
    redirect_uri: DEMO_REDIRECT_URI,
    scope: options.scope ?? 'openid email profile customers:read customers:write',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: base64url(randomBytes(12)),
    nonce: base64url(randomBytes(12)),
    prompt: 'login',
    ...(options.resource ? { resource: options.resource } : {}),
  }).toString();

  // Follow redirects by hand, keeping the cookies, until the provider sends us to the redirect URI.
  let url = authorize.toString();
  let response = await fetch(url, { redirect: 'manual', headers: { cookie: cookies.header() } });
  for (let hops = 0; hops < 10; hops++) {
    cookies.take(response);
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      const next = new URL(location, url);
      if (next.toString().startsWith(DEMO_REDIRECT_URI)) {
        const error = next.searchParams.get('error');
        if (error) throw new Error(`sign-in refused: ${error} ${next.searchParams.get('error_description') ?? ''}`);
        return exchange(issuer, next.searchParams.get('code') ?? '', verifier, options.resource);
      }
      url = next.toString();
      response = await fetch(url, { redirect: 'manual', headers: { cookie: cookies.header() } });
      continue;
    }
    if (response.status === 200 && new URL(url).pathname.startsWith('/interaction/')) {
      // The login form: post the person's credentials, as the form would.
      await response.text();
      const form = new URLSearchParams({
        login,
        password: options.password ?? DEMO_PASSWORD,
        otp: options.otp ?? '',
      });
      url = `${url}/login`;
      response = await fetch(url, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: cookies.header(), 'content-type': 'application/x-www-form-urlencoded' },
        body: form.toString(),
      });
      continue;
    }
    throw new Error(`sign-in failed at ${url}: HTTP ${response.status} ${(await response.text()).slice(0, 300)}`);
  }
  throw new Error('sign-in failed: too many redirects');
}

async function exchange(issuer: string, code: string, verifier: string, resource?: string): Promise<DemoTokens> {
  const response = await fetch(new URL('/token', issuer), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: DEMO_REDIRECT_URI,
      client_id: DEMO_CLIENT_ID,
      code_verifier: verifier,
      ...(resource ? { resource } : {}),
    }).toString(),
  });
  const body = (await response.json()) as DemoTokens & { error?: string; error_description?: string };
  if (!response.ok) throw new Error(`token endpoint refused: ${body.error} ${body.error_description ?? ''}`);
  return body;
}
