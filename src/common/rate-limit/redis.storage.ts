import type { ThrottlerStorage } from '@nestjs/throttler';
import Redis, { type RedisOptions } from 'ioredis';
import type { ThrottleRecord } from './fixed-window.storage';

/**
 * One hit, atomically, in Redis's clock: the same fixed window and block rules as
 * `FixedWindowThrottlerStorage`, so that every instance counts into one window per key.
 * KEYS[1] the window's hit counter (expires with the window), KEYS[2] the block marker (expires
 * when the block ends). ARGV: window ms, limit, block duration ms (0: until the window ends).
 * Returns {hits, window ms left, blocked 0|1, block ms left}.
 */
const HIT_SCRIPT = `
local blockLeft = redis.call('PTTL', KEYS[2])
if blockLeft > 0 then
  local hits = tonumber(redis.call('GET', KEYS[1]) or '0')
  local left = redis.call('PTTL', KEYS[1])
  if left < 0 then left = 0 end
  return {hits, left, 1, blockLeft}
end
local hits = redis.call('INCR', KEYS[1])
local left = redis.call('PTTL', KEYS[1])
if left < 0 then
  left = tonumber(ARGV[1])
  redis.call('PEXPIRE', KEYS[1], left)
end
if hits > tonumber(ARGV[2]) then
  local block = tonumber(ARGV[3])
  if block <= 0 then block = left end
  redis.call('SET', KEYS[2], '1', 'PX', block)
  return {hits, left, 1, block}
end
return {hits, left, 0, 0}
`;

type HitReply = [number, number, number, number];

interface RedisWithHit extends Redis {
  throttleHit(hitsKey: string, blockKey: string, ttlMs: number, limit: number, blockMs: number): Promise<HitReply>;
}

/** Construction options of `RedisThrottlerStorage`. */
export interface RedisThrottlerOptions {
  /** redis:// or rediss:// URL (REDIS_URL). */
  url: string;
  /** Put before every key (REDIS_KEY_PREFIX), e.g. `wallet-gateway:`; tests use one per file. */
  keyPrefix: string;
  /** Longest wait for a connection or a command, in ms (REDIS_TIMEOUT_MS); past it the hit fails. */
  timeoutMs: number;
}

/**
 * @nestjs/throttler storage in Redis or Valkey (ioredis): one Lua script per hit, so the count of
 * a key is exact across every instance sharing the server. The client never queues a command
 * while disconnected (`enableOfflineQueue: false`), never retries one (`maxRetriesPerRequest: 0`)
 * and gives up after `timeoutMs`: a dead or hung Redis costs a request at most that long, and the
 * caller (`RateLimitStorage`) then lets the request through. It reconnects in the background.
 */
export class RedisThrottlerStorage implements ThrottlerStorage {
  readonly client: RedisWithHit;

  constructor(
    private readonly options: RedisThrottlerOptions,
    /** Called with every connection error (the client keeps reconnecting); must not throw. */
    onConnectionError: (error: Error) => void,
  ) {
    const redisOptions: RedisOptions = {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: options.timeoutMs,
      commandTimeout: options.timeoutMs,
      // Reconnect forever, backing off to 2 s, so that a restarted Redis is picked up again.
      retryStrategy: (times) => Math.min(100 * times, 2000),
    };
    this.client = new Redis(options.url, redisOptions) as RedisWithHit;
    this.client.on('error', onConnectionError);
    this.client.defineCommand('throttleHit', { numberOfKeys: 2, lua: HIT_SCRIPT });
  }

  /**
   * Connects, waiting at most about `timeoutMs`; resolves either way (the client keeps
   * trying in the background, and hits fail open meanwhile).
   */
  async connect(): Promise<void> {
    await this.client.connect().catch(() => undefined);
  }

  /** Closes the connection (QUIT, or a disconnect when it is not connected). */
  async close(): Promise<void> {
    if (this.client.status === 'ready') await this.client.quit().catch(() => this.client.disconnect());
    else this.client.disconnect();
  }

  /**
   * Counts one hit of `key` for `throttlerName` (ttl and blockDuration in ms, as the guard gives
   * them) and answers in seconds, as @nestjs/throttler expects.
   * @throws the client's error when Redis cannot be reached or does not answer in time.
   */
  async increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): Promise<ThrottleRecord> {
    // One hash tag per key, so both keys live in one slot of a Redis Cluster.
    const base = `${this.options.keyPrefix}rl:{${throttlerName}:${key}}`;
    const [hits, leftMs, blocked, blockMs] = await this.client.throttleHit(
      `${base}:hits`,
      `${base}:block`,
      ttl,
      limit,
      blockDuration,
    );
    return {
      totalHits: hits,
      timeToExpire: seconds(leftMs),
      isBlocked: blocked === 1,
      timeToBlockExpire: blocked === 1 ? seconds(blockMs) : 0,
    };
  }
}

function seconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
