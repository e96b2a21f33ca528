import { plainToInstance, Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsNotEmpty, IsString, IsUrl, Max, Matches, Min, validateSync } from 'class-validator';
import { piiKeyRingFrom } from '../common/crypto/pii-cipher';
import { PiiKeyError } from '../common/crypto/pii-key-ring';
import { OptionalNonNull } from '../common/validation';

/** An environment variable read as a number, `fallback` when unset or empty (then validated by the decorators below it). */
function NumberOr(fallback?: number): PropertyDecorator {
  return Transform(({ value }) => (value === undefined || value === '' ? fallback : Number(value)));
}

/** An environment variable read as a boolean (`true`/`"true"`), `fallback` when unset or empty. */
function BooleanOr(fallback: boolean): PropertyDecorator {
  return Transform(({ value }) =>
    value === undefined || value === '' ? fallback : value === true || value === 'true',
  );
}

/** An environment variable read as text, `fallback` when unset or empty. */
function TextOr(fallback: string): PropertyDecorator {
  return Transform(({ value }: { value: unknown }) => (value === undefined || value === '' ? fallback : value));
}

/** `CUR:minor,CUR:minor` (PAYOUT_APPROVAL_THRESHOLDS), possibly empty. */
const THRESHOLDS_FORMAT = /^$|^[A-Z]{3,5}:\d{1,18}(,[A-Z]{3,5}:\d{1,18})*$/;

/**
 * Parses PAYOUT_APPROVAL_THRESHOLDS (`USD:500000,NGN:200000000`: per upper-case currency, the
 * amount in minor units from which a payout needs approval) into a map; empty → no approvals.
 * @throws Error on a malformed value or a currency named twice (validateEnv checks at start).
 */
export function parseApprovalThresholds(value: string): Map<string, bigint> {
  const trimmed = value.replace(/\s+/g, '');
  if (!THRESHOLDS_FORMAT.test(trimmed)) throw new Error('expected CUR:minor[,CUR:minor...]');
  const thresholds = new Map<string, bigint>();
  for (const pair of trimmed ? trimmed.split(',') : []) {
    const [currency, minor] = pair.split(':');
    if (thresholds.has(currency)) throw new Error(`${currency} is named twice`);
    thresholds.set(currency, BigInt(minor));
  }
  return thresholds;
}

const DURATION_UNITS_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** Parses a duration such as `24h`, `30m`, `90s` or `2d` into milliseconds. @throws Error when malformed. */
export function parseDuration(value: string): number {
  const match = /^(\d{1,6})([smhd])$/.exec(value.trim());
  if (!match) throw new Error('expected a duration such as 24h, 30m, 90s or 2d');
  return Number(match[1]) * DURATION_UNITS_MS[match[2] as keyof typeof DURATION_UNITS_MS];
}

/**
 * The gateway's environment, validated once at start. A missing or malformed variable stops the
 * process with a message naming it (see `validateEnv`). Documented in `.env.example`.
 */
export class Env {
  @OptionalNonNull()
  @IsIn(['development', 'production', 'test'])
  NODE_ENV: 'development' | 'production' | 'test' = 'development';

  /** Port the gateway listens on. */
  @NumberOr(3000)
  @IsInt()
  @Min(0)
  @Max(65535)
  PORT = 3000;

  /** Interface to bind; 0.0.0.0 in containers. */
  @OptionalNonNull()
  @IsString()
  HOST = '127.0.0.1';

  /** PostgreSQL connection string, e.g. postgresql://postgres@127.0.0.1:5432/wallet. `?schema=` is honoured. */
  @IsString()
  @IsNotEmpty()
  @IsUrl({ protocols: ['postgres', 'postgresql'], require_tld: false, require_protocol: true })
  DATABASE_URL: string;

  /** Provider base URL including the version prefix, e.g. http://127.0.0.1:4010/api/v1. */
  @IsUrl({ protocols: ['http', 'https'], require_tld: false, require_protocol: true })
  PROVIDER_BASE_URL: string;

  /** Provider secret key, sent as `Authorization: Bearer`. Never logged. */
  @IsString()
  @IsNotEmpty()
  PROVIDER_API_KEY: string;

  /** Secret for the provider's HMAC-SHA512 callback signatures (docs/provider.md#callback-delivery). */
  @IsString()
  @IsNotEmpty()
  PROVIDER_WEBHOOK_SECRET: string;

