// The gateway's finance API as the page uses it: every call sends the typed-in key as
// `Authorization: Bearer <key>`, like any other client. Errors are the gateway's RFC 9457
// problem+json answers, turned into ApiError.

/** A failed call: HTTP status plus the problem's `code`, `detail` and field `errors`. */
export class ApiError extends Error {
  constructor(status, problem) {
    super(problem?.detail || problem?.title || `HTTP ${status}`);
    this.status = status;
    this.code = problem?.code ?? null;
    this.errors = Array.isArray(problem?.errors) ? problem.errors : [];
    this.requestId = problem?.requestId ?? null;
  }
}

/** Query string of the given values, leaving out empty ones. */
export function queryString(params) {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined || value === null || value === '') continue;
    search.set(name, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

async function toError(response) {
  let problem = null;
  try {
    problem = await response.json();
  } catch {
    // Not JSON (a proxy's page, say): keep the status alone.
  }
  return new ApiError(response.status, problem);
}

/** Name of the file in `content-disposition: attachment; filename="…"`, or a fallback. */
export function attachmentName(header, fallback) {
  const match = /filename="([^"]+)"/.exec(header ?? '') ?? /filename=([^;]+)/.exec(header ?? '');
  return match ? match[1].trim() : fallback;
}

/** The finance calls, bound to one API key. */
export function financeApi(key) {
  async function call(path, params = {}, accept = 'application/json') {
    let response;
    try {
      response = await fetch(path + queryString(params), {
        headers: { Authorization: `Bearer ${key}`, Accept: accept },
        cache: 'no-store',
      });
    } catch (error) {
      throw new ApiError(0, { detail: `The gateway could not be reached (${error.message}).` });
    }
    if (!response.ok) throw await toError(response);
    return response;
  }

  return {
    /** GET /v1/transactions: `{data, nextCursor}`. */
    list: async (filters, cursor, limit) => (await call('/v1/transactions', { ...filters, cursor, limit })).json(),
    /** GET /v1/transactions/{id}: the transaction with its `statusHistory`; `refresh` asks the provider. */
    get: async (id, refresh = false) =>
      (await call(`/v1/transactions/${encodeURIComponent(id)}`, { refresh: refresh ? 'true' : undefined })).json(),
    /** GET /v1/api-keys/me (any valid key): `{id, name, scopes}`, what this key may do. */
    me: async () => (await call('/v1/api-keys/me')).json(),
    /** GET /v1/audit-events (scope audit:read): `{data, nextCursor}`. */
    auditEvents: async (filters, cursor, limit) =>
      (await call('/v1/audit-events', { ...filters, cursor, limit })).json(),
    /** GET /v1/transactions/summary: `{from, to, totals: [...], net: [...]}`. */
    summary: async (filters) => (await call('/v1/transactions/summary', filters)).json(),
    /** GET /v1/transactions/export: the CSV as a Blob and the file name the gateway gave it. */
    exportCsv: async (filters) => {
      const response = await call('/v1/transactions/export', filters, 'text/csv');
      // As the gateway names it (no colons: Windows refuses them), e.g. transactions-20261128T002416Z.csv.
      const fallback = `transactions-${new Date().toISOString().replace(/\.\d{3}Z$/, 'Z').replace(/[-:]/g, '')}.csv`;
      return {
        blob: await response.blob(),
        filename: attachmentName(response.headers.get('content-disposition'), fallback),
      };
    },
  };
}

/** What to tell someone whose key was refused at sign-in (or later). */
export function keyProblemMessage(error) {
  if (error.status === 401) return 'This API key was not accepted: it is unknown or has been revoked.';
  if (error.status === 403)
    return 'This API key is valid but lacks the transactions:read scope. Ask for a finance key.';
  if (error.status === 429) return 'Too many requests with this key; wait a minute and try again.';
  return `Sign-in failed: ${error.message}`;
}
