import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import Redis from 'ioredis';
import request from 'supertest';
import { createApp } from '../src/app';
import { type Harness, startHarness, startPeer } from './support/harness';
import { startTestRedis, type TestRedis } from './support/redis';

const LIMIT = 10;

async function metric(app: NestFastifyApplication, name: string): Promise<number> {
  const res = await request(app.getHttpServer()).get('/metrics');
  const line = res.text.split('\n').find((l) => l.startsWith(name));
  return line ? Number(line.split(' ').pop()) : 0;
}

describe('Rate limits shared through Redis (REDIS_URL)', () => {
  let redis: TestRedis;
  let h: Harness;
  let peer: { app: NestFastifyApplication; close(): Promise<void> };

  beforeAll(async () => {
    redis = await startTestRedis();
    h = await startHarness({
      env: { REDIS_URL: redis.url, REDIS_KEY_PREFIX: redis.keyPrefix, RATE_LIMIT_PER_MINUTE: String(LIMIT) },
    });
    peer = await startPeer(h);
  });

  afterAll(async () => {
    await peer?.close();
    await h?.close();
    const client = new Redis(redis.url);
    const keys = await client.keys(`${redis.keyPrefix}*`);
    if (keys.length) await client.del(...keys);
    await client.quit();
    await redis?.close();
  });

  it('counts one key across two instances exactly: the limit holds in total, not per instance', async () => {
    const key = await h.key(['customers:read']);
    const statuses: number[] = [];
    for (let i = 0; i < LIMIT + 4; i++) {
      const app = i % 2 === 0 ? h.app : peer.app;
      const res = await request(app.getHttpServer()).get('/v1/customers').set('Authorization', `Bearer ${key}`);
      statuses.push(res.status);
    }
    expect(statuses.slice(0, LIMIT)).toEqual(Array(LIMIT).fill(200));
    expect(statuses.slice(LIMIT)).toEqual([429, 429, 429, 429]);
    // Both instances refused some, and counted them.
    expect(
      (await metric(h.app, 'rate_limit_rejections_total')) + (await metric(peer.app, 'rate_limit_rejections_total')),
    ).toBe(4);
    // The counts live in Redis under the file's prefix.
    const client = new Redis(redis.url);
    const keys = await client.keys(`${redis.keyPrefix}rl:*`);
    await client.quit();
    expect(keys.some((k) => k.endsWith(':hits'))).toBe(true);
  });

  it('with many requests at once on both instances, lets exactly the limit through', async () => {
    const key = await h.key(['customers:read']);
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        request((i % 2 === 0 ? h.app : peer.app).getHttpServer())
          .get('/v1/customers')
          .set('Authorization', `Bearer ${key}`),
      ),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(LIMIT);
    expect(results.filter((r) => r.status === 429)).toHaveLength(30 - LIMIT);
    const refused = results.find((r) => r.status === 429)!;
    expect(refused.body.code).toBe('rate_limited');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('serves requests when Redis cannot be reached (fail open) and counts the store errors', async () => {
    process.env.REDIS_URL = 'redis://127.0.0.1:1';
    const app = await createApp({ bufferLogs: true });
    try {
      const key = await h.key(['customers:read']);
      for (let i = 0; i < LIMIT + 3; i++) {
        const res = await request(app.getHttpServer()).get('/v1/customers').set('Authorization', `Bearer ${key}`);
        expect(res.status).toBe(200);
      }
      // Every hit failed, the scrape of /metrics included.
      expect(await metric(app, 'rate_limit_store_errors_total')).toBeGreaterThanOrEqual(LIMIT + 3);
      expect(await metric(app, 'rate_limit_rejections_total')).toBe(0);
    } finally {
      await app.close();
      process.env.REDIS_URL = redis.url;
    }
  });
});
