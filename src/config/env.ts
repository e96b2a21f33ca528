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
   * Rolling deploys: after SIGTERM (or SIGINT/SIGHUP) /health/ready answers 503 at once while every
   * other route keeps serving for this long, in ms (default 5000), so that the load balancer's
   * health checks take the instance out before it stops accepting. The orchestrator's grace period
   * must be at least this plus 3 × PROVIDER_TIMEOUT_MS (docs/operations.md "Rolling deploys").
   */
  @Transform(({ value }) => (value === undefined || value === '' ? 5000 : Number(value)))
  @IsInt()
  @Min(0)
  @Max(600000)
  SHUTDOWN_DELAY_MS = 5000;

  /**
   * Connection budget (docs/operations.md): the most connections Prisma's pool (@prisma/adapter-pg)
   * opens, default 10. Every write and most reads go through it.
   */
  @Transform(({ value }) => (value === undefined || value === '' ? 10 : Number(value)))
  @IsInt()
  @Min(1)
  @Max(500)
  DATABASE_POOL_SIZE = 10;

  /** Connection budget: the finance reads' own pool (lists, detail, summary, CSV export), default 10. */
  @Transform(({ value }) => (value === undefined || value === '' ? 10 : Number(value)))
  @IsInt()
  @Min(1)
  @Max(500)
  FINANCE_POOL_SIZE = 10;

  /** Connection budget: pg-boss's pool for the background jobs (only with JOBS_ENABLED), default 2. */
  @Transform(({ value }) => (value === undefined || value === '' ? 2 : Number(value)))
  @IsInt()
  @Min(1)
  @Max(100)
  JOBS_POOL_SIZE = 2;

  /**
   * Whether the finance reads use named (server-side) prepared statements, prepared once per
   * connection (default true, the fastest). Set false behind PgBouncer in transaction mode before
   * 1.21 (or without max_prepared_statements): the statements then go unnamed, parsed each time.
   */
  @Transform(({ value }) => (value === undefined || value === '' ? true : value === true || value === 'true'))
  @IsBoolean()
  PG_NAMED_STATEMENTS = true;

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
