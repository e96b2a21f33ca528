import { plainToInstance, Transform } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  IsUrl,
  Max,
  Min,
  validateSync,
} from 'class-validator';

/**
 * The gateway's environment, validated once at start. A missing or malformed variable stops the
 * process with a message naming it (see `validateEnv`). Documented in `.env.example`.
 */
export class Env {
  @IsOptional()
  @IsIn(['development', 'production', 'test'])
  NODE_ENV: 'development' | 'production' | 'test' = 'development';

  /** Port the gateway listens on. */
  @Transform(({ value }) => (value === undefined || value === '' ? 3000 : Number(value)))
  @IsInt()
  @Min(0)
  @Max(65535)
  PORT = 3000;

  /** Interface to bind; 0.0.0.0 in containers. */
  @IsOptional()
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

  /** Secret for the provider's HMAC-SHA512 callback signatures (provider-webhooks.md). */
  @IsString()
  @IsNotEmpty()
  PROVIDER_WEBHOOK_SECRET: string;

  /** Per-request timeout for provider calls, in milliseconds. */
  @Transform(({ value }) => (value === undefined || value === '' ? 10000 : Number(value)))
  @IsInt()
  @Min(50)
  @Max(120000)
  PROVIDER_TIMEOUT_MS = 10000;

  /** Base URL at which the provider reaches this gateway (callbackUrl = PUBLIC_BASE_URL + /webhooks/provider). */
  @IsUrl({ protocols: ['http', 'https'], require_tld: false, require_protocol: true })
  PUBLIC_BASE_URL: string;

  /** Requests per minute allowed per API key. */
  @Transform(({ value }) => (value === undefined || value === '' ? 600 : Number(value)))
  @IsInt()
  @Min(1)
  RATE_LIMIT_PER_MINUTE = 600;

  /** Largest accepted request body, in bytes. */
  @Transform(({ value }) => (value === undefined || value === '' ? 1048576 : Number(value)))
  @IsInt()
  @Min(1024)
  BODY_LIMIT_BYTES = 1048576;

  /** pino level: fatal, error, warn, info, debug, trace or silent. */
  @IsOptional()
  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  LOG_LEVEL = 'info';

  /** Run the background jobs (reconciliation, expiry) on pg-boss in this instance (default true). */
  @Transform(({ value }) => (value === undefined || value === '' ? true : value === true || value === 'true'))
  @IsBoolean()
  JOBS_ENABLED = true;

  /**
   * When provider callbacks are applied: `background` (default) answers 200 as soon as the event is
   * stored and applies it right after, in this process (provider-webhooks.md: "Answer 200 quickly; do
   * the work after storing"); `inline` applies it before answering and reports the outcome (tests, debugging).
   */
  @Transform(({ value }: { value: unknown }) => (value === undefined || value === '' ? 'background' : value))
  @IsIn(['background', 'inline'])
  WEBHOOK_APPLY: 'background' | 'inline' = 'background';

  /** How many stored callbacks this instance applies at once in `background` mode (default 4). */
  @Transform(({ value }) => (value === undefined || value === '' ? 4 : Number(value)))
  @IsInt()
  @Min(1)
  @Max(64)
  WEBHOOK_APPLY_CONCURRENCY = 4;

  /**
   * Callbacks one instance holds in memory waiting to be applied (default 2000); past it they wait
   * in the inbox, marked due, and are taken from there in batches.
   */
  @Transform(({ value }) => (value === undefined || value === '' ? 2000 : Number(value)))
  @IsInt()
  @Min(1)
  WEBHOOK_APPLY_QUEUE_LIMIT = 2000;

  /** Outbound events: how often each instance looks for due outbox messages (with JOBS_ENABLED), in ms. */
  @Transform(({ value }) => (value === undefined || value === '' ? 1000 : Number(value)))
  @IsInt()
  @Min(50)
  @Max(600000)
  OUTBOX_POLL_MS = 1000;

  /** Outbound events: attempts per message before it is marked `failed` (retries back off up to 8 h apart). */
  @Transform(({ value }) => (value === undefined || value === '' ? 12 : Number(value)))
  @IsInt()
  @Min(1)
  @Max(50)
  OUTBOX_MAX_ATTEMPTS = 12;

  /** Outbound events: time allowed for one delivery attempt (connect, send, answer), in ms. */
  @Transform(({ value }) => (value === undefined || value === '' ? 10000 : Number(value)))
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
  @Transform(({ value }) => (value === undefined || value === '' ? 10 : Number(value)))
  @IsInt()
  @Min(5)
  @Max(7 * 24 * 60)
  SETTLEMENT_DEADLINE = 10;

