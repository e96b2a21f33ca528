import { createHmac, randomUUID } from 'node:crypto';
import { decodeJwt, importJWK, type JWTPayload, SignJWT } from 'jose';
import { startLocalIdp, newSigningKey, ACR_MFA, ACR_PASSWORD, type LocalIdp, type SigningKey } from '../idp/provider';
import { getDemoToken } from '../idp/token';
import { AppUserAuth, type AccessTokenVerifier, UNKNOWN_KID_REFETCH_MS } from '../src/auth/access-token.verifier';
import { PrismaService } from '../src/database/prisma.service';
import { type Harness, startHarness, startPeer } from './support/harness';

const AUDIENCE = 'urn:wallet-gateway:test';
const ME = { firstName: 'Ada', lastName: 'Obi', phone: '8012345678', countryCode: '+234' };

let idp: LocalIdp;
let h: Harness;
let prisma: PrismaService;
let verifier: AccessTokenVerifier;

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const nowS = () => Math.floor(verifier.now() / 1000);

/**
 * A token signed by hand with `key` (by default the provider's own signing key): a valid token for
 * ben, with `claims` laid over it (a claim given as undefined is left out).
 */
async function handMade(
  claims: JWTPayload = {},
  header: Record<string, unknown> = {},
  key?: SigningKey,
): Promise<string> {
  const signing = key ?? idp.keys[0];
  const now = nowS();
  const payload: JWTPayload = {
    iss: idp.issuer,
    aud: AUDIENCE,
    sub: 'demo-ben',
    iat: now,
    exp: now + 300,
    email: 'ben@demo.example',
    email_verified: true,
    scope: 'customers:read customers:write',
    auth_time: now,
    acr: ACR_PASSWORD,
    ...claims,
  };
  for (const name of Object.keys(payload)) if (payload[name] === undefined) delete payload[name];
  return new SignJWT(payload)
    .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: signing.kid, ...header })
    .sign(await importJWK(signing, 'ES256'));
}

/** What a refused request may not have changed. */
async function counts() {
  return { customers: await prisma.customer.count(), bindings: await prisma.userCustomer.count() };
}

/** Audit events so far: a request refused before its route (by the guards) records none. */
const auditEvents = () => prisma.auditEvent.count();

async function expectInvalidToken(token: string) {
  const before = { ...(await counts()), audit: await auditEvents() };
  const res = await h.http().post('/v1/me/customer').set(bearer(token)).send(ME);
  expect(res.status).toBe(401);
  expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
  expect(res.body.code).toBe('invalid_token');
  expect(res.headers['www-authenticate']).toMatch(/^Bearer error="invalid_token", error_description="[^"]+"$/);
  expect({ ...(await counts()), audit: await auditEvents() }).toEqual(before);
}

beforeAll(async () => {
  idp = await startLocalIdp({ audience: AUDIENCE });
  h = await startHarness({
    env: { OIDC_ISSUER: idp.issuer, OIDC_AUDIENCE: AUDIENCE, STEP_UP_MAX_AGE: '300', STEP_UP_ACR_VALUES: ACR_MFA },
  });
  prisma = h.app.get(PrismaService);
  verifier = h.app.get(AppUserAuth).verifier!;
}, 60_000);

afterAll(async () => {
  await h?.close();
  await idp?.stop();
});

