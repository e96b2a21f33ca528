/**
 * Money at the border: integer minor units (`bigint`) inside the gateway, decimal strings or
 * JSON numbers only where the provider or a client speaks them. No float arithmetic anywhere:
 * numbers are turned into their shortest decimal string (`String(n)`) and parsed as decimals.
 * docs/design.md#money-guards-at-the-border.
 */
import { ValidationError } from './errors';

/**
 * Minor-unit digits per currency: the one table (docs/design.md#money-guards-at-the-border).
 * Fiat codes follow ISO 4217's "minor unit" column (UGX, XOF, XAF, RWF are 0-digit currencies).
 * BTC is counted in satoshi (8 digits); USDT and USDC in their 6-decimal token units (the
 * decimals of their ERC-20/TRC-20 contracts). A currency missing here cannot be handled: add it.
 */
export const CURRENCY_EXPONENTS: Readonly<Record<string, number>> = Object.freeze({
  USD: 2,
  EUR: 2,
  GBP: 2,
  CAD: 2,
  NGN: 2,
  GHS: 2,
  KES: 2,
  TZS: 2,
  ZAR: 2,
  ZMW: 2,
  MWK: 2,
  EGP: 2,
  UGX: 0,
  RWF: 0,
  XOF: 0,
  XAF: 0,
  BTC: 8,
  USDT: 6,
  USDC: 6,
});

/** The currency codes the gateway handles (the keys of CURRENCY_EXPONENTS), as request bodies enumerate them. */
export const CURRENCIES: readonly string[] = Object.freeze(Object.keys(CURRENCY_EXPONENTS));

/** How to treat fraction digits beyond a currency's exponent that are not zero. */
export type Rounding = 'reject' | 'half-even';

/** Longest decimal text accepted, and the largest power of ten applied (guards BigInt work). */
const MAX_TEXT_LENGTH = 80;
const MAX_EXPONENT = 60;
const DECIMAL = /^([+-])?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/** A decimal value as `sign * digits * 10^-scale` (scale ≥ 0). */
interface Decimal {
  negative: boolean;
  digits: bigint;
  scale: number;
}

function invalid(field: string, message: string): ValidationError {
  return new ValidationError([{ field, message }], `${field} ${message}.`);
}

/**
 * Upper-case currency code, checked against `CURRENCY_EXPONENTS`.
 * @throws ValidationError (`validation_failed`, field `currency`) for an unknown code.
 */
export function normaliseCurrency(code: string): string {
  const upper = typeof code === 'string' ? code.trim().toUpperCase() : '';
  if (!Object.prototype.hasOwnProperty.call(CURRENCY_EXPONENTS, upper)) {
    throw invalid('currency', `is not a supported currency: ${String(code)}`);
  }
  return upper;
}

/**
 * Minor-unit digits of a currency (case-insensitive): NGN → 2, UGX → 0, BTC → 8.
 * @throws ValidationError for an unknown code.
 */
export function currencyExponent(code: string): number {
  return CURRENCY_EXPONENTS[normaliseCurrency(code)];
}

/**
 * Parses a decimal string or a JSON number exactly. Numbers must be finite and within
 * ±Number.MAX_SAFE_INTEGER (beyond it a double has already lost digits: send a string).
 */
function parseDecimal(value: string | number, field: string): Decimal {
  let text: string;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw invalid(field, 'must be a finite number');
    if (Math.abs(value) > Number.MAX_SAFE_INTEGER)
      throw invalid(field, 'is too large for a JSON number; send a string');
    text = String(value);
  } else if (typeof value === 'string') {
    text = value;
  } else {
    throw invalid(field, 'must be a decimal string or a number');
  }
  const match = text.length <= MAX_TEXT_LENGTH ? DECIMAL.exec(text) : null;
  if (!match) throw invalid(field, `is not a decimal number: ${JSON.stringify(text.slice(0, MAX_TEXT_LENGTH))}`);
  const [, sign, whole, fraction = '', exp = '0'] = match;
  let scale = fraction.length - Number(exp);
  if (Math.abs(scale) > MAX_EXPONENT) throw invalid(field, 'is out of range');
  let digits = BigInt(whole + fraction);
  if (scale < 0) {
    digits *= 10n ** BigInt(-scale);
    scale = 0;
  }
  return { negative: sign === '-' && digits !== 0n, digits, scale };
}

/** Rescales a decimal to `exponent` fraction digits; trailing zeros beyond it are dropped freely. */
function rescale(d: Decimal, exponent: number, rounding: Rounding, field: string, what: string): bigint {
  let units: bigint;
  if (d.scale <= exponent) {
    units = d.digits * 10n ** BigInt(exponent - d.scale);
  } else {
    const divisor = 10n ** BigInt(d.scale - exponent);
    units = d.digits / divisor;
    const rest = d.digits % divisor;
    if (rest !== 0n) {
      if (rounding === 'reject') throw invalid(field, `has more fraction digits than ${what} allows (${exponent})`);
      if (rest * 2n > divisor || (rest * 2n === divisor && units % 2n === 1n)) units += 1n;
    }
  }
  return d.negative ? -units : units;
}

