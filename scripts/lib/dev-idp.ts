/**
 * `npm start`'s sign-in for people (DEVELOPMENT ONLY): unless OIDC_ISSUER is set, starts the local
 * OpenID provider (idp/) in this process and points the gateway at it (OIDC_ISSUER, OIDC_AUDIENCE,
 * and STEP_UP_ACR_VALUES = its strong-sign-in acr, each only when unset) through process.env, which
 * the gateway's process inherits.
 * @returns the banner lines saying how to get a token as each demo person.
 */
import { devIdpBanner, startDevIdp } from '../../idp/dev';
import { ACR_MFA } from '../../idp/provider';

export async function startDevIdentityProvider(gatewayUrl: string): Promise<string[]> {
  if (process.env.OIDC_ISSUER)
    return [`  Sign-in:  ${process.env.OIDC_ISSUER} (OIDC_ISSUER; no local provider started)`];
  const idp = await startDevIdp();
  process.env.OIDC_ISSUER = idp.issuer;
  process.env.OIDC_AUDIENCE = idp.audience;
  process.env.STEP_UP_ACR_VALUES ??= ACR_MFA;
  return devIdpBanner(idp, gatewayUrl);
}