  /**
   * Keys that encrypt personal data at rest (AES-256-GCM): `<id>:<base64 of 32 bytes>`, comma
   * separated, e.g. `k2:…,k1:…`; the first encrypts, all decrypt (docs/operations.md "Personal data
   * encryption"). Required in production; elsewhere a built-in development key is used when unset.
   * Never logged.
   */
  @OptionalNonNull()
  @IsString()
  PII_ENCRYPTION_KEYS?: string;

  /**
   * Optional key of the lookup hashes (HMAC-SHA256) of personal data, base64 of 32 bytes. When unset
   * it is derived from each PII_ENCRYPTION_KEYS key (rotation then rewrites the hashes too).
   */
  @OptionalNonNull()
  @IsString()
  PII_HMAC_KEY?: string;

  /** Per-request timeout for provider calls, in milliseconds. */
  @NumberOr(10000)
  @IsInt()
  @Min(50)
  @Max(120000)
  PROVIDER_TIMEOUT_MS = 10000;

  /** Base URL at which the provider reaches this gateway (callbackUrl = PUBLIC_BASE_URL + /webhooks/provider). */
  @IsUrl({ protocols: ['http', 'https'], require_tld: false, require_protocol: true })
  PUBLIC_BASE_URL: string;

  /** Requests per minute allowed per API key. */
  @NumberOr(600)
  @IsInt()
  @Min(1)
  RATE_LIMIT_PER_MINUTE = 600;

  /** Largest accepted request body, in bytes. */
  @NumberOr(1048576)
  @IsInt()
  @Min(1024)
  BODY_LIMIT_BYTES = 1048576;

  /** pino level: fatal, error, warn, info, debug, trace or silent. */
  @OptionalNonNull()
  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  LOG_LEVEL = 'info';

  /** Run the background jobs (reconciliation, expiry) on pg-boss in this instance (default true). */
  @BooleanOr(true)
  @IsBoolean()
  JOBS_ENABLED = true;

  /**
   * When provider callbacks are applied: `background` (default) answers 200 as soon as the event is
   * stored and applies it right after, in this process (docs/provider.md#callback-delivery: answer 200
   * quickly, do the work after storing); `inline` applies it before answering and reports the outcome (tests, debugging).
   */
  @TextOr('background')
  @IsIn(['background', 'inline'])
  WEBHOOK_APPLY: 'background' | 'inline' = 'background';

  /** How many stored callbacks this instance applies at once in `background` mode (default 4). */
  @NumberOr(4)
  @IsInt()
  @Min(1)
  @Max(64)
  WEBHOOK_APPLY_CONCURRENCY = 4;

  /**
   * Callbacks one instance holds in memory waiting to be applied (default 2000); past it they wait
   * in the inbox, marked due, and are taken from there in batches.
   */
  @NumberOr(2000)
  @IsInt()
  @Min(1)
  WEBHOOK_APPLY_QUEUE_LIMIT = 2000;

  /** Outbound events: how often each instance looks for due outbox messages (with JOBS_ENABLED), in ms. */
  @NumberOr(1000)
  @IsInt()
  @Min(50)
  @Max(600000)
  OUTBOX_POLL_MS = 1000;

  /**
   * Audit trail: how often each instance seals committed audit events into the hash chain (with
   * JOBS_ENABLED), in ms (default 1000). GET /v1/audit-events and `npm run audit -- verify` also seal first.
   */
  @NumberOr(1000)
  @IsInt()
  @Min(50)
  @Max(600000)
  AUDIT_SEAL_MS = 1000;

  /** Outbound events: attempts per message before it is marked `failed` (retries back off up to 8 h apart). */
  @NumberOr(12)
  @IsInt()
  @Min(1)
  @Max(50)
  OUTBOX_MAX_ATTEMPTS = 12;

  /** Outbound events: time allowed for one delivery attempt (connect, send, answer), in ms. */
  @NumberOr(10000)
  @IsInt()
  @Min(100)
  @Max(60000)
  OUTBOX_TIMEOUT_MS = 10000;

  /**
   * Minutes after which no ledger row may still be `created` or `unknown` (default 10): reconciliation
   * settles such rows by what the provider lets us learn (issue "Every movement settles"): a payout or
   * collection whose provider answer was lost ends `failed` (`provider_answer_lost`), a swap
   * `needs_review`. Must exceed the payout rate window (~4 min) and a swap quote's life (~250 s).
   */
  @NumberOr(10)
  @IsInt()
  @Min(5)
  @Max(7 * 24 * 60)
  SETTLEMENT_DEADLINE = 10;