/**
 * Major-unit amount → integer minor units: ("650", NGN) → 65000n, (650.5, NGN) → 65050n,
 * ("5", UGX) → 5n, ("0.00000001", BTC) → 1n, ("1e-2", USD) → 1n. Exact: no float arithmetic.
 * Fraction digits beyond the currency's exponent are accepted only when they are zeros
 * ("650.000" NGN → 65000n); otherwise `rounding: 'reject'` (the default) throws and
 * `'half-even'` rounds (only for amounts the provider computed by conversion, e.g. a quote's
 * target amount, never for amounts a client asked to move).
 * @throws ValidationError for an unknown currency, a malformed value, or dropped digits.
 */
export function toMinorUnits(
  value: string | number,
  currency: string,
  rounding: Rounding = 'reject',
  field = 'amount',
): bigint {
  const code = normaliseCurrency(currency);
  return rescale(parseDecimal(value, field), CURRENCY_EXPONENTS[code], rounding, field, code);
}

/**
 * A value already in minor units (the provider's `centAmount`, `centFees`) → bigint:
 * 65000 → 65000n, "65000" → 65000n. A fractional part is refused (`'reject'`) or rounded half-even.
 * @throws ValidationError for a malformed value or a non-zero fraction with `'reject'`.
 */
export function parseMinorUnits(value: string | number, rounding: Rounding = 'reject', field = 'amount'): bigint {
  return rescale(parseDecimal(value, field), 0, rounding, field, 'a minor-unit amount');
}

/**
 * Integer minor units → major-unit decimal string with exactly the currency's exponent digits:
 * 65000n NGN → "650.00", 5n UGX → "5", 1n BTC → "0.00000001", -150n USD → "-1.50".
 * @throws ValidationError for an unknown currency.
 */
export function formatMajor(minor: bigint, currency: string): string {
  const exponent = currencyExponent(currency);
  const negative = minor < 0n;
  const text = (negative ? -minor : minor).toString().padStart(exponent + 1, '0');
  const whole = text.slice(0, text.length - exponent);
  const fraction = exponent > 0 ? `.${text.slice(text.length - exponent)}` : '';
  return `${negative ? '-' : ''}${whole}${fraction}`;
}

/** Number.MAX_SAFE_INTEGER as a bigint, made once (every mapped amount is compared with it). */
const MAX_SAFE_MINOR = BigInt(Number.MAX_SAFE_INTEGER);

/** Whether `minor` is within ±(2^53 − 1): an exact JSON number (the API's and the provider's amounts). */
export function isSafeMinor(minor: bigint): boolean {
  return minor <= MAX_SAFE_MINOR && minor >= -MAX_SAFE_MINOR;
}

/**
 * Minor units for a JSON answer or event: a number while within ±Number.MAX_SAFE_INTEGER, else an
 * exact integer string (never a rounded number, never an error for a stored amount).
 */
export function minorToJson(minor: bigint): number | string {
  return isSafeMinor(minor) ? Number(minor) : minor.toString();
}

/** Major-unit decimal string, or undefined for a currency the gateway has no exponent for. */
export function tryFormatMajor(minor: bigint, currency: string): string | undefined {
  return Object.prototype.hasOwnProperty.call(CURRENCY_EXPONENTS, currency) ? formatMajor(minor, currency) : undefined;
}

/**
 * Minor units as a JSON number (for API responses and the provider's numeric `amount` fields).
 * @throws ValidationError (field `amount`) when beyond ±Number.MAX_SAFE_INTEGER.
 */
export function minorToNumber(minor: bigint): number {
  if (!isSafeMinor(minor)) throw invalid('amount', 'is beyond the largest safe JSON integer');
  return Number(minor);
}

/**
 * Exchange rate (or spot price) → canonical non-negative decimal string, kept exact for a
 * Prisma `Decimal` column: 1540.5 → "1540.5", "0001.2300" → "1.23", 1e-7 → "0.0000001".
 * @throws ValidationError (field `rate`) for a malformed or negative value.
 */
export function parseRate(value: string | number): string {
  const d = parseDecimal(value, 'rate');
  if (d.negative) throw invalid('rate', 'must not be negative');
  const text = d.digits.toString().padStart(d.scale + 1, '0');
  const whole = text.slice(0, text.length - d.scale);
  const fraction = text.slice(text.length - d.scale).replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : whole;
}
