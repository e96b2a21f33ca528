import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { buildSimulator } from './app';
import { isLuhnValid, luhnCheckDigit } from './generate';
import { convert, divRoundHalfUp, major, majorNumber, parseMinor, rate } from './money';
import { T0, TEST_KEY, type TestSim, testSimulator } from './testing';

describe('simulator core', () => {
  let sim: TestSim;
  beforeEach(async () => {
    sim = await testSimulator({ faultTimeoutMs: 100 });
  });
  afterEach(() => sim.app.close());

  describe('auth', () => {
    it.each([
      ['no header', {}],
      ['wrong key', { authorization: 'Bearer sk.wrong' }],
      ['no Bearer prefix', { authorization: TEST_KEY }],
    ])('answers 401 NestJS-style with %s, and logs no call', async (_name, headers) => {
      const res = await sim.app.inject({
        method: 'POST',
        url: '/api/v1/customers',
        headers,
        payload: { email: 'x@example.com' },
      });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ statusCode: 401, message: 'Unauthorized', error: 'Unauthorized' });
      expect(sim.state.customers.size).toBe(0);
      expect((await sim.admin('GET', '/calls')).body.calls).toEqual([]);
    });

    it('accepts the right key on every operation path (GET, POST, PUT)', async () => {
      const c = await sim.customer();
      expect((await sim.api('GET', `/customers/${c.id}`)).status).toBe(200);
      expect((await sim.api('PUT', `/customers/${c.id}`, { firstName: 'A', email: c.email })).status).toBe(200);
    });
  });

  describe('errors', () => {
    it('answers NestJS-style 404 for unknown ids and unknown routes', async () => {
      const res = await sim.api('GET', '/customers/00000000-0000-4000-8000-000000000000');
      expect(res).toEqual({
        status: 404,
        body: { statusCode: 404, message: 'Customer not found', error: 'Not Found' },
      });
      const route = await sim.api('GET', '/nope');
      expect(route.body).toEqual({ statusCode: 404, message: 'Cannot GET /api/v1/nope', error: 'Not Found' });
    });

    it('answers 400 for malformed JSON', async () => {
      const res = await sim.app.inject({
        method: 'POST',
        url: '/api/v1/customers',
        payload: '{"email":',
        headers: { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json' },
      });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ statusCode: 400, error: 'Bad Request' });
    });
  });

  describe('call log', () => {
    it('records operation, method, path, body and time; filters; clears', async () => {
      const c = await sim.customer('log@example.com');
      await sim.api('GET', `/customers/${c.id}?x=1`);
      const all = (await sim.admin('GET', '/calls')).body.calls;
      expect(all).toEqual([
        {
          operation: 'createCustomer',
          method: 'POST',
          path: '/api/v1/customers',
          body: expect.objectContaining({ email: 'log@example.com' }),
          at: new Date(T0).toISOString(),
        },
        {
          operation: 'getCustomer',
          method: 'GET',
          path: `/api/v1/customers/${c.id}?x=1`,
          body: null,
          at: expect.any(String),
        },
      ]);
      expect(JSON.stringify(all)).not.toContain(TEST_KEY);
      expect((await sim.admin('GET', '/calls?operation=getCustomer')).body.calls).toHaveLength(1);
      expect((await sim.admin('DELETE', '/calls')).status).toBe(200);
      expect((await sim.admin('GET', '/calls')).body.calls).toEqual([]);
    });

    it('keeps only the latest callLogLimit calls', async () => {
      const small = await testSimulator({ callLogLimit: 2 });
      for (const n of [1, 2, 3]) await small.customer(`limit${n}@example.com`);
      const calls = (await small.admin('GET', '/calls')).body.calls;
      expect(calls.map((c: { body: { email: string } }) => c.body.email)).toEqual([
        'limit2@example.com',
        'limit3@example.com',
      ]);
      await small.app.close();
    });

    it('names the trailing-slash create route createCustomer too', async () => {
      expect((await sim.api('POST', '/customers/', { email: 'slash@example.com' })).status).toBe(200);
      expect((await sim.admin('GET', '/calls?operation=createCustomer')).body.calls[0].path).toBe('/api/v1/customers/');
    });
  });

  describe('faults', () => {
    const create = (email: string) => sim.api('POST', '/customers', { email });

    it('status 503 answers that status NestJS-style, logs the call and changes nothing', async () => {
      await sim.admin('PUT', '/faults', { createCustomer: { status: 503 } });
      const res = await create('f1@example.com');
      expect(res).toEqual({
        status: 503,
        body: { statusCode: 503, message: expect.any(String), error: 'Service Unavailable' },
      });
      expect(sim.state.customers.size).toBe(0);
      expect((await sim.admin('GET', '/calls?operation=createCustomer')).body.calls).toHaveLength(1);
    });

    it('status 400 is a provider rejection', async () => {
      await sim.admin('PUT', '/faults', { createCustomer: { status: 400 } });
      expect((await create('f2@example.com')).body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
    });

    it('malformed answers 200 with a non-JSON body', async () => {
      await sim.admin('PUT', '/faults', { createCustomer: { malformed: true } });
      const res = await sim.app.inject({
        method: 'POST',
        url: '/api/v1/customers',
        headers: { authorization: `Bearer ${TEST_KEY}` },
        payload: { email: 'm@example.com' },
      });
      expect(res.statusCode).toBe(200);
      expect(res.body).toBe('<html>oops</html>');
      expect(() => JSON.parse(res.body)).toThrow();
    });

    it('statusFalse answers 200 with {status:false, message}', async () => {
      await sim.admin('PUT', '/faults', { createCustomer: { statusFalse: true } });
      expect(await create('sf@example.com')).toEqual({
        status: 200,
        body: { status: false, message: expect.any(String) },
      });
    });

    it('latencyMs delays, then answers normally', async () => {
      await sim.admin('PUT', '/faults', { createCustomer: { latencyMs: 120 } });
      const started = Date.now();
      const res = await create('slow@example.com');
      expect(res.status).toBe(200);
      expect(Date.now() - started).toBeGreaterThanOrEqual(100);
    });

    it('timeout holds the request for faultTimeoutMs, then 504', async () => {
      await sim.admin('PUT', '/faults', { createCustomer: { timeout: true } });
      const started = Date.now();
      const res = await create('t@example.com');
      expect(Date.now() - started).toBeGreaterThanOrEqual(90);
      expect(res.status).toBe(504);
      expect(sim.state.customers.size).toBe(0);
    });

    it('times applies the fault that many times, then clears it', async () => {
      await sim.admin('PUT', '/faults', { createCustomer: { status: 500, times: 2 } });
      expect((await create('a1@example.com')).status).toBe(500);
      expect((await sim.admin('GET', '/faults')).body.faults.createCustomer.times).toBe(1);
      expect((await create('a2@example.com')).status).toBe(500);
      expect((await create('a3@example.com')).status).toBe(200);
      expect((await sim.admin('GET', '/faults')).body.faults).toEqual({});
    });

    it('"*" applies to every operation; an operation\'s own fault wins; DELETE clears', async () => {
      await sim.admin('PUT', '/faults', { '*': { status: 502 }, getCustomer: { status: 404 } });
      expect((await create('s@example.com')).status).toBe(502);
      expect((await sim.api('GET', '/customers/x')).status).toBe(404);
      await sim.admin('DELETE', '/faults');
      expect((await create('s@example.com')).status).toBe(200);
    });

    it("PUT replaces only the named operation's fault", async () => {
      await sim.admin('PUT', '/faults', { createCustomer: { status: 500 }, getCustomer: { status: 503 } });
      await sim.admin('PUT', '/faults', { createCustomer: { statusFalse: true } });
      expect((await sim.admin('GET', '/faults')).body.faults).toEqual({
        createCustomer: { statusFalse: true },
        getCustomer: { status: 503 },
      });
    });

    it('refuses unknown operations, kinds and bad values with 400', async () => {
      const res = await sim.admin('PUT', '/faults', {
        createCustomr: { status: 500 },
        getCustomer: { slow: true, status: 200 },
      });
      expect(res.status).toBe(400);
      expect(res.body.message).toContain('unknown operation createCustomr');
      expect(res.body.message).toContain('getCustomer.slow is not a fault kind');
      expect(res.body.message).toContain('getCustomer.status must be 400-599');
    });

    it('faults given at build time apply', async () => {
      const other = await buildSimulator({ apiKey: TEST_KEY, faults: { getCustomer: { status: 503 } } });
      const res = await other.app.inject({
        method: 'GET',
        url: '/api/v1/customers/x',
        headers: { authorization: `Bearer ${TEST_KEY}` },
      });
      expect(res.statusCode).toBe(503);
      await other.app.close();
    });

    it('a held request is released when the server closes (nothing hangs)', async () => {
      const other = await buildSimulator({ apiKey: TEST_KEY, faults: { createCustomer: { timeout: true } } });
      await other.app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = other.app.server.address() as { port: number };
      const pending = fetch(`http://127.0.0.1:${port}/api/v1/customers`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json' },
        body: '{"email":"h@example.com"}',
      }).then(
        (r) => r.status,
        () => 'closed',
      );
      await new Promise((r) => setTimeout(r, 100));
      const started = Date.now();
      await other.app.close();
      expect(await pending).toBe(503);
      expect(Date.now() - started).toBeLessThan(5_000);
    });
  });

  describe('admin state and reset', () => {
    it('answers seed balances in minor units and counts; reset restores the seed', async () => {
      const seed = (await sim.admin('GET', '/state')).body;
      expect(seed.balances).toEqual({
        USD: 100000000,
        NGN: 50000000000,
        GHS: 100000000,
        KES: 1000000000,
        UGX: 10000000000,
        BTC: 1000000000,
      });
      await sim.customer();
      await sim.admin('PUT', '/faults', { getCustomer: { status: 500 } });
      sim.state.debit('USD', 500n);
      const changed = (await sim.admin('GET', '/state')).body;
      expect(changed.counts).toMatchObject({ customers: 1, calls: 1 });
      expect(changed.balances.USD).toBe(99999500);
      expect((await sim.admin('POST', '/reset')).status).toBe(200);
      const reset = (await sim.admin('GET', '/state')).body;
      expect(reset.balances).toEqual(seed.balances);
      expect(reset.counts).toMatchObject({ customers: 0, calls: 0 });
      expect((await sim.admin('GET', '/faults')).body.faults).toEqual({});
    });
  });
});

