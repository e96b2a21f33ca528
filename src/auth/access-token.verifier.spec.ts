import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { DomainError } from '../common/errors';
import { AccessTokenVerifier, JWKS_RETRY_WITHOUT_KEYS_MS } from './access-token.verifier';

const ISSUER = 'https://idp.example';
const AUDIENCE = 'urn:api';

/** An issuer served from memory: discovery and JWKS answers the test sets, and the URLs asked. */
function fakeIssuer(discoveryIssuer = ISSUER) {
  const asked: string[] = [];
  let jwks: unknown = { keys: [] };
  let up = true;
  const fetcher = ((url: string) => {
    const href = url;
    asked.push(href);
    if (!up) return Promise.resolve(new Response('down', { status: 503 }));
    if (href.endsWith('/.well-known/openid-configuration')) {
      return Promise.resolve(Response.json({ issuer: discoveryIssuer, jwks_uri: `${ISSUER}/jwks` }));
    }
    return Promise.resolve(Response.json(jwks));
  }) as typeof fetch;
  return {
    asked,
    fetcher,
    setJwks: (value: unknown) => (jwks = value),
    setUp: (value: boolean) => (up = value),
  };
}

async function signingKey() {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  return { privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' } };
}

async function token(privateKey: Parameters<SignJWT['sign']>[0], now: number) {
  return new SignJWT({ scope: 'customers:read audit:read' })
    .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: 'k1' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setSubject('p1')
    .setIssuedAt(Math.floor(now / 1000))
    .setExpirationTime(Math.floor(now / 1000) + 300)
    .sign(privateKey);
}

describe('AccessTokenVerifier', () => {
  it('trusts no keys from a discovery document naming another issuer (503, nothing cached)', async () => {
    const idp = fakeIssuer('https://evil.example');
    const { privateKey, publicJwk } = await signingKey();
    idp.setJwks({ keys: [publicJwk] });
    const verifier = new AccessTokenVerifier({ issuer: ISSUER, audience: AUDIENCE, fetch: idp.fetcher });
    const refused = await verifier.verify(await token(privateKey, Date.now())).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(DomainError);
    expect((refused as DomainError).code).toBe('identity_provider_unavailable');
    expect(idp.asked.some((url) => url.endsWith('/jwks'))).toBe(false);
  });

  it('with no key cached and the issuer down, answers 503 without asking again for a while', async () => {
    const idp = fakeIssuer();
    const { privateKey, publicJwk } = await signingKey();
    idp.setJwks({ keys: [publicJwk] });
    idp.setUp(false);
    let now = Date.now();
    const verifier = new AccessTokenVerifier({
      issuer: ISSUER,
      audience: AUDIENCE,
      fetch: idp.fetcher,
      now: () => now,
    });
    const jwt = await token(privateKey, now);
    for (let i = 0; i < 5; i++) {
      await expect(verifier.verify(jwt)).rejects.toMatchObject({ code: 'identity_provider_unavailable', status: 503 });
    }
    expect(idp.asked).toHaveLength(1);

    idp.setUp(true);
    now += JWKS_RETRY_WITHOUT_KEYS_MS;
    await expect(verifier.verify(jwt)).resolves.toMatchObject({ subject: 'p1', scopes: ['customers:read'] });
  });

  it('accepts no token through a private or symmetric key a JWKS publishes (only public keys count)', async () => {
    const idp = fakeIssuer();
    const { privateKey, publicJwk } = await signingKey();
    const privateJwk = { ...(await exportJWK(privateKey)), kid: 'k1', alg: 'ES256' };
    idp.setJwks({ keys: [privateJwk, { kty: 'oct', k: 'c2VjcmV0', kid: 'k1' }] });
    const verifier = new AccessTokenVerifier({ issuer: ISSUER, audience: AUDIENCE, fetch: idp.fetcher });
    await expect(verifier.verify(await token(privateKey, Date.now()))).rejects.toMatchObject({ code: 'invalid_token' });

    idp.setJwks({ keys: [publicJwk] });
    const fresh = new AccessTokenVerifier({ issuer: ISSUER, audience: AUDIENCE, fetch: idp.fetcher });
    await expect(fresh.verify(await token(privateKey, Date.now()))).resolves.toMatchObject({ subject: 'p1' });
  });
});
