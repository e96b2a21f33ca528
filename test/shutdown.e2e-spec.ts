import net from 'node:net';
import { type ChildGateway, startChildGateway, waitFor } from './support/child-gateway';
import { type Harness, startHarness } from './support/harness';

/** One HTTP/1.1 response read off a raw socket: status line, headers (lower-case) and body. */
interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Splits what a keep-alive socket received into its responses (Content-Length framed, as Fastify sends them). */
function parseResponses(raw: string): RawResponse[] {
  const responses: RawResponse[] = [];
  let rest = raw;
  while (rest.startsWith('HTTP/1.1 ')) {
    const end = rest.indexOf('\r\n\r\n');
    const [statusLine, ...lines] = rest.slice(0, end).split('\r\n');
    const headers = Object.fromEntries(
      lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
    );
    const length = Number(headers['content-length'] ?? 0);
    responses.push({ status: Number(statusLine.split(' ')[1]), headers, body: rest.slice(end + 4, end + 4 + length) });
    rest = rest.slice(end + 4 + length);
  }
  return responses;
}

/**
 * Rolling deploys (issue 13): a gateway process (node, src/main.ts) gets SIGTERM while traffic
 * flows and a slow provider call is in flight. /health/ready turns 503 at once while the API
 * keeps answering for SHUTDOWN_DELAY_MS; then the server stops accepting, the in-flight call
 * completes, a request still arriving on an open connection gets 503 problem+json with
 * Retry-After, nothing answers 500, the process exits 0, and its log shows the order: draining,
 * closing, webhook queue and outbox drained, pg-boss stopped, the read pool and Prisma's last.
 */
describe('shutdown order (e2e, gateway child process)', () => {
  let h: Harness;
  let child: ChildGateway;
  let auth: Record<string, string>;
  const DELAY_MS = 3000;

  beforeAll(async () => {
    h = await startHarness();
    auth = { Authorization: `Bearer ${await h.key()}` };
    child = await startChildGateway(h, {
      SHUTDOWN_DELAY_MS: String(DELAY_MS),
      PROVIDER_TIMEOUT_MS: '20000',
      LOG_LEVEL: 'info',
    });
  }, 120_000);
  afterAll(async () => {
    await child?.kill();
    await h?.close();
  });

  it('goes not-ready, keeps serving, finishes in-flight work, answers 503 while closing, exits 0 in order', async () => {
    const port = Number(new URL(child.url).port);
    const get = (path: string) => fetch(`${child.url}${path}`, { headers: auth });
    expect((await get('/v1/transactions')).status).toBe(200);
    expect((await fetch(`${child.url}/health/ready`)).status).toBe(200);

    // Background traffic on the read pool (the one that used to close first) all along.
    const outcomes: Array<number | string> = [];
    let trafficOn = true;
    const traffic = (async () => {
      while (trafficOn) {
        try {
          const res = await get('/v1/transactions?limit=5');
          outcomes.push(res.status);
          if (res.status !== 200) {
            expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
            expect(res.headers.get('retry-after')).toBeTruthy();
          }
          await res.arrayBuffer().catch(() => undefined);
        } catch (error) {
          outcomes.push(String((error as { cause?: { code?: string } }).cause?.code ?? error));
          await new Promise((r) => setTimeout(r, 20));
        }
      }
    })();

    // A slow provider call in flight on a raw keep-alive connection.
    await h.sim.setFault('createCustomer', { latencyMs: DELAY_MS + 2000 });
    const socket = net.connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
    const socketClosed = new Promise((resolve) => socket.once('close', resolve));
    const body = JSON.stringify({
      email: 'slow@example.com',
      firstName: 'Slow',
      lastName: 'Call',
      phone: '8012345678',
      countryCode: '234',
    });
    socket.write(
      `POST /v1/customers HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${auth.Authorization}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    await waitFor('the provider call', async () => {
      if (received) throw new Error(`answered before the provider call: ${received}`);
      return (await h.sim.calls('createCustomer')).length ? true : undefined;
    });

    child.signal('SIGTERM');
    // Not ready at once…
    await waitFor('not ready', async () =>
      (await fetch(`${child.url}/health/ready`)).status === 503 ? true : undefined,
    );
    const ready = await fetch(`${child.url}/health/ready`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ status: 503 });
    // …while the API still serves (the delay is running).
    expect((await get('/v1/transactions')).status).toBe(200);
    expect((await get('/v1/customers')).status).toBe(200);

    // Closing: new connections are refused once the server stops accepting.
    await waitFor(
      'the server to stop accepting',
      async () => {
        try {
          await fetch(`${child.url}/health/live`);
          return undefined;
        } catch {
          return true;
        }
      },
      DELAY_MS + 10_000,
    );
    // A request arriving on the still-open connection (behind the slow call) gets 503 problem+json.
    socket.write(`GET /v1/customers HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${auth.Authorization}\r\n\r\n`);
    await socketClosed;
    const [slow, late] = parseResponses(received);
    expect(slow.status).toBe(201);
    expect(JSON.parse(slow.body)).toMatchObject({ email: 'slow@example.com' });
    expect(late.status).toBe(503);
    expect(late.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(late.headers['retry-after']).toBe('1');
    expect(JSON.parse(late.body)).toMatchObject({ status: 503, code: 'shutting_down' });

    expect(await child.exited).toBe(0);
    trafficOn = false;
    await traffic;
    expect(outcomes).not.toContain(500);
    expect(outcomes.filter((o) => typeof o === 'number' && o !== 200 && o !== 503)).toEqual([]);
    expect(outcomes).toContain(200);

    const order = child
      .stdout()
      .split('\n')
      .filter((line) => line.includes('"shutdown"'))
      .map((line) => JSON.parse(line) as { shutdown: unknown; step?: string })
      .filter((entry) => typeof entry.shutdown === 'string')
      .map((entry) => (entry.step ? `${String(entry.shutdown)}: ${entry.step}` : String(entry.shutdown)));
    // The three drains run one after the other, in module order; all before pg-boss and the pools.
    expect([...order.slice(0, 2), ...order.slice(2, 5).sort(), ...order.slice(5)]).toEqual([
      'draining',
      'closing',
      'drain: audit sealer',
      'drain: outbox pass',
      'drain: webhook apply queue',
      'jobs: pending writes',
      'jobs: pg-boss',
      'pools: read pool',
      'pools: health probe connection',
      'pools: provider connections',
      'pools: prisma pool',
      'complete',
    ]);
  }, 120_000);
});
