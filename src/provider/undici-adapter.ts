import { EventEmitter } from 'node:events';
import { STATUS_CODES } from 'node:http';
import { Readable } from 'node:stream';
import axios, {
  type AxiosAdapter,
  AxiosError,
  AxiosHeaders,
  type AxiosResponse,
  CanceledError,
  type InternalAxiosRequestConfig,
} from 'axios';
import type { Dispatcher } from 'undici';

/** What an adapter response's `request` holds: the request as sent (no headers, no body). */
export interface UndiciAdapterRequest {
  method: string;
  url: string;
}

/** undici's code for a connection closed or broken under the request ("other side closed"): Node's http says ECONNRESET. */
const RESET_CODE = 'UND_ERR_SOCKET';
/** undici's own timers (connect, headers, body): a timeout, as axios's `timeout` reports one. */
const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
const USER_AGENT = `axios/${axios.VERSION}`;

/**
 * An axios adapter that sends the request with undici (`dispatcher.request()`, normally one
 * keep-alive `Agent` per `ProviderClient`) instead of axios's Node http adapter.
 *
 * Why: the provider client's calls spent most of their gateway CPU and allocations in the http
 * adapter (follow-redirects wrapping, stream plumbing, per-request agent and socket bookkeeping;
 * about 98 KB of the 162 KB a pass-through read allocated, docs/benchmarks.md). undici's client is
 * far cheaper per request; axios stays the client API (docs/design.md#stack: axios, axios-retry, the
 * interceptors and the AxiosError shapes `provider.client.ts` and `provider-resilience.ts` read).
 * OpenTelemetry's undici instrumentation (src/tracing.ts) traces these calls (HTTP client spans).
 *
 * It behaves as the http adapter does for what the gateway uses:
 * - URL: `baseURL` + `url` + `params` (as axios's buildFullPath joins them; params through
 *   axios's own `getUri`, so `paramsSerializer` applies);
 *   `method`; `headers` as set by axios (plus `User-Agent: axios/<version>` when none is given,
 *   as the http adapter sends); `data` as `transformRequest` left it (a string, Buffer,
 *   ArrayBuffer or stream; a string or Buffer is checked against `maxBodyLength`).
 * - `timeout` (per attempt, from the start of the request to the last byte of the answer):
 *   rejects with `AxiosError` `ETIMEDOUT` (`transitional.clarifyTimeoutError`) else `ECONNABORTED`,
 *   message `timeout of <n>ms exceeded` (or `timeoutErrorMessage`), and aborts the request.
 * - `signal` and `cancelToken`: reject with `CanceledError` (`ERR_CANCELED`) and abort.
 * - No redirect is followed (undici's `request()` follows none): a 3xx is an answer like any
 *   other; `maxRedirects` is ignored. Asks for no compression (`Accept-Encoding: identity`
 *   unless the caller set one) and refuses an encoded answer (`ERR_BAD_RESPONSE`).
 * - Answer: `{ data, status, statusText, headers, config, request }`, `headers` an `AxiosHeaders`
 *   of undici's lower-cased names; `data` the body as a string (`responseEncoding`, default
 *   UTF-8, BOM stripped) or a Buffer for `responseType: 'arraybuffer'` (no other responseType).
 *   More than `maxContentLength` bytes rejects with `ERR_BAD_RESPONSE` `maxContentLength size of
 *   <n> exceeded`. Resolved or rejected by `validateStatus` as axios's `settle` does: `AxiosError`
 *   `ERR_BAD_REQUEST` (4xx) or `ERR_BAD_RESPONSE` with `.response`.
 * - Failures without an answer: `AxiosError` with the system code (`ECONNREFUSED`,
 *   `ENOTFOUND`, …; undici's "other side closed" as `ECONNRESET`, its own timers as the
 *   timeout code) and `cause` the original error; a body cut off after the headers rejects with
 *   `ERR_BAD_RESPONSE` and `.response`, as the http adapter's aborted stream does.
 * `transformResponse` is not run here: axios's dispatchRequest runs it on what an adapter
 * returns (resolved, or rejected with `.response`).
 */
export function undiciAdapter(dispatcher: Dispatcher): AxiosAdapter {
  return (config) => send(dispatcher, config);
}

