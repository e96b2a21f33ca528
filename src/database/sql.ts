/**
 * What the read pool (read-pool.ts) runs, as plain values: a statement (text, bind values, and a
 * name for a server-side prepared statement), and the pool settings and column types every
 * reader of it shares (the raw baseline of the read benchmarks included). No I/O here.
 */
import { createHash } from 'node:crypto';
import { types as pgTypes } from 'pg';
import { Prisma } from '../generated/prisma/client';

/** A statement's text and values, plus a stable name for a server-side prepared statement. */
export interface SqlStatement {
  name: string;
  text: string;
  values: unknown[];
}

/** A name for a prepared statement, unique to its text (`prefix_` + 16 hex digits of its SHA-1). */
export function statementName(prefix: string, text: string): string {
  return `${prefix}_${createHash('sha1').update(text).digest('hex').slice(0, 16)}`;
}

/**
 * A statement with a fixed text (a read by id, say): its name derived from the text once, its
 * values given at each call. `named('customer_by_id', 'SELECT … WHERE id = $1')(id)`.
 */
export function namedStatement(prefix: string, text: string): (...values: unknown[]) => SqlStatement {
  const name = statementName(prefix, text);
  return (...values) => ({ name, text, values });
}

const INT8_OID = 20;
const NUMERIC_OID = 1700;
const TIMESTAMPTZ_OID = 1184;

/** The number written in `text` from `start` to `end` (ASCII digits only), or NaN. */
function digitsAt(text: string, start: number, end: number): number {
  let value = 0;
  for (let i = start; i < end; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return NaN;
    value = value * 10 + digit;
  }
  return value;
}

const defaultTimestamptz = pgTypes.getTypeParser(TIMESTAMPTZ_OID, 'text') as (value: string) => unknown;

/**
 * A timestamptz as PostgreSQL writes it with DateStyle ISO (`2026-11-25 10:42:27.123+00`; 0–6
 * fraction digits, kept to the millisecond; an offset of ±HH, ±HH:MM or ±HH:MM:SS, whatever the
 * session's TimeZone) → Date, read character by character: node-postgres's parser (postgres-date)
 * cost a few percent of a hot read's CPU. Anything else (years before 100 or past 9999, BC,
 * `infinity`) is left to node-postgres's parser.
 */
export function parseTimestamptz(text: string): unknown {
  const year = digitsAt(text, 0, 4);
  if (
    text.length < 22 ||
    !(year >= 100) ||
    text[4] !== '-' ||
    text[7] !== '-' ||
    text[10] !== ' ' ||
    text[13] !== ':' ||
    text[16] !== ':'
  )
    return defaultTimestamptz(text);
  let i = 19;
  let ms = 0;
  if (text[i] === '.') {
    const start = ++i;
    while (i < text.length && text.charCodeAt(i) >= 48 && text.charCodeAt(i) <= 57) i++;
    const fraction = text.slice(start, Math.min(i, start + 3)).padEnd(3, '0');
    ms = i > start ? digitsAt(fraction, 0, 3) : NaN;
  }
  const sign = text[i] === '+' ? 1 : text[i] === '-' ? -1 : 0;
  const rest = text.length - i - 1;
  const offset =
    rest === 2
      ? digitsAt(text, i + 1, i + 3) * 3600
      : rest === 5 && text[i + 3] === ':'
        ? digitsAt(text, i + 1, i + 3) * 3600 + digitsAt(text, i + 4, i + 6) * 60
        : rest === 8 && text[i + 3] === ':' && text[i + 6] === ':'
          ? digitsAt(text, i + 1, i + 3) * 3600 + digitsAt(text, i + 4, i + 6) * 60 + digitsAt(text, i + 7, i + 9)
          : NaN;
  const time =
    Date.UTC(
      year,
      digitsAt(text, 5, 7) - 1,
      digitsAt(text, 8, 10),
      digitsAt(text, 11, 13),
      digitsAt(text, 14, 16),
      digitsAt(text, 17, 19),
      ms,
    ) -
    sign * offset * 1000;
  return sign === 0 || Number.isNaN(time) ? defaultTimestamptz(text) : new Date(time);
}

/**
 * Column types as Prisma reads them, so that a row read here is the same type Prisma hands out
 * (the model types: Customer, Card, LedgerRow…): int8 → bigint (exact), numeric → Prisma's
 * Decimal (exact; aggregates are cast to text in the SQL); every other type as node-postgres
 * parses it (timestamptz → Date, by `parseTimestamptz`; json/jsonb → parsed JSON, bool → boolean,
 * enums and uuid → string).
 */
export const READ_POOL_TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID
      ? (value: string) => BigInt(value)
      : oid === NUMERIC_OID
        ? (value: string) => new Prisma.Decimal(value)
        : oid === TIMESTAMPTZ_OID && format !== 'binary'
          ? parseTimestamptz
          : (pgTypes.getTypeParser(oid, format) as (value: string) => unknown)) as typeof pgTypes.getTypeParser,
};

/**
 * node-postgres pool options from DATABASE_URL for the read pool: at most `max` connections, the
 * column types above; `?schema=NAME` becomes the search_path (as createPgAdapter does for Prisma).
 * `connectionTimeoutMs` (DATABASE_POOL_TIMEOUT_MS) bounds a query's wait for a connection (an idle
 * one, or a new one to open); past it the query fails ("timeout exceeded when trying to connect":
 * database unavailable, 503). Unset, the wait is unbounded (node-postgres's default).
 */
export function readPoolConfig(connectionString: string, max: number, connectionTimeoutMs?: number) {
  const url = new URL(connectionString);
  const schema = url.searchParams.get('schema');
  url.searchParams.delete('schema');
  return {
    connectionString: url.toString(),
    max,
    types: READ_POOL_TYPES,
    application_name: 'wallet-gateway-reads',
    ...(connectionTimeoutMs ? { connectionTimeoutMillis: connectionTimeoutMs } : {}),
    ...(schema ? { options: `-c search_path="${schema.replace(/"/g, '""')}"` } : {}),
  };
}

/** DATABASE_POOL_TIMEOUT_MS's default: the longest wait for a pool connection, ms. */
export const DEFAULT_POOL_TIMEOUT_MS = 10_000;

const namesByText = new Map<string, string>();

/**
 * A statement whose text depends on which filters are present (a list), named by its text: the
 * name is derived once per distinct text (there are a handful per list), then remembered.
 */
export function sqlStatement(prefix: string, text: string, values: unknown[]): SqlStatement {
  let name = namesByText.get(text);
  if (name === undefined) {
    name = statementName(prefix, text);
    namesByText.set(text, name);
  }
  return { name, text, values };
}

/** While a statement's text is built: `bind(value, cast?)` appends `value` to `values` and returns its `$n` (with the cast). */
export function binder(values: unknown[]): (value: unknown, cast?: string) => string {
  return (value, cast = '') => {
    values.push(value);
    return `$${values.length}${cast}`;
  };
}
