/**
 * The local provider as `npm start` and `npm run idp` run it (DEVELOPMENT ONLY): its port, the
 * gateway's audience, and the banner telling how to get a token as each demo person.
 */
import { DEFAULT_AUDIENCE, DEFAULT_IDP_PORT, DEMO_ONE_TIME_CODE, DEMO_PASSWORD, DEMO_PEOPLE } from './demo';
import { type LocalIdp, startLocalIdp } from './provider';

/** Starts the local provider on IDP_PORT (default 4020) for OIDC_AUDIENCE (default DEFAULT_AUDIENCE). */
export function startDevIdp(env: NodeJS.ProcessEnv = process.env): Promise<LocalIdp> {
  return startLocalIdp({
    port: Number(env.IDP_PORT ?? DEFAULT_IDP_PORT),
    audience: env.OIDC_AUDIENCE ?? DEFAULT_AUDIENCE,
  });
}

/** Lines of the banner: where the provider is and how to get a token as each demo person. */
export function devIdpBanner(idp: LocalIdp, gatewayUrl: string): string[] {
  const port = Number(new URL(idp.issuer).port);
  return [
    `  Sign-in:  ${idp.issuer}  (local OpenID provider, demo people only; password ${DEMO_PASSWORD})`,
    ...DEMO_PEOPLE.map((p) => `    ${p.login.padEnd(6)} ${p.name} (${p.description})`),
    '  A token as a person (add --otp ' + DEMO_ONE_TIME_CODE + ' for a strong sign-in):',
    `    TOKEN=$(${port === DEFAULT_IDP_PORT ? '' : `IDP_PORT=${port} `}npm run -s token -- ada) && curl -s -H "Authorization: Bearer $TOKEN" ${gatewayUrl}/v1/me`,
  ];
}