function send(dispatcher: Dispatcher, config: InternalAxiosRequestConfig): Promise<AxiosResponse> {
  return new Promise<AxiosResponse>((resolve, reject) => {
    const method = (config.method ?? 'get').toUpperCase();
    let target: URL;
    try {
      target = new URL(fullUrl(config));
    } catch (error) {
      reject(AxiosError.from(error, AxiosError.ERR_INVALID_URL, config));
      return;
    }
    const request: UndiciAdapterRequest = { method, url: target.href };
    if (target.protocol !== 'http:' && target.protocol !== 'https:') {
      reject(new AxiosError(`Unsupported protocol ${target.protocol}`, AxiosError.ERR_BAD_REQUEST, config, request));
      return;
    }
    if (config.responseType && !['text', 'json', 'arraybuffer'].includes(config.responseType)) {
      reject(
        new AxiosError(
          `responseType ${config.responseType} is not supported`,
          AxiosError.ERR_BAD_OPTION_VALUE,
          config,
          request,
        ),
      );
      return;
    }
    const timeout = config.timeout ? parseInt(String(config.timeout), 10) : 0;
    if (Number.isNaN(timeout)) {
      reject(
        new AxiosError(
          'error trying to parse `config.timeout` to int',
          AxiosError.ERR_BAD_OPTION_VALUE,
          config,
          request,
        ),
      );
      return;
    }
    const body = requestBody(config, request);
    if (body instanceof AxiosError) {
      reject(body);
      return;
    }
    const headers = config.headers.toJSON(true);
    if (!config.headers.has('user-agent')) headers['user-agent'] = USER_AGENT;
    if (!config.headers.has('accept-encoding')) headers['accept-encoding'] = 'identity';

    // undici takes an EventEmitter as its signal too: cheaper than an AbortController per request.
    const abort = new EventEmitter();
    let done = false;
    let timer: NodeJS.Timeout | undefined;
    const cancel = (reason?: unknown) =>
      fail(
        !reason || (reason as { type?: unknown }).type
          ? new CanceledError(undefined, config, request)
          : (reason as Error),
      );
    const onSignal = () => cancel();
    const finish = () => {
      done = true;
      if (timer) clearTimeout(timer);
      config.signal?.removeEventListener?.('abort', onSignal);
      config.cancelToken?.unsubscribe(cancel);
    };
    function fail(error: Error): void {
      if (done) return;
      finish();
      abort.emit('abort');
      reject(error);
    }

    if (config.signal?.aborted) {
      cancel();
      return;
    }
    config.signal?.addEventListener?.('abort', onSignal);
    config.cancelToken?.subscribe(cancel);
    if (timeout > 0) {
      timer = setTimeout(() => {
        const clarify = config.transitional?.clarifyTimeoutError;
        fail(
          new AxiosError(
            config.timeoutErrorMessage || `timeout of ${timeout}ms exceeded`,
            clarify ? AxiosError.ETIMEDOUT : AxiosError.ECONNABORTED,
            config,
            request,
          ),
        );
      }, timeout);
    }

    dispatcher
      .request({
        origin: target.origin,
        path: target.pathname + target.search,
        method: method,
        headers,
        body,
        signal: abort,
      })
      .then(
        (answer) => {
          if (done) {
            answer.body.destroy();
            return;
          }
          const status = answer.statusCode;
          const response: AxiosResponse = {
            data: undefined,
            status,
            statusText: answer.statusText || STATUS_CODES[status] || '',
            headers: new AxiosHeaders(answer.headers as Record<string, string | string[]>),
            config,
            request,
          };
          readBody(
            answer,
            response,
            config,
            request,
            (error) => fail(error),
            () => {
              if (done) return;
              finish();
              settle(resolve, reject, response, request);
            },
          );
        },
        (error: Error) => fail(transportError(error, config, request)),
      );
  });
}

const ABSOLUTE_URL = /^([a-z][a-z\d+\-.]*:)?\/\//i;

/**
 * `baseURL` + `url` + `params` as axios builds them (its buildFullPath and combineURLs; the
 * params through `axios.getUri`, so the serialiser is axios's own or `paramsSerializer`).
 */
function fullUrl(config: InternalAxiosRequestConfig): string {
  const { baseURL, url = '' } = config;
  const path =
    baseURL && (!ABSOLUTE_URL.test(url) || config.allowAbsoluteUrls === false)
      ? url
        ? `${baseURL.replace(/\/?\/$/, '')}/${url.replace(/^\/+/, '')}`
        : baseURL
      : url;
  return config.params
    ? axios.getUri({ url: path, params: config.params as unknown, paramsSerializer: config.paramsSerializer })
    : path;
}

