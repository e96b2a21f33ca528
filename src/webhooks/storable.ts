import { Prisma } from '../generated/prisma/client';

/**
 * Making a callback storable in PostgreSQL. JSON allows strings PostgreSQL refuses: `\u0000` (no
 * text or jsonb value may hold NUL: SQLSTATE 22P05) and lone UTF-16 surrogates such as `\ud800`
 * (invalid jsonb: 22P02). A signed callback carrying one is still the provider's event: it is
 * stored with each such character replaced by U+FFFD (the Unicode replacement character), in its
 * keys and values alike, rather than refused or failed.
 */

/** Nesting deeper than this is refused (400) before anything walks the body recursively. */
export const MAX_CALLBACK_DEPTH = 400;

const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** `text` with NUL and lone surrogates replaced by U+FFFD (unchanged, same string, when it has none). */
export function storableText(text: string): string {
  return text.replace(UNSTORABLE, '\ufffd');
}

/** Thrown by `storableJson` for a value nested deeper than MAX_CALLBACK_DEPTH. */
export class TooDeepError extends Error {
  constructor() {
    super(`The callback body is nested deeper than ${MAX_CALLBACK_DEPTH} levels.`);
  }
}

/**
 * A copy of the parsed JSON `value` with every string and key passed through `storableText`, and
 * whether anything was replaced. Walks at most MAX_CALLBACK_DEPTH levels.
 * @throws TooDeepError for deeper nesting.
 */
export function storableJson(value: unknown): { value: unknown; replaced: boolean } {
  let replaced = false;
  const text = (s: string) => {
    const clean = storableText(s);
    if (clean !== s) replaced = true;
    return clean;
  };
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === 'string') return text(v);
    if (v === null || typeof v !== 'object') return v;
    if (depth >= MAX_CALLBACK_DEPTH) throw new TooDeepError();
    if (Array.isArray(v)) return v.map((item) => walk(item, depth + 1));
    return Object.fromEntries(Object.entries(v).map(([k, item]) => [text(k), walk(item, depth + 1)]));
  };
  const result = walk(value, 0);
  return { value: result, replaced };
}

/**
 * Whether a database error is about the data of the statement (SQLSTATE class 22 "data exception",
 * or 54 "program limit exceeded", e.g. a value nested too deeply) rather than the database being
 * unavailable: such a row can never be stored, and retrying it is pointless.
 */
export function isDataError(error: unknown): boolean {
  if (!(error instanceof Prisma.PrismaClientKnownRequestError)) return false;
  const meta = error.meta as { driverAdapterError?: { cause?: { originalCode?: string; code?: string } } } | undefined;
  const cause = meta?.driverAdapterError?.cause;
  const state = cause?.originalCode ?? cause?.code ?? '';
  return /^(22|54)/.test(state);
}
