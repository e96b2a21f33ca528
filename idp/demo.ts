/**
 * The local provider's demo people and constants (DEVELOPMENT ONLY), apart from the provider
 * itself so that the token helper and its CLI load without `oidc-provider`.
 */
import { SCOPES } from '../src/auth/scopes';

/** Default port of the local provider (IDP_PORT). */
export const DEFAULT_IDP_PORT = 4020;
/** Default audience (OIDC_AUDIENCE) of tokens for the local gateway. */
export const DEFAULT_AUDIENCE = 'urn:wallet-gateway:api';

/** The demo password of every demo person (development only). */
export const DEMO_PASSWORD = 'demo-password';
/** The demo one-time code: entered beside the password, the sign-in counts as strong (`acr` ACR_MFA). */
export const DEMO_ONE_TIME_CODE = '123456';
/** `acr` of a sign-in with the password alone. */
export const ACR_PASSWORD = 'urn:wallet-gateway:acr:password';
/** `acr` of a sign-in with the password and the one-time code. */
export const ACR_MFA = 'urn:wallet-gateway:acr:mfa';
/** The public client the apps (and the token helper) sign in with: authorization code + PKCE. */
export const DEMO_CLIENT_ID = 'wallet-app';
/** Its redirect URI (a loopback address: nothing needs to listen there, the helper reads the code from it). */
export const DEMO_REDIRECT_URI = 'http://127.0.0.1:7/callback';

/** A demo person: their login, and the claims their tokens carry. */
export interface DemoPerson {
  login: string;
  sub: string;
  email: string;
  email_verified: boolean;
  name: string;
  roles: string[];
  /** What the person is, for the `npm start` banner. */
  description: string;
}

/** Two app customers, a finance clerk and two approvers (docs/auth.md "Demo people"). */
export const DEMO_PEOPLE: readonly DemoPerson[] = [
  {
    login: 'ada',
    sub: 'demo-ada',
    email: 'ada@demo.example',
    email_verified: true,
    name: 'Ada Obi',
    roles: ['customer'],
    description: 'app customer',
  },
  {
    login: 'ben',
    sub: 'demo-ben',
    email: 'ben@demo.example',
    email_verified: true,
    name: 'Ben Mensah',
    roles: ['customer'],
    description: 'app customer',
  },
  {
    login: 'clara',
    sub: 'demo-clara',
    email: 'clara@demo.example',
    email_verified: true,
    name: 'Clara Finance',
    roles: ['finance'],
    description: 'finance clerk',
  },
  {
    login: 'dayo',
    sub: 'demo-dayo',
    email: 'dayo@demo.example',
    email_verified: true,
    name: 'Dayo Approver',
    roles: ['finance', 'approver'],
    description: 'approver',
  },
  {
    login: 'efe',
    sub: 'demo-efe',
    email: 'efe@demo.example',
    email_verified: true,
    name: 'Efe Approver',
    roles: ['finance', 'approver'],
    description: 'approver',
  },
];

/** Scopes the provider grants for the gateway (resource); the gateway decides what a person's token may do. */
export const GATEWAY_RESOURCE_SCOPES: readonly string[] = SCOPES;
