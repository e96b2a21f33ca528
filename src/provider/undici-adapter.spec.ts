import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import axios, {
  type AxiosAdapter,
  AxiosError,
  AxiosHeaders,
  type AxiosInstance,
  type CreateAxiosDefaults,
} from 'axios';
import { Agent } from 'undici';
import { undiciAdapter } from './undici-adapter';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A local HTTP server: records every request, answers with `handler`; counts connections. */
class LocalServer {
  readonly seen: Seen[] = [];
  connections = 0;
  closedEarly = 0;
  handler: (req: Seen, res: ServerResponse, raw: IncomingMessage) => void = (_req, res) => res.end('ok');
  private readonly server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      this.seen.push(seen);
      res.on('close', () => {
        if (!res.writableFinished) this.closedEarly++;
      });
      this.handler(seen, res, req);
    });
  });

  constructor() {
    this.server.on('connection', () => this.connections++);
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

async function rejectionOf(promise: Promise<unknown>): Promise<AxiosError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof AxiosError) return error;
    throw error;
  }
  throw new Error('expected a rejection');
}

/** A closed port on 127.0.0.1 (listened on, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('undiciAdapter (axios over undici) against a local HTTP server', () => {
  let server: LocalServer;
  let origin: string;
  let agent: Agent;

  /** An axios instance as ProviderClient builds one (text answers, no redirects), on the adapter. */
  const client = (extra: CreateAxiosDefaults = {}, adapter: AxiosAdapter = undiciAdapter(agent)): AxiosInstance =>
    axios.create({
      adapter,
      baseURL: `${origin}/api/v1`,
      timeout: 2000,
      headers: { Authorization: 'Bearer sk.test', accept: 'application/json', 'content-type': 'application/json' },
      responseType: 'text',
      transformResponse: [(data: unknown) => data],
      transitional: { clarifyTimeoutError: true, silentJSONParsing: true, forcedJSONParsing: false },
      maxRedirects: 0,
      maxContentLength: 5 * 1024 * 1024,
      ...extra,
    });

  beforeEach(async () => {
    server = new LocalServer();
    origin = await server.listen();
    agent = new Agent();
  });

  afterEach(async () => {
    await agent.close();
    await server.close();
  });

  it('sends a GET to baseURL + url + params (serialised as axios does) with the headers given', async () => {
    server.handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"status":true}');
    };
    const response = await client().get<string>('/customers/cus%2F1', {
      params: { order: 'DESC', page: 2, q: 'a b:c', skip: undefined },
      headers: { 'x-request-id': 'req-42' },
    });

    expect(response.status).toBe(200);
    expect(response.statusText).toBe('OK');
    expect(response.data).toBe('{"status":true}');
    expect(server.seen).toHaveLength(1);
    const [seen] = server.seen;
    expect(seen.method).toBe('GET');
    expect(seen.url).toBe('/api/v1/customers/cus%2F1?order=DESC&page=2&q=a+b:c');
    expect(seen.headers['x-request-id']).toBe('req-42');
    expect(seen.headers.authorization).toBe('Bearer sk.test');
    expect(seen.headers.accept).toBe('application/json');
    expect(seen.headers['user-agent']).toBe(`axios/${axios.VERSION}`);
    expect(seen.headers['accept-encoding']).toBe('identity');
    expect(seen.body).toBe('');
  });

  it('joins baseURL, url and params into the same request line as the axios http adapter', async () => {
    const calls: Array<[string, { params?: unknown }]> = [
      ['customers', {}],
      ['/customers/cus_1', { params: { order: 'DESC', take: '10', q: 'a b$c,d', empty: '', none: null } }],
      [`${origin}/other/path?x=1`, { params: { y: [1, 2], at: new Date(Date.UTC(2026, 0, 2)) } }],
    ];
    for (const adapter of [undiciAdapter(agent), 'http' as const]) {
      const http = client({ baseURL: `${origin}/api/v1/` }, adapter as AxiosAdapter);
      for (const [url, config] of calls) await http.get(url, config);
    }

    const urls = server.seen.map((s) => s.url);
    expect(urls.slice(0, 3)).toEqual(urls.slice(3));
    expect(urls.slice(0, 3)).toEqual([
      '/api/v1/customers',
      '/api/v1/customers/cus_1?order=DESC&take=10&q=a+b$c,d&empty=',
      '/other/path?x=1&y%5B%5D=1&y%5B%5D=2&at=2026-01-02T00:00:00.000Z',
    ]);
  });

  it('sends a POST body as transformRequest left it: the JSON string, with its length', async () => {
    const dataSeenByAdapter: unknown[] = [];
    const spying: AxiosAdapter = (config) => {
      dataSeenByAdapter.push(config.data);
      return undiciAdapter(agent)(config);
    };
    server.handler = (_req, res) => {
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end('{"status":true,"data":{"id":"cus_1"}}');
    };
    const response = await client({}, spying).post<string>('/customers/', { firstName: 'Ada', amount: 12.5 });

    expect(dataSeenByAdapter).toEqual(['{"firstName":"Ada","amount":12.5}']);
    expect(response.status).toBe(201);
    expect(response.data).toBe('{"status":true,"data":{"id":"cus_1"}}');
    const [seen] = server.seen;
    expect(seen.method).toBe('POST');
    expect(seen.url).toBe('/api/v1/customers/');
    expect(seen.body).toBe('{"firstName":"Ada","amount":12.5}');
    expect(seen.headers['content-type']).toBe('application/json');
    expect(seen.headers['content-length']).toBe(String(Buffer.byteLength(seen.body)));
  });

  it('gives the response headers lower-cased, as AxiosHeaders', async () => {
    server.handler = (_req, res) => {
      res.setHeader('Retry-After', '7');
      res.setHeader('X-Provider-Trace', 'abc');
      res.setHeader('Set-Cookie', ['a=1', 'b=2']);
      res.end('{}');
    };
    const response = await client().get<string>('/x');

    expect(response.headers).toBeInstanceOf(AxiosHeaders);
    expect(response.headers['retry-after']).toBe('7');
    expect(response.headers['x-provider-trace']).toBe('abc');
    expect(response.headers['set-cookie']).toEqual(['a=1', 'b=2']);
    expect((response.headers as AxiosHeaders).get('Retry-After')).toBe('7');
    expect(Object.keys((response.headers as AxiosHeaders).toJSON()).every((name) => name === name.toLowerCase())).toBe(
      true,
    );
  });

  it('rejects a 5xx with ERR_BAD_RESPONSE and the response (status, body, headers)', async () => {
    server.handler = (_req, res) => {
      res.writeHead(503, { 'Retry-After': '3', 'content-type': 'application/json' });
      res.end('{"message":"down"}');
    };
    const error = await rejectionOf(client().get('/x'));

    expect(error.code).toBe(AxiosError.ERR_BAD_RESPONSE);
    expect(error.message).toBe('Request failed with status code 503');
    expect(error.response?.status).toBe(503);
    expect(error.response?.statusText).toBe('Service Unavailable');
    expect(error.response?.data).toBe('{"message":"down"}');
    expect(error.response?.headers['retry-after']).toBe('3');
    expect(error.config?.url).toBe('/x');
  });

  it('rejects a 4xx with ERR_BAD_REQUEST and the response', async () => {
    server.handler = (_req, res) => {
      res.writeHead(429, { 'Retry-After': '9' });
      res.end('slow down');
    };
    const error = await rejectionOf(client().get('/x'));

    expect(error.code).toBe(AxiosError.ERR_BAD_REQUEST);
    expect(error.response?.status).toBe(429);
    expect(error.response?.data).toBe('slow down');
    expect(error.response?.headers['retry-after']).toBe('9');
  });

  it('returns a 3xx as an answer without following it', async () => {
    server.handler = (req, res) => {
      if (req.url.endsWith('/elsewhere')) return res.end('followed');
      res.writeHead(302, { location: `${origin}/api/v1/elsewhere` });
      res.end();
    };
    const refused = await rejectionOf(client().get('/x'));
    expect(refused.code).toBe(AxiosError.ERR_BAD_RESPONSE);
    expect(refused.response?.status).toBe(302);
    expect(refused.response?.headers.location).toBe(`${origin}/api/v1/elsewhere`);

    const accepted = await client({ validateStatus: () => true }).get<string>('/x');
    expect(accepted.status).toBe(302);
    expect(accepted.data).toBe('');
    expect(server.seen.map((s) => s.url)).toEqual(['/api/v1/x', '/api/v1/x']);
  });

  it('rejects with ETIMEDOUT (clarifyTimeoutError) when no answer comes within the timeout, and drops the request', async () => {
    server.handler = () => undefined; // never answers
    const started = performance.now();
    const error = await rejectionOf(client({ timeout: 150 }).get('/slow'));
    const elapsed = performance.now() - started;

    expect(error.code).toBe('ETIMEDOUT');
    expect(error.message).toBe('timeout of 150ms exceeded');
    expect(error.response).toBeUndefined();
    expect(elapsed).toBeGreaterThanOrEqual(140);
    expect(elapsed).toBeLessThan(1500);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(server.closedEarly).toBe(1);
  });

  it('rejects with ECONNABORTED on timeout without clarifyTimeoutError, also while the body is still coming', async () => {
    server.handler = (_req, res) => {
      res.writeHead(200);
      res.write('partial'); // the rest never comes
    };
    const error = await rejectionOf(client({ timeout: 150, transitional: { clarifyTimeoutError: false } }).get('/x'));

    expect(error.code).toBe('ECONNABORTED');
    expect(error.message).toBe('timeout of 150ms exceeded');
  });

  it('rejects a refused connection with ECONNREFUSED, the original error as cause and no response', async () => {
    const port = await closedPort();
    const error = await rejectionOf(client({ baseURL: `http://127.0.0.1:${port}/api/v1` }).get('/x'));

    expect(error.code).toBe('ECONNREFUSED');
    expect(error.response).toBeUndefined();
    expect((error.cause as NodeJS.ErrnoException).code).toBe('ECONNREFUSED');
    expect(error.isAxiosError).toBe(true);
  });

  it('rejects a connection closed before the answer with ECONNRESET (cause: undici UND_ERR_SOCKET)', async () => {
    server.handler = (_req, _res, raw) => raw.socket.destroy();
    const error = await rejectionOf(client().post('/x', { a: 1 }));

    expect(error.code).toBe('ECONNRESET');
    expect(error.response).toBeUndefined();
    expect((error.cause as { code?: string }).code).toBe('UND_ERR_SOCKET');
  });

  it('rejects an answer larger than maxContentLength, declared or streamed', async () => {
    const big = 'x'.repeat(2000);
    server.handler = (req, res) => {
      if (req.url.endsWith('/declared')) res.writeHead(200, { 'content-length': String(big.length) });
      else res.writeHead(200); // chunked: the size is known only while reading
      res.write(big.slice(0, 1000));
      setTimeout(() => res.end(big.slice(1000)), 20);
    };
    for (const path of ['/declared', '/chunked']) {
      const error = await rejectionOf(client({ maxContentLength: 1500 }).get(path));
      expect(error.code).toBe(AxiosError.ERR_BAD_RESPONSE);
      expect(error.message).toBe('maxContentLength size of 1500 exceeded');
    }
    const fits = await client({ maxContentLength: 2000 }).get<string>('/chunked');
    expect(fits.data).toBe(big);
  });

  it('rejects with ERR_CANCELED when the signal aborts', async () => {
    server.handler = () => undefined;
    const controller = new AbortController();
    const pending = client().get('/x', { signal: controller.signal });
    setTimeout(() => controller.abort(), 30);
    const error = await rejectionOf(pending);

    expect(error.code).toBe(AxiosError.ERR_CANCELED);
    expect(axios.isCancel(error)).toBe(true);
  });

  it('leaves transformResponse to axios: run once on what the adapter read', async () => {
    server.handler = (_req, res) => res.end('\uFEFF{"n":1}');
    const calls: unknown[] = [];
    const response = await client({
      transformResponse: [
        (data: unknown) => {
          calls.push(data);
          return JSON.parse(data as string) as unknown;
        },
      ],
    }).get<{ n: number }>('/x');

    expect(calls).toEqual(['{"n":1}']); // the UTF-8 BOM stripped, as the http adapter does
    expect(response.data).toEqual({ n: 1 });
  });

  it('keeps connections alive between calls', async () => {
    const http = client();
    for (let i = 0; i < 5; i++) {
      await http.get(`/a${i}`);
      await http.post(`/b${i}`, { i });
    }

    expect(server.seen).toHaveLength(10);
    // undici may open a second connection while the first is being handed back; never one per call.
    expect(server.connections).toBeLessThanOrEqual(2);
  });
});
