/**
 * The local provider as `npm start` and `npm run idp` run it (DEVELOPMENT ONLY): its port, the
 * gateway's audience (the banner's lines are in idp/banner.ts).
 */
import { DEFAULT_AUDIENCE, DEFAULT_IDP_PORT } from './demo';
import { type LocalIdp, startLocalIdp } from './provider';

/** Starts the local provider on IDP_PORT (default 4020) for OIDC_AUDIENCE (default DEFAULT_AUDIENCE). */
export function startDevIdp(env: NodeJS.ProcessEnv = process.env): Promise<LocalIdp> {
  return startLocalIdp({
    port: Number(env.IDP_PORT ?? DEFAULT_IDP_PORT),
    audience: env.OIDC_AUDIENCE ?? DEFAULT_AUDIENCE,
  });
}
