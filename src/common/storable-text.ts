/**
 * Text PostgreSQL can store. `text` columns refuse the NUL character (U+0000) and `jsonb` refuses
 * both `\u0000` and UTF-16 surrogates without their pair ("lone surrogates", e.g. `\ud800`);
 * a lone surrogate also cannot be written as UTF-8 for the provider (`encodeURIComponent` throws
 * URIError). Input holding either is refused at the border (400, see `validation.ts`); what the
 * provider answers is made storable instead (`storableText`, `storableJson`).
 */

/** A NUL, a high surrogate not followed by a low one, or a low surrogate not preceded by a high one. */
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const NUL = /\u0000/g;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** True when `text` holds a NUL or a lone surrogate (see the file comment). `'a\u0000'` → true, `'😀'` → false. */
export function isUnstorable(text: string): boolean {
  return UNSTORABLE.test(text);
}

/** `text` with every NUL removed and every lone surrogate replaced by U+FFFD (`'a\u0000b\ud800'` → `'ab\ufffd'`). */
export function storableText(text: string): string {
  return isUnstorable(text) ? text.replace(NUL, '').replace(LONE_SURROGATE, '\uFFFD') : text;
}

/**
 * Deep copy of a JSON value whose strings, object keys included, went through `storableText`.
 * Values other than strings, arrays and plain objects are returned as they are. Input is not changed.
 */
export function storableJson<T>(value: T): T {
  if (typeof value === 'string') return storableText(value) as T;
  if (Array.isArray(value)) return value.map((item) => storableJson(item)) as T;
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value as Record<string, unknown>))
    out[storableText(key)] = storableJson(item);
  return out as T;
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
