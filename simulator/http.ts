import { STATUS_CODES } from 'node:http';

/** A request body as parsed JSON (the simulator validates fields by hand, like the provider). */
export type Body = Record<string, unknown>;

/** Thrown by handlers; answered as a NestJS-style error body, as the provider's clients expect. */
export class ProviderHttpError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
  ) {
    super(message);
  }
}

/** 400 Bad Request. */
export const badRequest = (message: string) => new ProviderHttpError(400, message);
/** 404 Not Found, e.g. `notFound('Customer')` → "Customer not found". */
export const notFound = (what: string) => new ProviderHttpError(404, `${what} not found`);
/** 409 Conflict. */
export const conflict = (message: string) => new ProviderHttpError(409, message);

/** The NestJS error body: `{statusCode, message, error}` (error = the HTTP reason phrase). */
export function errorBody(statusCode: number, message: string) {
  return { statusCode, message, error: STATUS_CODES[statusCode] ?? 'Error' };
}

/** The `{status, message, data}` envelope of every success (docs/provider.md#conventions). */
export function envelope<T>(data: T, message = 'Request successful') {
  return { status: true as const, message, data };
}

/** The body as an object (an absent or non-object body counts as `{}`). */
export function bodyOf(request: { body?: unknown }): Body {
  const body = request.body;
  return body && typeof body === 'object' && !Array.isArray(body) ? (body as Body) : {};
}

/** 400 listing every missing field (absent, null or empty string). */
export function requireFields(body: Body, names: string[]): void {
  const missing = names.filter((name) => body[name] === undefined || body[name] === null || body[name] === '');
  if (missing.length) throw badRequest(`${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} required`);
}

/** The field as a string, or undefined when absent/null (numbers are stringified). */
export function optString(body: Body, name: string): string | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  throw badRequest(`${name} must be a string`);
}

/** A required string field (see `requireFields`). */
export function str(body: Body, name: string): string {
  requireFields(body, [name]);
  return optString(body, name) as string;
}