describe('app users: access tokens from the OpenID provider', () => {
  it('a person signed in at the provider gets their customer made and bound, once', async () => {
    const { access_token: token } = await getDemoToken(idp.issuer, 'ada', { resource: AUDIENCE });
    expect((await h.http().get('/v1/me').set(bearer(token))).status).toBe(404);

    const created = await h.http().post('/v1/me/customer').set(bearer(token)).send(ME);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ email: 'ada@demo.example', firstName: 'Ada', lastName: 'Obi' });
    const binding = await prisma.userCustomer.findMany();
    expect(binding).toEqual([
      expect.objectContaining({ issuer: idp.issuer, subject: 'demo-ada', customerId: created.body.id }),
    ]);

    const me = await h.http().get('/v1/me').set(bearer(token));
    expect(me.status).toBe(200);
    expect(me.body.id).toBe(created.body.id);

    const before = await counts();
    const again = await h.http().post('/v1/me/customer').set(bearer(token)).send(ME);
    expect(again.status).toBe(409);
    expect(again.body.customerId).toBe(created.body.id);
    expect(await counts()).toEqual(before);

    // The audit trail names the person (no API client id).
    const event = await prisma.auditEvent.findFirst({ where: { action: 'customer.create' } });
    expect(event).toMatchObject({ actorId: null, actorName: `user demo-ada at ${idp.issuer}`, outcome: 'succeeded' });
  });

  it('keeps only customer scopes of a token, whatever the provider granted', async () => {
    const { access_token: token } = await getDemoToken(idp.issuer, 'dayo', {
      resource: AUDIENCE,
      scope: 'openid customers:read payouts:approve transactions:resolve audit:read transactions:read',
    });
    expect(decodeJwt(token).scope).toContain('payouts:approve');
    const user = await verifier.verify(token);
    expect(user).toMatchObject({ issuer: idp.issuer, subject: 'demo-dayo', scopes: ['customers:read'] });
  });

  it('a hand-made token signed with the provider key is accepted (the control of the hostile cases)', async () => {
    const res = await h
      .http()
      .get('/v1/me')
      .set(bearer(await handMade()));
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('not_found');
  });

  it('refuses hostile tokens with 401 invalid_token and writes nothing', async () => {
    const valid = await handMade();
    const [head, body] = valid.split('.');
    const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

    // alg none
    await expectInvalidToken(`${b64({ alg: 'none', typ: 'at+jwt' })}.${body}.`);
    // HS256 signed with the provider's public key as the secret
    const publicJwk = { kty: idp.keys[0].kty, crv: idp.keys[0].crv, x: idp.keys[0].x, y: idp.keys[0].y };
    for (const secret of [JSON.stringify(publicJwk), JSON.stringify({ keys: [publicJwk] })]) {
      const hsHead = b64({ alg: 'HS256', typ: 'at+jwt', kid: idp.keys[0].kid });
      const mac = createHmac('sha256', secret).update(`${hsHead}.${body}`).digest('base64url');
      await expectInvalidToken(`${hsHead}.${body}.${mac}`);
    }
    // wrong issuer, wrong audience
    await expectInvalidToken(await handMade({ iss: 'https://evil.example.com' }));
    await expectInvalidToken(await handMade({ aud: 'urn:another:api' }));
    // expired beyond the 60 s of skew; not yet valid beyond it
    await expectInvalidToken(await handMade({ exp: nowS() - 61 }));
    await expectInvalidToken(await handMade({ nbf: nowS() + 120 }));
    // no expiry at all
    await expectInvalidToken(await handMade({ exp: undefined }));
    // unknown kid (signed with a key the provider never published)
    await expectInvalidToken(await handMade({}, {}, await newSigningKey()));
    // tampered payload, original signature
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString()) as JWTPayload;
    await expectInvalidToken(`${head}.${b64({ ...payload, sub: 'demo-ada' })}.${valid.split('.')[2]}`);
    // A long token, validly signed: over MAX_TOKEN_LENGTH (8 KiB) but within Node's 16 KiB of headers → 401 unread.
    const long = await handMade({ padding: 'x'.repeat(10_000) });
    expect(long.length).toBeGreaterThan(13_000);
    await expectInvalidToken(long);
    // A 16 KiB token does not fit Node's request-header limit: 431 before any route, nothing written.
    const before = { ...(await counts()), audit: await auditEvents() };
    const huge = await handMade({ padding: 'x'.repeat(12_300) });
    expect(huge.length).toBeGreaterThanOrEqual(16_384);
    const tooBig = await h.http().post('/v1/me/customer').set(bearer(huge)).send(ME);
    expect(tooBig.status).toBe(431);
    expect(tooBig.body.code).toBe('request_headers_too_large');
    expect({ ...(await counts()), audit: await auditEvents() }).toEqual(before);
    // another token type (an ID token) signed by the provider
    await expectInvalidToken(await handMade({}, { typ: 'id_token+jwt' }));
    // not a JWT at all
    await expectInvalidToken('not.a.jwt');
  });

  it('answers 403 user_not_allowed_here to a person on every other route, reaching nothing', async () => {
    const token = await handMade({ scope: 'customers:read customers:write payouts:read payouts:write' });
    const spec = (await h.http().get('/docs-json')).body as {
      paths: Record<string, Record<string, { security?: unknown[] }>>;
    };
    const before = { ...(await counts()), audit: await auditEvents() };
    const walked: string[] = [];
    for (const [path, operations] of Object.entries(spec.paths)) {
      if (path.startsWith('/v1/me')) continue;
      for (const [method, operation] of Object.entries(operations)) {
        if (!operation.security?.length) continue; // public routes (health, provider callbacks) take no bearer
        const url = path.replace(/\{[^}]+\}/g, randomUUID());
        const agent = h.http();
        const res = await agent[method as 'get'](url).set(bearer(token)).set('Idempotency-Key', randomUUID()).send({});
        expect({ route: `${method} ${path}`, status: res.status, code: res.body.code }).toEqual({
          route: `${method} ${path}`,
          status: 403,
          code: 'user_not_allowed_here',
        });
        walked.push(`${method} ${path}`);
      }
    }
    expect(walked.length).toBeGreaterThan(40);
    expect(walked).toEqual(expect.arrayContaining(['post /v1/payouts/{id}/approve', 'get /v1/audit-events']));
    expect({ ...(await counts()), audit: await auditEvents() }).toEqual(before);
  });

  it('answers 403 to an API key on /v1/me, and keeps API keys working as before', async () => {
    const key = await h.key();
    expect((await h.http().get('/v1/me').set(bearer(key))).body.code).toBe('forbidden');
    expect((await h.http().get('/v1/customers').set(bearer(key))).status).toBe(200);
    expect((await h.http().get('/v1/customers').set(bearer('wgk_unknown'))).status).toBe(401);
  });

  it('refuses a token without a verified email, and one without customers:write', async () => {
    const before = await counts();
    const unverified = await h
      .http()
      .post('/v1/me/customer')
      .set(bearer(await handMade({ email_verified: false })))
      .send(ME);
    expect(unverified.status).toBe(403);
    expect(unverified.body.code).toBe('email_not_verified');
    const readOnly = await h
      .http()
      .post('/v1/me/customer')
      .set(bearer(await handMade({ scope: 'customers:read' })))
      .send(ME);
    expect(readOnly.status).toBe(403);
    expect(readOnly.body.code).toBe('forbidden');
    expect(await counts()).toEqual(before);
  });

  it('asks for a step-up on an old, weak sign-in, and takes a strong one', async () => {
    const before = { ...(await counts()), audit: await auditEvents() };
    const old = await h
      .http()
      .post('/v1/me/customer')
      .set(bearer(await handMade({ auth_time: nowS() - 301 })))
      .send(ME);
    expect(old.status).toBe(401);
    expect(old.body).toMatchObject({ code: 'step_up_required', maxAge: 300, acrValues: [ACR_MFA] });
    expect(old.headers['www-authenticate']).toMatch(
      new RegExp(
        `^Bearer error="insufficient_user_authentication", error_description="[^"]+", acr_values="${ACR_MFA}", max_age=300$`,
      ),
    );
    expect({ ...(await counts()), audit: await auditEvents() }).toEqual(before);
    expect(await h.sim.calls('createCustomer')).toHaveLength(1); // ada's only

    const strong = await h
      .http()
      .post('/v1/me/customer')
      .set(bearer(await handMade({ auth_time: nowS() - 3600, acr: ACR_MFA })))
      .send({ ...ME, firstName: 'Ben' });
    expect(strong.status).toBe(201);
    expect(strong.body.email).toBe('ben@demo.example');
  });

  it('an unknown-kid storm makes at most one JWKS fetch a minute', async () => {
    verifier.now = () => Date.now() + UNKNOWN_KID_REFETCH_MS + 1_000; // a minute after every fetch so far
    const stranger = await newSigningKey();
    const tokens = await Promise.all(Array.from({ length: 40 }, () => handMade({}, { kid: randomUUID() }, stranger)));
    const fetchesBefore = idp.jwksRequests();
    const answers = await Promise.all(tokens.map((t) => h.http().get('/v1/me').set(bearer(t))));
    expect(answers.map((r) => r.status)).toEqual(tokens.map(() => 401));
    await Promise.all(tokens.map((t) => h.http().get('/v1/me').set(bearer(t))));
    expect(idp.jwksRequests() - fetchesBefore).toBe(1);
  });

  it('keeps working on cached keys while the provider is down; with none cached answers 503', async () => {
    idp.setAvailable(false);
    try {
      expect(
        (
          await h
            .http()
            .get('/v1/me')
            .set(bearer(await handMade()))
        ).status,
      ).toBe(200); // ben's customer
      const unknown = await h
        .http()
        .get('/v1/me')
        .set(bearer(await handMade({}, { kid: 'gone' }, await newSigningKey())));
      expect(unknown.status).toBe(401);

      const peer = await startPeer(h); // a new instance: nothing cached
      try {
        const res = await peer.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(await handMade()) });
        expect(res.statusCode).toBe(503);
        expect(res.json()).toMatchObject({ code: 'identity_provider_unavailable' });
      } finally {
        await peer.close();
      }
    } finally {
      idp.setAvailable(true);
    }
  });

  it('follows the provider rotating its keys: new tokens accepted, old ones until they expire', async () => {
    const old = await getDemoToken(idp.issuer, 'ada', { resource: AUDIENCE });
    expect((await h.http().get('/v1/me').set(bearer(old.access_token))).status).toBe(200);
    const port = Number(new URL(idp.issuer).port);
    const oldKey = idp.keys[0];
    await idp.stop();
    idp = await startLocalIdp({
      audience: AUDIENCE,
      port,
      keys: [await newSigningKey(), oldKey],
      accessTokenTtl: 3600,
    });
    const fresh = await getDemoToken(idp.issuer, 'ada', { resource: AUDIENCE });
    expect(JSON.parse(Buffer.from(fresh.access_token.split('.')[0], 'base64url').toString()).kid).not.toBe(oldKey.kid);

    const start = Date.now();
    verifier.now = () => Date.now() + 2 * UNKNOWN_KID_REFETCH_MS + 2_000; // past the refetch interval
    expect((await h.http().get('/v1/me').set(bearer(fresh.access_token))).status).toBe(200);
    expect((await h.http().get('/v1/me').set(bearer(old.access_token))).status).toBe(200);

    // Once the old token's lifetime (and the 60 s of skew) is over, it is refused; the new one is not.
    const oldExp = decodeJwt(old.access_token).exp! * 1000;
    verifier.now = () => Date.now() - start + oldExp + 61_000 + 2 * UNKNOWN_KID_REFETCH_MS;
    const expired = await h.http().get('/v1/me').set(bearer(old.access_token));
    expect(expired.status).toBe(401);
    expect(expired.headers['www-authenticate']).toContain('error_description="expired"');
    expect((await h.http().get('/v1/me').set(bearer(fresh.access_token))).status).toBe(200);
  });
});