/** The request body as undici takes it, from `config.data` after `transformRequest`; an `AxiosError` when refused. */
function requestBody(
  config: InternalAxiosRequestConfig,
  request: UndiciAdapterRequest,
): Dispatcher.DispatchOptions['body'] | AxiosError {
  const data: unknown = config.data;
  if (data === undefined || data === null) return null;
  if (data instanceof Readable) return data;
  let body: string | Buffer;
  if (typeof data === 'string' || Buffer.isBuffer(data)) body = data;
  else if (ArrayBuffer.isView(data)) body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  else if (data instanceof ArrayBuffer) body = Buffer.from(data);
  else
    return new AxiosError(
      'Data after transformation must be a string, an ArrayBuffer, a Buffer, or a Stream',
      AxiosError.ERR_BAD_REQUEST,
      config,
      request,
    );
  const limit = config.maxBodyLength ?? -1;
  if (limit > -1 && (typeof body === 'string' ? Buffer.byteLength(body) : body.length) > limit)
    return new AxiosError('Request body larger than maxBodyLength limit', AxiosError.ERR_BAD_REQUEST, config, request);
  return body;
}

/** Reads the answer's body into `response.data`, within `maxContentLength`; `onEnd` once it is whole. */
function readBody(
  answer: Dispatcher.ResponseData,
  response: AxiosResponse,
  config: InternalAxiosRequestConfig,
  request: UndiciAdapterRequest,
  onError: (error: Error) => void,
  onEnd: () => void,
): void {
  const limit = config.maxContentLength ?? -1;
  const tooLarge = () =>
    new AxiosError(`maxContentLength size of ${limit} exceeded`, AxiosError.ERR_BAD_RESPONSE, config, request);
  const encoding = answer.headers['content-encoding'];
  if (encoding !== undefined && encoding !== 'identity') {
    onError(
      new AxiosError(
        `The answer is encoded (${String(encoding)}); only identity is accepted`,
        AxiosError.ERR_BAD_RESPONSE,
        config,
        request,
        response,
      ),
    );
    return;
  }
  const declared = Number(answer.headers['content-length']);
  if (limit > -1 && declared > limit) {
    onError(tooLarge());
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  const stream = answer.body;
  stream.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (limit > -1 && size > limit) onError(tooLarge());
    else chunks.push(chunk);
  });
  stream.on('error', (error: Error) =>
    onError(AxiosError.from(error, AxiosError.ERR_BAD_RESPONSE, config, request, response)),
  );
  stream.on('end', () => {
    const buffer = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
    if (config.responseType === 'arraybuffer') {
      response.data = buffer;
    } else {
      const charset = config.responseEncoding ?? 'utf8';
      const text = buffer.toString(charset as BufferEncoding);
      response.data =
        (charset === 'utf8' || charset === 'utf-8') && text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
    }
    onEnd();
  });
}

/** axios's `settle`: resolves, or rejects with `.response` when `validateStatus` refuses the status. */
function settle(
  resolve: (response: AxiosResponse) => void,
  reject: (error: Error) => void,
  response: AxiosResponse,
  request: UndiciAdapterRequest,
): void {
  const { status, config } = response;
  const validateStatus = config.validateStatus;
  if (!status || !validateStatus || validateStatus(status)) {
    resolve(response);
    return;
  }
  reject(
    new AxiosError(
      `Request failed with status code ${status}`,
      status >= 400 && status < 500 ? AxiosError.ERR_BAD_REQUEST : AxiosError.ERR_BAD_RESPONSE,
      config,
      request,
      response,
    ),
  );
}

/** A failure before any answer as `AxiosError`: the system code (undici's codes as Node's http would give them), `cause` the original. */
function transportError(error: Error, config: InternalAxiosRequestConfig, request: UndiciAdapterRequest): AxiosError {
  if (error instanceof AxiosError) return error;
  const code = (error as { code?: unknown }).code;
  if (code === RESET_CODE) return AxiosError.from(error, 'ECONNRESET', config, request);
  if (typeof code === 'string' && TIMEOUT_CODES.has(code)) {
    const clarify = config.transitional?.clarifyTimeoutError;
    return AxiosError.from(error, clarify ? AxiosError.ETIMEDOUT : AxiosError.ECONNABORTED, config, request);
  }
  return AxiosError.from(error, undefined, config, request);
}
