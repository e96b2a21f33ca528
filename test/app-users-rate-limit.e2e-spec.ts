import { ACR_PASSWORD, type LocalIdp, startLocalIdp } from '../idp/provider';
import { getDemoToken } from '../idp/token';
import { type Harness, startHarness } from './support/harness';

const AUDIENCE = 'urn:wallet-gateway:test';
let idp: LocalIdp;
let h: Harness;

beforeAll(async () => {
  idp = await startLocalIdp({ audience: AUDIENCE });
  h = await startHarness({
    env: {
      OIDC_ISSUER: idp.issuer,
      OIDC_AUDIENCE: AUDIENCE,
      RATE_LIMIT_PER_MINUTE: '3',
      STEP_UP_ACR_VALUES: ACR_PASSWORD,
    },
  });
}, 60_000);

afterAll(async () => {
  await h?.close();
  await idp?.stop();
});

it('counts the rate limit per person, not per address', async () => {
  const ada = (await getDemoToken(idp.issuer, 'ada', { resource: AUDIENCE })).access_token;
  const ben = (await getDemoToken(idp.issuer, 'ben', { resource: AUDIENCE })).access_token;
  const me = (token: string) =>
    h
      .http()
      .get('/v1/me')
      .set({ Authorization: `Bearer ${token}` });
  for (let i = 0; i < 3; i++) expect((await me(ada)).status).toBe(404);
  const limited = await me(ada);
  expect(limited.status).toBe(429);
  expect(limited.body.code).toBe('rate_limited');
  // Same address, another person: their own budget.
  expect((await me(ben)).status).toBe(404);
});
