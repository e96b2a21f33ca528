import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { startChildGateway, waitFor } from './support/child-gateway';
import { type Harness, startHarness } from './support/harness';

interface TracedSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  kind: number;
  scope: string;
  attributes: Record<string, unknown>;
}

const SERVER = 1;
const CLIENT = 2;

/**
 * OpenTelemetry (src/tracing.ts): one API request is one trace, from the server span of the route
 * through the ledger write (pg / Prisma spans) and the provider call (HTTP client span). The
 * request is served by a separate process (test/support/trace-child.js), since the
 * instrumentations must patch modules before they load. Then src/main.ts in a child gateway
 * exports its spans by OTLP/http to a local collector when OTEL_EXPORTER_OTLP_ENDPOINT is set.
 */
describe('tracing (e2e)', () => {
  let h: Harness;
  let key: string;

  beforeAll(async () => {
    h = await startHarness();
    key = await h.key();
  });
  afterAll(async () => {
    await h?.close();
  });

  it('traces POST /v1/customers as one trace through the database and the provider call', async () => {
    // The exporter is the child's in-memory one: no OTLP endpoint from this environment.
    const { OTEL_EXPORTER_OTLP_ENDPOINT: _unused, ...env } = process.env;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [path.join(__dirname, 'support', 'trace-child.js')],
      {
        cwd: path.join(__dirname, '..'),
        env: {
          ...env,
          DATABASE_URL: h.db.url,
          PROVIDER_BASE_URL: h.sim.baseUrl,
          TRACE_API_KEY: key,
        },
        timeout: 60_000,
      },
    );
    const out = JSON.parse(stdout.trim().split('\n').pop() as string) as {
      status: number;
      body: string;
      spans: TracedSpan[];
    };
    expect(out.status).toBe(201);
    const { spans } = out;

    const server = spans.find((s) => s.kind === SERVER && s.attributes['http.route'] === '/v1/customers');
    expect(server).toBeDefined();
    // Everything the request caused is in the server span's trace.
    const inTrace = spans.filter((s) => s.traceId === server!.traceId);
    const byId = new Map(inTrace.map((s) => [s.spanId, s]));
    const descendsFromServer = (s: TracedSpan): boolean => {
      for (let p = s.parentSpanId; p; p = byId.get(p)?.parentSpanId) if (p === server!.spanId) return true;
      return false;
    };

    const database = inTrace.filter(
      (s) => (s.scope.includes('pg') || s.scope.includes('prisma')) && descendsFromServer(s),
    );
    expect(database.length).toBeGreaterThan(0);
    const statement = (s: TracedSpan): string => {
      const text = s.attributes['db.query.text'] ?? s.attributes['db.statement'];
      return typeof text === 'string' ? text : s.name;
    };
    // The customer row is written inside the request's trace.
    expect(database.some((s) => /INSERT/i.test(statement(s)))).toBe(true);

    const simulatorPort = Number(new URL(h.sim.baseUrl).port);
    const provider = inTrace.filter(
      (s) =>
        s.kind === CLIENT &&
        (s.attributes['server.port'] === simulatorPort || s.attributes['net.peer.port'] === simulatorPort) &&
        descendsFromServer(s),
    );
    expect(provider.length).toBeGreaterThan(0);
    // No span of the request's work in another trace.
    expect(spans.filter((s) => s.traceId !== server!.traceId && s.kind === SERVER)).toEqual([]);
  }, 90_000);

  it('exports by OTLP/http from src/main.ts when OTEL_EXPORTER_OTLP_ENDPOINT is set', async () => {
    const exports: Array<{ url?: string; body: string }> = [];
    const collector: Server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        exports.push({ url: req.url, body });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
    const child = await startChildGateway(h, { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_BSP_SCHEDULE_DELAY: '100' });
    try {
      const created = await child
        .http()
        .post('/v1/customers')
        .set({ Authorization: `Bearer ${key}` })
        .send({
          email: 'exported@example.com',
          firstName: 'Ada',
          lastName: 'Obi',
          phone: '8012345679',
          countryCode: '+254',
        });
      expect(created.status).toBe(201);
      const exported = await waitFor('the route span exported', async () =>
        exports.find((e) => e.body.includes('"/v1/customers"')),
      );
      expect(exported.url).toBe('/v1/traces');
      expect(exported.body).toContain('"wallet-gateway"');
    } finally {
      await child.kill();
      await new Promise((resolve) => collector.close(resolve));
    }
  }, 120_000);
});