describe('money and card numbers', () => {
  it('rounds half up in one place', () => {
    expect(divRoundHalfUp(5n, 10n)).toBe(1n);
    expect(divRoundHalfUp(4n, 10n)).toBe(0n);
    expect(divRoundHalfUp(15n, 10n)).toBe(2n);
    expect(divRoundHalfUp(25n, 10n)).toBe(3n);
  });

  it('converts with integers at the fixed rates', () => {
    expect(convert(100n, 'USD', 'NGN')).toBe(150_000n); // $1.00 → ₦1,500.00
    expect(convert(100n, 'USD', 'UGX')).toBe(3_700n);
    expect(convert(100n, 'USD', 'BTC')).toBe(1_000n); // $1 = 0.00001 BTC = 1000 sat
    expect(convert(100_000_000n, 'BTC', 'USD')).toBe(10_000_000n); // 1 BTC → $100,000.00
    expect(convert(1n, 'NGN', 'USD')).toBe(0n);
    expect(convert(75n, 'NGN', 'USD')).toBe(0n); // 0.05 cents → 0 (half rounds up only at .5)
    expect(convert(150n * 50n, 'NGN', 'USD')).toBe(5n);
    expect(rate('USD', 'NGN')).toBe('1500');
    expect(rate('NGN', 'USD')).toBe('0.00066667');
    expect(rate('USD', 'BTC')).toBe('0.00001');
  });

  it('renders major units from minor units', () => {
    expect(major(65000n, 'NGN')).toBe('650.00');
    expect(majorNumber(65000n, 'NGN')).toBe(650);
    expect(major(5n, 'USD')).toBe('0.05');
    expect(major(12n, 'UGX')).toBe('12');
    expect(major(1n, 'BTC')).toBe('0.00000001');
  });

  it('parses minor-unit amounts sent as numbers or strings, refusing fractions and negatives', () => {
    expect(parseMinor(65000)).toBe(65000n);
    expect(parseMinor('65000')).toBe(65000n);
    expect(parseMinor(650.5)).toBeNull();
    expect(parseMinor('6.5')).toBeNull();
    expect(parseMinor(-1)).toBeNull();
    expect(parseMinor(0)).toBeNull();
    expect(parseMinor(0, true)).toBe(0n);
    expect(parseMinor(null)).toBeNull();
  });

  it('computes Luhn check digits', () => {
    expect(luhnCheckDigit('7992739871')).toBe('3');
    expect(isLuhnValid('79927398713')).toBe(true);
    expect(isLuhnValid('79927398710')).toBe(false);
    expect(isLuhnValid('4111111111111111')).toBe(true);
  });
});

describe('main.ts', () => {
  const freePort = () =>
    new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });

  it('listens with env settings, prints one line, serves, and exits 0 on SIGTERM', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'main.ts')], {
      cwd: path.join(__dirname, '..'),
      env: {
        ...process.env,
        SIMULATOR_PORT: String(port),
        PROVIDER_API_KEY: 'sk.main.test',
        SIMULATOR_FAULTS: '{"getCustomer":{"status":503}}',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('\n')) resolve(out.trim());
      });
      child.on('exit', () => reject(new Error(`exited early: ${out}`)));
    });
    try {
      expect(line).toBe(`simulator listening on http://127.0.0.1:${port}/api/v1`);
      const base = `http://127.0.0.1:${port}/api/v1`;
      expect((await fetch(`${base}/customers/x`, { headers: { authorization: 'Bearer sk.main.test' } })).status).toBe(
        503,
      );
      expect(
        (await fetch(`${base}/customers/x`, { headers: { authorization: 'Bearer sk.sim.0123456789abcdef.local' } }))
          .status,
      ).toBe(401);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  }, 20_000);
});