  /**
   * How long an Idempotency-Key claim holds while its request runs, in ms (default 120000). A claim
   * whose process died is taken over once it lapses. Must exceed the longest request (a provider
   * call may take PROVIDER_TIMEOUT_MS).
   */
  @NumberOr(120000)
  @IsInt()
  @Min(1000)
  @Max(3600000)
  IDEMPOTENCY_LEASE_MS = 120000;

  /**
   * Unit in which the provider reads initialize-swap's `amount` (the request): the provider does
   * not say; its samples (amount 10 → sourceAmount "10", finalize `amount: 10, centAmount: 1000`)
   * read as `major` (default). The quote's amounts are always read as the documented major decimal
   * strings, so a provider reading the request in the other unit answers ×100 and the quote is
   * refused (502 provider_amount_mismatch). See src/provider/provider-units.ts.
   */
  @OptionalNonNull()
  @IsIn(['major', 'minor'])
  SWAP_AMOUNT_UNIT: 'major' | 'minor' = 'major';

  /**
   * Unit of `amount` in card events (virtualcard.topup.*, .withdrawal.*, .transaction.*):
   * undocumented (docs/provider.md#events); `major` (default) matches card-transaction records.
   */
  @OptionalNonNull()
  @IsIn(['major', 'minor'])
  CARD_EVENT_AMOUNT_UNIT: 'major' | 'minor' = 'major';

  /**
   * Outbound webhooks may reach loopback and private receivers (127/8, ::1, 10/8, 172.16/12,
   * 192.168/16, fc00::/7) — for development and tests only: refused with NODE_ENV=production.
   * Default false: every subscription and delivery must resolve to a public address
   * (src/outbound/outbound-address.ts).
   */
  @Transform(({ value }) => value === true || value === 'true')
  @IsBoolean()
  OUTBOUND_ALLOW_PRIVATE = false;

  /**
   * Who may read and change a resource: `all` (default: every key with the scope, as before) or
   * `client` (a key confirms, reads and changes only what its own API client created; others'
   * resources answer 404). See docs/api.md "Who sees what".
   */
  @OptionalNonNull()
  @IsIn(['all', 'client'])
  OWNERSHIP: 'all' | 'client' = 'all';

