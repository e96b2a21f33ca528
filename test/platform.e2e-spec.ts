import fs from 'node:fs';
import path from 'node:path';
import type { Response } from 'supertest';
import { ReadPool } from '../src/database/read-pool';
import { renderOpenApi } from '../src/openapi';
import { type Harness, SIMULATOR_API_KEY, startHarness } from './support/harness';
import { testTmpPath } from './support/tmp';

describe('platform (e2e): health, metrics, docs, limits, request ids', () => {
  let h: Harness;
  let key: string;
  const logFile = testTmpPath(`wg-platform-${process.pid}.log`);

  beforeAll(async () => {
    h = await startHarness({
      env: { RATE_LIMIT_PER_MINUTE: '5', BODY_LIMIT_BYTES: '2048', LOG_LEVEL: 'info', LOG_FILE: logFile },
    });
    key = await h.key(['customers:read', 'customers:write']);
  });
  afterAll(async () => {
    await h.close();
    fs.rmSync(logFile, { force: true });
  });

  it('answers liveness and readiness without a key', async () => {
    const live = await h.http().get('/health/live');
    expect(live.status).toBe(200);
    expect(live.body.status).toBe('ok');
    const ready = await h.http().get('/health/ready');
    expect(ready.status).toBe(200);
    expect(ready.body.info.database.status).toBe('up');
  });

  it('serves the OpenAPI document and the UI', async () => {
    const json = await h.http().get('/docs-json');
    expect(json.status).toBe(200);
    expect(json.body.paths['/v1/customers'].post.responses).toHaveProperty('409');
    const ui = await h.http().get('/docs');
    expect(ui.status).toBe(200);
    expect(ui.text).toContain('swagger');
  });

  it('echoes a sane x-request-id and generates one otherwise', async () => {
    const given = await h.http().get('/health/live').set('x-request-id', 'abc-123');
    expect(given.headers['x-request-id']).toBe('abc-123');
    const generated = await h.http().get('/health/live').set('x-request-id', 'bad id with spaces');
    expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers 404 problem+json for an unknown route', async () => {
    const res = await h.http().get('/v1/nothing-here');
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toMatch(/problem\+json/);
    expect(res.body.code).toBe('not_found');
  });

  it('reads an empty JSON body as none, and refuses malformed JSON with 400 problem+json', async () => {
    const auth = { Authorization: `Bearer ${key}` };
    const get = await h.http().get('/v1/customers?limit=1').set(auth).set('content-type', 'application/json');
    expect(get.status).toBe(200);
    const empty = await h.http().post('/v1/customers').set(auth).set('content-type', 'application/json').send('');
    expect(empty.status).toBe(400);
    expect(empty.body.code).toBe('validation_failed');
    const malformed = await h
      .http()
      .post('/v1/customers')
      .set(auth)
      .set('content-type', 'application/json')
      .send('{"email": ');
    expect(malformed.status).toBe(400);
    expect(malformed.headers['content-type']).toMatch(/problem\+json/);
    const poisoned = await h
      .http()
      .post('/v1/customers')
      .set(auth)
      .set('content-type', 'application/json')
      .send('{"__proto__": {"admin": true}}');
    expect(poisoned.status).toBe(400);
  });

  it('answers 413 problem+json for a body over the limit', async () => {
    const res = await h
      .http()
      .post('/v1/customers')
      .set('Authorization', `Bearer ${key}`)
      .send({ firstName: 'x'.repeat(5000) });
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('payload_too_large');
  });

  it('rate-limits per API key with 429 and Retry-After, leaving other keys alone', async () => {
    const limited = await h.key(['customers:read']);
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < 7; i++) {
      last = await h.http().get('/v1/customers').set('Authorization', `Bearer ${limited}`);
      statuses.push(last.status);
    }
    expect(statuses.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
    expect(statuses.slice(5)).toEqual([429, 429]);
    expect(last!.body.code).toBe('rate_limited');
    expect(Number(last!.headers['retry-after'])).toBeGreaterThan(0);
    const other = await h
      .http()
      .get('/v1/customers')
      .set('Authorization', `Bearer ${await h.key(['customers:read'])}`);
    expect(other.status).toBe(200);
  });

  it('exposes Prometheus metrics per route and per provider operation', async () => {
    await h
      .http()
      .post('/v1/customers')
      .set('Authorization', `Bearer ${key}`)
      .send({ email: 'metrics@example.com', firstName: 'M', lastName: 'N', phone: '8012345678', countryCode: '+234' });
    const res = await h.http().get('/metrics');
    expect(res.status).toBe(200);
    expect(res.text).toMatch(
      /http_request_duration_seconds_count\{method="GET",route="\/v1\/customers",status="200"\} \d+/,
    );
    expect(res.text).toMatch(/provider_call_duration_seconds_count\{operation="createCustomer",outcome="ok"\} 1/);
  });

  it('writes JSON logs with the request id on each request line and no key or provider secret', async () => {
    await h
      .http()
      .post('/v1/customers')
      .set('Authorization', `Bearer ${key}`)
      .set('x-request-id', 'log-trace-42')
      .send({ email: 'logs@example.com', firstName: 'L', lastName: 'G', phone: '8012345678', countryCode: '+234' });
    const text = fs.readFileSync(logFile, 'utf8');
    const lines = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const traced = lines.filter((l) => l.req?.id === 'log-trace-42' || l.reqId === 'log-trace-42');
    expect(traced.map((l) => l.msg)).toEqual(
      expect.arrayContaining(['request completed', 'provider createCustomer ok']),
    );
    expect(text).not.toContain(key);
    expect(text).not.toContain(SIMULATOR_API_KEY);
    expect(text).not.toMatch(/authorization/i);
  });

  it('keeps openapi.json in step with the code (run `npm run openapi` after API changes)', async () => {
    const committed = fs.readFileSync(path.join(__dirname, '..', 'openapi.json'), 'utf8');
    expect(JSON.parse(await renderOpenApi())).toEqual(JSON.parse(committed));
  });
});

