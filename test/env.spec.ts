import { parseApprovalThresholds, parseDuration, validateEnv } from '../src/config/env';

const valid = {
  DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/db',
  PROVIDER_BASE_URL: 'http://127.0.0.1:4010/api/v1',
  PROVIDER_API_KEY: 'sk.abc.def',
  PROVIDER_WEBHOOK_SECRET: 'secret',
  PUBLIC_BASE_URL: 'http://127.0.0.1:3000',
};

describe('validateEnv', () => {
  it('fills defaults', () => {
    const env = validateEnv(valid);
    expect(env).toMatchObject({
      PORT: 3000,
      PROVIDER_TIMEOUT_MS: 10000,
      RATE_LIMIT_PER_MINUTE: 600,
      LOG_LEVEL: 'info',
    });
  });

  it('names a missing variable', () => {
    const { DATABASE_URL: _omit, ...rest } = valid;
    expect(() => validateEnv(rest)).toThrow(/DATABASE_URL is missing/);
  });

  it('names a malformed variable', () => {
    expect(() => validateEnv({ ...valid, PROVIDER_TIMEOUT_MS: 'soon' })).toThrow(/PROVIDER_TIMEOUT_MS is malformed/);
    expect(() => validateEnv({ ...valid, PROVIDER_BASE_URL: 'not a url' })).toThrow(/PROVIDER_BASE_URL is malformed/);
  });

  it('reads payout approval thresholds (minor units per currency) and the approval TTL', () => {
    const env = validateEnv({ ...valid, PAYOUT_APPROVAL_THRESHOLDS: 'usd:500000, NGN:200000000' });
    expect(parseApprovalThresholds(env.PAYOUT_APPROVAL_THRESHOLDS)).toEqual(
      new Map([
        ['USD', 500000n],
        ['NGN', 200000000n],
      ]),
    );
    expect(parseApprovalThresholds(validateEnv(valid).PAYOUT_APPROVAL_THRESHOLDS).size).toBe(0);
    expect(parseDuration(validateEnv(valid).PAYOUT_APPROVAL_TTL)).toBe(24 * 3_600_000);
    expect(parseDuration('30m')).toBe(1_800_000);
    expect(() => validateEnv({ ...valid, PAYOUT_APPROVAL_THRESHOLDS: 'USD=5' })).toThrow(
      /PAYOUT_APPROVAL_THRESHOLDS is malformed/,
    );
    expect(() => validateEnv({ ...valid, PAYOUT_APPROVAL_THRESHOLDS: 'USD:1,USD:2' })).toThrow(/USD is named twice/);
    expect(() => validateEnv({ ...valid, PAYOUT_APPROVAL_TTL: 'a day' })).toThrow(/PAYOUT_APPROVAL_TTL is malformed/);
    expect(() => validateEnv({ ...valid, RECONCILIATION_CRON: 'nightly' })).toThrow(/RECONCILIATION_CRON is malformed/);
  });
});

describe('validateEnv: shutdown and connection budget', () => {
  it('defaults to a 10 s shutdown delay and 10 + 10 + 2 connections with named statements', () => {
    expect(validateEnv(valid)).toMatchObject({
      SHUTDOWN_DELAY_MS: 10000,
      DATABASE_POOL_SIZE: 10,
      READ_POOL_SIZE: 10,
      JOBS_POOL_SIZE: 2,
      PG_NAMED_STATEMENTS: true,
    });
  });

  it('reads the pool sizes and the statement switch, and refuses an empty pool', () => {
    expect(
      validateEnv({ ...valid, DATABASE_POOL_SIZE: '4', READ_POOL_SIZE: '2', PG_NAMED_STATEMENTS: 'false' }),
    ).toMatchObject({ DATABASE_POOL_SIZE: 4, READ_POOL_SIZE: 2, PG_NAMED_STATEMENTS: false });
    expect(() => validateEnv({ ...valid, READ_POOL_SIZE: '0' })).toThrow(/READ_POOL_SIZE is malformed/);
  });

  it('bounds the wait for a database connection at 10 s by default (DATABASE_POOL_TIMEOUT_MS)', () => {
    expect(validateEnv(valid)).toMatchObject({ DATABASE_POOL_TIMEOUT_MS: 10000 });
    expect(validateEnv({ ...valid, DATABASE_POOL_TIMEOUT_MS: '2000' })).toMatchObject({
      DATABASE_POOL_TIMEOUT_MS: 2000,
    });
    expect(() => validateEnv({ ...valid, DATABASE_POOL_TIMEOUT_MS: '0' })).toThrow(
      /DATABASE_POOL_TIMEOUT_MS is malformed/,
    );
  });

  it("still reads FINANCE_POOL_SIZE, the read pool size's former name, when READ_POOL_SIZE is unset", () => {
    expect(validateEnv({ ...valid, FINANCE_POOL_SIZE: '3' })).toMatchObject({ READ_POOL_SIZE: 3 });
    expect(validateEnv({ ...valid, FINANCE_POOL_SIZE: '3', READ_POOL_SIZE: '5' })).toMatchObject({ READ_POOL_SIZE: 5 });
    expect(() => validateEnv({ ...valid, FINANCE_POOL_SIZE: '0' })).toThrow(/FINANCE_POOL_SIZE is malformed/);
  });
});

describe('validateEnv: people (OIDC) and step-up', () => {
  it('leaves people off by default, with a 300 s step-up window and no strong acr', () => {
    expect(validateEnv(valid)).toMatchObject({ OIDC_ISSUER: undefined, STEP_UP_MAX_AGE: 300, STEP_UP_ACR_VALUES: '' });
  });

  it('takes OIDC_ISSUER and OIDC_AUDIENCE together, never one alone', () => {
    const both = { OIDC_ISSUER: 'https://login.example.com/realms/wallet', OIDC_AUDIENCE: 'urn:wallet-gateway:api' };
    expect(validateEnv({ ...valid, ...both })).toMatchObject(both);
    expect(() => validateEnv({ ...valid, OIDC_ISSUER: both.OIDC_ISSUER })).toThrow(/set together/);
    expect(() => validateEnv({ ...valid, OIDC_AUDIENCE: both.OIDC_AUDIENCE })).toThrow(/set together/);
    expect(() => validateEnv({ ...valid, ...both, OIDC_ISSUER: 'login.example.com' })).toThrow(
      /OIDC_ISSUER is malformed/,
    );
  });

  it('refuses a malformed step-up setting', () => {
    expect(validateEnv({ ...valid, STEP_UP_ACR_VALUES: 'urn:a,urn:b', STEP_UP_MAX_AGE: '60' })).toMatchObject({
      STEP_UP_ACR_VALUES: 'urn:a,urn:b',
      STEP_UP_MAX_AGE: 60,
    });
    expect(() => validateEnv({ ...valid, STEP_UP_MAX_AGE: '-1' })).toThrow(/STEP_UP_MAX_AGE is malformed/);
    expect(() => validateEnv({ ...valid, STEP_UP_ACR_VALUES: 'urn:a, urn:b' })).toThrow(
      /STEP_UP_ACR_VALUES is malformed/,
    );
  });
});