  /**
   * Payout approvals (maker-checker): per currency, the amount in minor units from which a payout
   * needs the approval of a second API client, e.g. `USD:500000,NGN:200000000` (5,000.00 USD,
   * 2,000,000.00 NGN). Such a payout is stored `awaiting_approval` and the provider is not called
   * until POST /v1/payouts/{id}/approve. Empty (default): no payout needs approval. See docs/finance.md.
   */
  @Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' ? value.replace(/\s+/g, '').toUpperCase() : (value ?? ''),
  )
  @IsString()
  @Matches(THRESHOLDS_FORMAT, { message: 'PAYOUT_APPROVAL_THRESHOLDS must read CUR:minor[,CUR:minor...]' })
  PAYOUT_APPROVAL_THRESHOLDS = '';

  /** How long a payout waits for approval before the expiry job marks it `expired` (e.g. 24h, 30m; default 24h). */
  @TextOr('24h')
  @IsString()
  @Matches(/^\d{1,6}[smhd]$/, { message: 'PAYOUT_APPROVAL_TTL must be a duration such as 24h, 30m or 90s' })
  PAYOUT_APPROVAL_TTL = '24h';

  /** Reconciliation reports: provider look-ups per second a run makes at most (default 5). */
  @NumberOr(5)
  @IsInt()
  @Min(1)
  @Max(1000)
  RECONCILIATION_RATE = 5;

  /**
   * Reconciliation reports: when the nightly run for the previous UTC day starts (pg-boss cron, UTC,
   * five fields; default `30 1 * * *`, 01:30 UTC).
   */
  @TextOr('30 1 * * *')
  @IsString()
  @Matches(/^\S+( \S+){4}$/, { message: 'RECONCILIATION_CRON must be a five-field cron expression' })
  RECONCILIATION_CRON = '30 1 * * *';

  /**
   * Rolling deploys: after SIGTERM (or SIGINT/SIGHUP) /health/ready answers 503 at once while every
   * other route keeps serving for this long, in ms (default 10000), so that the load balancer's
   * health checks take the instance out before it stops accepting, even when a loaded instance
   * answers them late (deploy/haproxy.cfg: up to 1 s + 2 × 3 s + 0.5 s). The orchestrator's grace
   * period must be at least this plus 3 × PROVIDER_TIMEOUT_MS (docs/operations.md "Rolling deploys").
   */
  @NumberOr(10000)
  @IsInt()
  @Min(0)
  @Max(600000)
  SHUTDOWN_DELAY_MS = 10000;

  /**
   * Connection budget (docs/operations.md): the most connections Prisma's pool (@prisma/adapter-pg)
   * opens, default 10. Every write and most reads go through it.
   */
  @NumberOr(10)
  @IsInt()
  @Min(1)
  @Max(500)
  DATABASE_POOL_SIZE = 10;

  /**
   * Connection budget: the read pool's connections (src/database/read-pool.ts: the hot reads by id,
   * the customers and card movements pages, the finance reads and CSV export), default 10. Unset,
   * FINANCE_POOL_SIZE (its former name, when the pool served the finance reads alone) is read instead.
   */
  @NumberOr(10)
  @IsInt()
  @Min(1)
  @Max(500)
  READ_POOL_SIZE = 10;

  /**
   * Longest wait for a database connection, in ms (default 10000): a query of Prisma's pool or the
   * read pool that gets no connection within it (pool full, or the server not answering a connect:
   * a failover in progress), and an interactive transaction that cannot start within it, fail and
   * the request answers 503 `database_unavailable` with `Retry-After` (docs/operations.md).
   */
  @NumberOr(10000)
  @IsInt()
  @Min(100)
  @Max(120000)
  DATABASE_POOL_TIMEOUT_MS = 10000;

  /** Former name of READ_POOL_SIZE, still accepted (read only when READ_POOL_SIZE is unset). */
  @OptionalNonNull()
  @NumberOr()
  @IsInt()
  @Min(1)
  @Max(500)
  FINANCE_POOL_SIZE?: number;

  /** Connection budget: pg-boss's pool for the background jobs (only with JOBS_ENABLED), default 2. */
  @NumberOr(2)
  @IsInt()
  @Min(1)
  @Max(100)
  JOBS_POOL_SIZE = 2;

  /**
   * Whether the read pool's statements (hot reads, finance reads) are named (server-side) prepared
   * statements, prepared once per connection (default true, the fastest). Set false behind PgBouncer in transaction mode before
   * 1.21 (or without max_prepared_statements): the statements then go unnamed, parsed each time.
   */
  @BooleanOr(true)
  @IsBoolean()
  PG_NAMED_STATEMENTS = true;

  /**
   * Redis or Valkey for the per-API-key rate limit shared by every instance (redis:// or rediss://,
   * optional). Unset: each instance counts in its own memory (fine for one instance).
   */
  @OptionalNonNull()
  @IsUrl({ protocols: ['redis', 'rediss'], require_tld: false, require_protocol: true })
  REDIS_URL?: string;

  /** Put before every Redis key (default `wallet-gateway:`), so that several gateways or test files can share a server. */
  @TextOr('wallet-gateway:')
  @IsString()
  REDIS_KEY_PREFIX = 'wallet-gateway:';

  /**
   * Longest wait for Redis (connect or one command), in ms (default 250). Past it, or with Redis
   * down, the request is served without a shared count (fail open) and counted in
   * rate_limit_store_errors_total.
   */
  @NumberOr(250)
  @IsInt()
  @Min(10)
  @Max(10000)
  REDIS_TIMEOUT_MS = 250;

  /**
   * Provider circuit breaker: consecutive failed provider calls (no answer, 5xx, malformed answer;
   * never a refusal) after which it opens and calls fail fast with 503 provider_retry_later (default 5).
   */
  @NumberOr(5)
  @IsInt()
  @Min(1)
  @Max(1000)
  PROVIDER_BREAKER_FAILURES = 5;

  /** Provider circuit breaker: ms an open breaker waits before letting one probe call through (half-open; default 10000). */
  @NumberOr(10000)
  @IsInt()
  @Min(100)
  @Max(600000)
  PROVIDER_BREAKER_HALF_OPEN_MS = 10000;

  /** Provider bulkhead: provider calls this instance runs at once (default 32). */
  @NumberOr(32)
  @IsInt()
  @Min(1)
  @Max(1000)
  PROVIDER_BULKHEAD_LIMIT = 32;

  /**
   * Provider bulkhead: calls waiting for a slot (default 256); one more fails fast with 503
   * provider_retry_later. Sized for a healthy provider's momentary stall on a busy instance: at ≈ 600
   * provider calls/s (bench:soak, 200 clients, one instance) a 150 ms stall leaves ≈ 90 calls
   * waiting, and a queue of 64 refused 4 of 52,361 requests in one run. A failing provider is
   * stopped by the breaker; behind a slow one, the last waiting call waits for 256 / 32 = 8 answers.
   */
  @NumberOr(256)
  @IsInt()
  @Min(0)
  @Max(100000)
  PROVIDER_BULKHEAD_QUEUE = 256;

  /** When set, GET /metrics requires `Authorization: Bearer <METRICS_TOKEN>` (401 otherwise). */
  @OptionalNonNull()
  @IsString()
  @IsNotEmpty()
  METRICS_TOKEN?: string;

  /**
   * OpenTelemetry: traces are exported by OTLP over HTTP to this endpoint (e.g.
   * http://collector:4318) when set; unset, tracing is off and costs nothing. Read by
   * src/tracing.ts before the app loads; the SDK's other OTEL_* variables apply too.
   */
  @OptionalNonNull()
  @IsUrl({ protocols: ['http', 'https'], require_tld: false, require_protocol: true })
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;

  /** Write JSON log lines to this file instead of stdout (optional). */
  @OptionalNonNull()
  @IsString()
  LOG_FILE?: string;

  /**
   * App users (docs/auth.md): the OpenID provider whose access tokens the gateway accepts beside
   * API keys, e.g. https://login.example.com/realms/wallet. Its keys are found through
   * `<OIDC_ISSUER>/.well-known/openid-configuration`. Unset: API keys only. Needs OIDC_AUDIENCE.
   */
  @OptionalNonNull()
  @IsUrl({ protocols: ['http', 'https'], require_tld: false, require_protocol: true })
  OIDC_ISSUER?: string;

  /** The audience (`aud`) an access token must name to be accepted here (the gateway's resource identifier). */
  @OptionalNonNull()
  @IsString()
  @IsNotEmpty()
  OIDC_AUDIENCE?: string;

  /**
   * Step-up (RFC 9470): a route that moves money accepts a person's token signed in at most this many
   * seconds ago (`auth_time`), unless its `acr` is one of STEP_UP_ACR_VALUES. Default 300.
   */
  @NumberOr(300)
  @IsInt()
  @Min(0)
  @Max(86400)
  STEP_UP_MAX_AGE = 300;

  /** Step-up: `acr` values that count as a strong sign-in whatever its age, comma separated (default: none). */
  @TextOr('')
  @IsString()
  @Matches(/^[^\s",]*(,[^\s",]+)*$/, { message: 'STEP_UP_ACR_VALUES must be acr values separated by commas' })
  STEP_UP_ACR_VALUES = '';
}

