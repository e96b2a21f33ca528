/**
 * The banner lines of the local OpenID provider (DEVELOPMENT ONLY): where it is and how to get a
 * token as each demo person. Apart from idp/dev.ts so that npm start's launcher, which runs the
 * provider as a child, prints them without loading oidc-provider itself.
 */
import { DEFAULT_IDP_PORT, DEMO_ONE_TIME_CODE, DEMO_PASSWORD, DEMO_PEOPLE } from './demo';

/** Lines of the banner for the provider at `issuer` (e.g. http://127.0.0.1:4020) and the gateway at `gatewayUrl`. */
export function devIdpBanner(issuer: string, gatewayUrl: string): string[] {
  const port = Number(new URL(issuer).port);
  return [
    `  Sign-in:  ${issuer}  (local OpenID provider, demo people only; password ${DEMO_PASSWORD})`,
    ...DEMO_PEOPLE.map((p) => `    ${p.login.padEnd(6)} ${p.name} (${p.description})`),
    '  A token as a person (add --otp ' + DEMO_ONE_TIME_CODE + ' for a strong sign-in):',
    `    TOKEN=$(${port === DEFAULT_IDP_PORT ? '' : `IDP_PORT=${port} `}npm run -s token -- ada) && curl -s -H "Authorization: Bearer $TOKEN" ${gatewayUrl}/v1/me`,
  ];
}