  /**
   * How long an Idempotency-Key claim holds while its request runs, in ms (default 120000). A claim
   * whose process died is taken over once it lapses. Must exceed the longest request (a provider
   * call may take PROVIDER_TIMEOUT_MS).
   */
  @Transform(({ value }) => (value === undefined || value === '' ? 120000 : Number(value)))
  @IsInt()
  @Min(1000)
  @Max(3600000)
  IDEMPOTENCY_LEASE_MS = 120000;

  /**
   * Unit in which the provider reads initialize-swap's `amount` (the request): provider-api.md does
   * not say; its samples (amount 10 → sourceAmount "10", finalize `amount: 10, centAmount: 1000`)
   * read as `major` (default). The quote's amounts are always read as the documented major decimal
   * strings, so a provider reading the request in the other unit answers ×100 and the quote is
   * refused (502 provider_amount_mismatch). See src/provider/provider-units.ts.
   */
  @IsOptional()
  @IsIn(['major', 'minor'])
  SWAP_AMOUNT_UNIT: 'major' | 'minor' = 'major';

  /**
   * Unit of `amount` in card events (virtualcard.topup.*, .withdrawal.*, .transaction.*):
   * undocumented (provider-webhooks.md "Event names"); `major` (default) matches card-transaction records.
   */
  @IsOptional()
  @IsIn(['major', 'minor'])
  CARD_EVENT_AMOUNT_UNIT: 'major' | 'minor' = 'major';

  /**
   * Redis or Valkey for the per-API-key rate limit shared by every instance (redis:// or rediss://,
   * optional). Unset: each instance counts in its own memory (fine for one instance).
   */
  @IsOptional()
  @IsUrl({ protocols: ['redis', 'rediss'], require_tld: false, require_protocol: true })
  REDIS_URL?: string;

  /** Put before every Redis key (default `wallet-gateway:`), so that several gateways or test files can share a server. */
  @Transform(({ value }: { value: unknown }) => (value === undefined || value === '' ? 'wallet-gateway:' : value))
  @IsString()
  REDIS_KEY_PREFIX = 'wallet-gateway:';

  /**
   * Longest wait for Redis (connect or one command), in ms (default 250). Past it, or with Redis
   * down, the request is served without a shared count (fail open) and counted in
   * rate_limit_store_errors_total.
   */
  @Transform(({ value }) => (value === undefined || value === '' ? 250 : Number(value)))
  @IsInt()
  @Min(10)
  @Max(10000)
  REDIS_TIMEOUT_MS = 250;

  /**
   * Provider circuit breaker: consecutive failed provider calls (no answer, 5xx, malformed answer;
   * never a refusal) after which it opens and calls fail fast with 503 provider_unavailable (default 5).
   */
  @Transform(({ value }) => (value === undefined || value === '' ? 5 : Number(value)))
  @IsInt()
  @Min(1)
  @Max(1000)
  PROVIDER_BREAKER_FAILURES = 5;

  /** Provider circuit breaker: ms an open breaker waits before letting one probe call through (half-open; default 10000). */
  @Transform(({ value }) => (value === undefined || value === '' ? 10000 : Number(value)))
  @IsInt()
  @Min(100)
  @Max(600000)
  PROVIDER_BREAKER_HALF_OPEN_MS = 10000;

  /** Provider bulkhead: provider calls this instance runs at once (default 32). */
  @Transform(({ value }) => (value === undefined || value === '' ? 32 : Number(value)))
  @IsInt()
  @Min(1)
  @Max(1000)
  PROVIDER_BULKHEAD_LIMIT = 32;

  /** Provider bulkhead: calls waiting for a slot (default 64); one more fails fast with 503 provider_unavailable. */
  @Transform(({ value }) => (value === undefined || value === '' ? 64 : Number(value)))
  @IsInt()
  @Min(0)
  @Max(100000)
  PROVIDER_BULKHEAD_QUEUE = 64;

  /** When set, GET /metrics requires `Authorization: Bearer <METRICS_TOKEN>` (401 otherwise). */
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  METRICS_TOKEN?: string;

  /**
   * OpenTelemetry: traces are exported by OTLP over HTTP to this endpoint (e.g.
   * http://collector:4318) when set; unset, tracing is off and costs nothing. Read by
   * src/tracing.ts before the app loads; the SDK's other OTEL_* variables apply too.
   */
  @IsOptional()
  @IsUrl({ protocols: ['http', 'https'], require_tld: false, require_protocol: true })
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;

  /** Write JSON log lines to this file instead of stdout (optional). */
  @IsOptional()
  @IsString()
  LOG_FILE?: string;
}

/**
 * Validates `process.env`-like input into an `Env`.
 * @throws Error naming every missing or malformed variable.
 */
export function validateEnv(config: Record<string, unknown>): Env {
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
  return env;
}