/**
 * Validates `process.env`-like input into an `Env`.
 * @throws Error naming every missing or malformed variable.
 */
export function validateEnv(given: Record<string, unknown>): Env {
  // READ_POOL_SIZE's former name, read when it is unset.
  const unset = (value: unknown) => value === undefined || value === '';
  const config =
    unset(given.READ_POOL_SIZE) && !unset(given.FINANCE_POOL_SIZE)
      ? { ...given, READ_POOL_SIZE: given.FINANCE_POOL_SIZE }
      : given;
  const env = plainToInstance(Env, config, { exposeDefaultValues: true });
  const errors = validateSync(env, { skipMissingProperties: false, forbidUnknownValues: false });
  if (errors.length > 0) {
    const lines = errors.map((e) => {
      const value = config[e.property];
      const problem = value === undefined || value === '' ? 'is missing' : 'is malformed';
      return `  ${e.property} ${problem}: ${Object.values(e.constraints ?? {}).join('; ')}`;
    });
    throw new Error(`Invalid environment:\n${lines.join('\n')}`);
  }
  try {
    piiKeyRingFrom(env);
  } catch (error) {
    if (!(error instanceof PiiKeyError)) throw error;
    const name = env.PII_ENCRYPTION_KEYS ? 'PII_ENCRYPTION_KEYS (or PII_HMAC_KEY) is malformed: ' : '';
    throw new Error(`Invalid environment:\n  ${name}${error.message}`, { cause: error });
  }
  if (env.NODE_ENV === 'production' && env.OUTBOUND_ALLOW_PRIVATE) {
    throw new Error(
      'Invalid environment:\n  OUTBOUND_ALLOW_PRIVATE is refused in production: outbound webhooks must not reach private addresses.',
    );
  }
  if (Boolean(env.OIDC_ISSUER) !== Boolean(env.OIDC_AUDIENCE)) {
    throw new Error('Invalid environment:\n  OIDC_ISSUER and OIDC_AUDIENCE are set together or not at all.');
  }
  try {
    parseApprovalThresholds(env.PAYOUT_APPROVAL_THRESHOLDS);
  } catch (error) {
    throw new Error(`Invalid environment:\n  PAYOUT_APPROVAL_THRESHOLDS is malformed: ${(error as Error).message}`, {
      cause: error,
    });
  }
  return env;
}
