import { MAX_JSON_DEPTH } from './http-limits';

/**
 * Text PostgreSQL can store. `text` columns refuse the NUL character (U+0000: SQLSTATE 22P05) and
 * `jsonb` refuses both `\u0000` and UTF-16 surrogates without their pair ("lone surrogates", e.g.
 * `\ud800`: 22P02); a lone surrogate also cannot be written as UTF-8 for the provider
 * (`encodeURIComponent` throws URIError). Input holding either is refused at the border (400, see
 * `validation.ts`); what the provider sends (its answers, its signed callbacks) is still the
 * provider's word and is made storable instead: each such character replaced by U+FFFD (the Unicode
 * replacement character), in keys and values alike (`storableText`, `storableJson`).
 */

/** A NUL, a high surrogate not followed by a low one, or a low surrogate not preceded by a high one. */
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const UNSTORABLE_ALL = new RegExp(UNSTORABLE.source, 'g');

/** True when `text` holds a NUL or a lone surrogate (see the file comment). `'a\u0000'` → true, `'😀'` → false. */
export function isUnstorable(text: string): boolean {
  return UNSTORABLE.test(text);
}

/**
 * `text` with every NUL and every lone surrogate replaced by U+FFFD (`'a\u0000b\ud800'` →
 * `'a\ufffdb\ufffd'`); the same length, and the same string when it has none.
 */
export function storableText(text: string): string {
  return isUnstorable(text) ? text.replace(UNSTORABLE_ALL, '\uFFFD') : text;
}

/** Thrown by `storableJson` for a value nested deeper than MAX_JSON_DEPTH. */
export class TooDeepError extends Error {
  constructor() {
    super(`The JSON value is nested deeper than ${MAX_JSON_DEPTH} levels.`);
  }
}

/**
 * A deep copy of a parsed JSON `value` whose strings, object keys included, went through
 * `storableText`, and whether anything was replaced. Walks at most MAX_JSON_DEPTH levels of arrays
 * and objects (the limit every JSON body is held to, http-limits.ts). Input is not changed.
 * @throws TooDeepError for deeper nesting.
 */
export function storableJson<T>(value: T): { value: T; replaced: boolean } {
  let replaced = false;
  const text = (s: string) => {
    const clean = storableText(s);
    if (clean !== s) replaced = true;
    return clean;
  };
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === 'string') return text(v);
    if (v === null || typeof v !== 'object') return v;
    if (depth >= MAX_JSON_DEPTH) throw new TooDeepError();
    if (Array.isArray(v)) return v.map((item) => walk(item, depth + 1));
    return Object.fromEntries(Object.entries(v).map(([k, item]) => [text(k), walk(item, depth + 1)]));
  };
  const result = walk(value, 0) as T;
  return { value: result, replaced };
}

/** One field holding unstorable text: its dotted path (itself made storable, to be safe to echo) and why. */
export interface UnstorableField {
  field: string;
  message: string;
}

/**
 * The fields of a request value (body, query or path parameter) whose string value or object key
 * holds a NUL or a lone surrogate, as dotted paths below `path` (`payer.accountName`, `items.0`),
 * at most `max` of them. Walks plain objects and arrays only.
 */
export function unstorableFields(value: unknown, path = '', max = 20): UnstorableField[] {
  const found: UnstorableField[] = [];
  const visit = (item: unknown, at: string): void => {
    if (found.length >= max) return;
    if (typeof item === 'string') {
      if (isUnstorable(item)) found.push({ field: at || 'value', message: message(at || 'value') });
      return;
    }
    if (item === null || typeof item !== 'object') return;
    if (Array.isArray(item)) {
      item.forEach((element, index) => visit(element, at ? `${at}.${index}` : String(index)));
      return;
    }
    for (const [key, element] of Object.entries(item as Record<string, unknown>)) {
      const child = at ? `${at}.${storableText(key)}` : storableText(key);
      if (isUnstorable(key)) {
        if (found.length < max) found.push({ field: child, message: `${child}: field names must not contain ${WHAT}` });
        continue;
      }
      visit(element, child);
    }
  };
  visit(value, path);
  return found;
}

const WHAT = 'NUL characters or unpaired UTF-16 surrogates';

function message(field: string): string {
  return `${field} must not contain ${WHAT}`;
}
