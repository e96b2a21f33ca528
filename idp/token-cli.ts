/**
 * `npm run token -- <login> [--otp <code>] [--scope "<scopes>"]` (DEVELOPMENT ONLY): signs a demo
 * person in at the local provider (OIDC_ISSUER, default http://127.0.0.1:4020) and prints their
 * access token for the gateway (OIDC_AUDIENCE) on stdout.
 */
import { parseArgs } from 'node:util';
import { DEFAULT_AUDIENCE, DEFAULT_IDP_PORT, DEMO_PEOPLE } from './demo';
import { getDemoToken } from './token';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { otp: { type: 'string' }, scope: { type: 'string' } },
});
const login = positionals[0];
if (!login) {
  process.stderr.write(
    `usage: npm run token -- <login> [--otp CODE]; logins: ${DEMO_PEOPLE.map((p) => p.login).join(', ')}\n`,
  );
  process.exit(2);
}
const issuer = process.env.OIDC_ISSUER ?? `http://127.0.0.1:${process.env.IDP_PORT ?? DEFAULT_IDP_PORT}`;
getDemoToken(issuer, login, {
  otp: values.otp,
  scope: values.scope,
  resource: process.env.OIDC_AUDIENCE ?? DEFAULT_AUDIENCE,
})
  .then((tokens) => process.stdout.write(`${tokens.access_token}\n`))
  .catch((error: unknown) => {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(1);
  });
