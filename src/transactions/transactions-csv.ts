/**
 * The finance CSV export: columns, one row per ledger transaction, written by csv-stringify
 * (RFC 4180: comma, CRLF, fields with a comma, quote or line break quoted, quotes doubled).
 */
import { Transform } from 'node:stream';
import { stringify, type Stringifier } from 'csv-stringify';
import { tryFormatMajor } from '../common/money';
import type { LedgerRow } from './ledger-row';

/** Header row, in order. Amount columns hold major units as decimal strings; `*_minor` the exact integer. */
export const CSV_COLUMNS = [
  'id',
  'created_at',
  'completed_at',
  'kind',
  'direction',
  'status',
  'currency',
  'amount',
  'amount_minor',
  'fee',
  'fee_minor',
  'counter_currency',
  'counter_amount',
  'reference',
  'provider_id',
  'customer_id',
  'beneficiary_id',
  'card_id',
  'description',
  'failure_reason',
] as const;

/**
 * Minor units → major-unit decimal string in `currency` (150000n, USD → "1500.00"), or '' for a
 * currency without a known exponent (the `*_minor` column still has the exact value).
 */
export function majorOrEmpty(minor: bigint | null, currency: string | null): string {
  if (minor === null || currency === null) return '';
  return tryFormatMajor(minor, currency) ?? '';
}

/**
 * Free text that a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, tab, CR first) gets a
 * leading apostrophe (OWASP "CSV injection"). Applied to the client-supplied text columns only
 * (reference, description, failure reason), never to amounts, ids or dates.
 */
export function neutraliseFormula(text: string | null): string {
  if (text === null) return '';
  return /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
}

/** One CSV record for a ledger row, in CSV_COLUMNS order. */
export function csvRecord(row: LedgerRow): string[] {
  return [
    row.id,
    row.createdAt.toISOString(),
    row.completedAt ? row.completedAt.toISOString() : '',
    row.kind,
    row.direction,
    row.status,
    row.currency,
    majorOrEmpty(row.amount, row.currency),
    row.amount.toString(),
    majorOrEmpty(row.fee, row.currency),
    row.fee.toString(),
    row.counterCurrency ?? '',
    majorOrEmpty(row.counterAmount, row.counterCurrency),
    neutraliseFormula(row.reference),
    row.providerId ?? '',
    row.customerId ?? '',
    row.beneficiaryId ?? '',
    row.cardId ?? '',
    neutraliseFormula(row.description),
    neutraliseFormula(row.failureReason),
  ];
}

/** Object stream of ledger rows → object stream of CSV records (backpressure passes through). */
export function toCsvRecords(): Transform {
  return new Transform({
    objectMode: true,
    highWaterMark: 256,
    transform(row: LedgerRow, _encoding, done) {
      try {
        done(null, csvRecord(row));
      } catch (error) {
        done(error as Error);
      }
    },
  });
}

/**
 * Joins the writer's many small chunks (one per record) into blocks of about `size` bytes, so that
 * the response is written in a few large writes rather than one per row: less work per row and
 * fewer short-lived objects for the garbage collector. Backpressure passes through.
 */
export function coalesce(size = 64 * 1024): Transform {
  let parts: Buffer[] = [];
  let length = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      parts.push(chunk);
      length += chunk.length;
      if (length >= size) {
        const block = Buffer.concat(parts, length);
        parts = [];
        length = 0;
        done(null, block);
      } else {
        done();
      }
    },
    flush(done) {
      done(null, length > 0 ? Buffer.concat(parts, length) : undefined);
    },
  });
}

/** The CSV writer: header row first (also for an export with no rows), CRLF line ends. */
export function csvWriter(): Stringifier {
  return stringify({ header: true, columns: [...CSV_COLUMNS], record_delimiter: 'windows' });
}