describe('platform (e2e): database pool gauges (issue 13)', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.close();
  });

  it('exposes the PostgreSQL pools: connections in use and idle, and queries waiting, per pool', async () => {
    const gauge = (text: string, name: string, labels: string) => {
      const match = new RegExp(`^${name}\\{${labels}\\} (\\d+)$`, 'm').exec(text);
      if (!match) throw new Error(`${name}{${labels}} missing from /metrics: ${text.slice(0, 300)}`);
      return Number(match[1]);
    };
    const read = await h
      .http()
      .get('/v1/customers')
      .set('Authorization', `Bearer ${await h.key(['customers:read'])}`);
    expect(read.status).toBe(200);
    // A connection of the read pool held by the test shows as in use, then as idle once released.
    const held = await h.app.get(ReadPool).connect();
    let text: string;
    try {
      text = (await h.http().get('/metrics')).text;
      expect(gauge(text, 'db_pool_connections', 'pool="reads",state="in_use"')).toBeGreaterThanOrEqual(1);
    } finally {
      held.release();
    }
    text = (await h.http().get('/metrics')).text;
    expect(gauge(text, 'db_pool_connections', 'pool="reads",state="in_use"')).toBe(0);
    expect(gauge(text, 'db_pool_connections', 'pool="reads",state="idle"')).toBeGreaterThanOrEqual(1);
    expect(gauge(text, 'db_pool_waiting', 'pool="reads"')).toBe(0);
    // Prisma's pool served the key check and the scrape's backlog read.
    const prisma = ['in_use', 'idle'].map((state) =>
      gauge(text, 'db_pool_connections', `pool="prisma",state="${state}"`),
    );
    expect(prisma[0] + prisma[1]).toBeGreaterThanOrEqual(1);
    expect(gauge(text, 'db_pool_waiting', 'pool="prisma"')).toBe(0);
  });
});
