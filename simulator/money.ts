/**
 * Money for the simulator: integer MINOR units (bigint) everywhere, never floats. Major-unit
 * values exist only when rendering answers (as the provider does: `650` for 65000 kobo).
 */

/** Minor-unit digits per wallet currency. */
export const EXPONENT: Record<string, number> = { USD: 2, NGN: 2, GHS: 2, KES: 2, UGX: 0, BTC: 8 };

/** Fixed rate table: units of each currency per 1 USD, as an integer ratio [numerator, denominator]. */
export const USD_RATE: Record<string, readonly [bigint, bigint]> = {
  USD: [1n, 1n],
  NGN: [1500n, 1n],
  GHS: [15n, 1n],
  KES: [130n, 1n],
  UGX: [3700n, 1n],
  BTC: [1n, 100_000n],
};

/** Whether the simulator keeps a wallet in `currency` (any case). */
export function isCurrency(currency: string): boolean {
  return currency.toUpperCase() in EXPONENT;
}

/** Minor-unit digits of `currency` (any case); throws for an unknown currency. */
export function exponent(currency: string): number {
  const e = EXPONENT[currency.toUpperCase()];
  if (e === undefined) throw new Error(`unknown currency ${currency}`);
  return e;
}

/** 10^exponent: minor units per major unit of `currency`. */
export function scale(currency: string): bigint {
  return 10n ** BigInt(exponent(currency));
}

/**
 * THE rounding rule of the simulator: n / d rounded half up (0.5 → 1), for n ≥ 0 and d > 0.
 * Every fee, conversion and rate goes through here.
 */
export function divRoundHalfUp(n: bigint, d: bigint): bigint {
  if (n < 0n || d <= 0n) throw new Error('divRoundHalfUp needs n >= 0 and d > 0');
  return (2n * n + d) / (2n * d);
}

/** `amount` minor units × basisPoints / 10000, rounded half up, at least `min` minor units. */
export function feeOf(amount: bigint, basisPoints: bigint, min = 0n): bigint {
  const fee = divRoundHalfUp(amount * basisPoints, 10_000n);
  return fee < min ? min : fee;
}

/** Converts `amount` minor units of `from` into minor units of `to` at the fixed rates. */
export function convert(amount: bigint, from: string, to: string): bigint {
  const [fn, fd] = USD_RATE[from.toUpperCase()];
  const [tn, td] = USD_RATE[to.toUpperCase()];
  // amount / scale(from) [from] × fd/fn [USD] × tn/td [to] × scale(to)
  return divRoundHalfUp(amount * fd * tn * scale(to), scale(from) * fn * td);
}

/** Units of `to` per unit of `from` as a decimal string (≤ 8 decimals, no trailing zeros), e.g. "1500". */
export function rate(from: string, to: string): string {
  const [fn, fd] = USD_RATE[from.toUpperCase()];
  const [tn, td] = USD_RATE[to.toUpperCase()];
  const scaled = divRoundHalfUp(fd * tn * 10n ** 8n, fn * td)
    .toString()
    .padStart(9, '0');
  return `${scaled.slice(0, -8)}.${scaled.slice(-8)}`.replace(/\.?0+$/, '');
}

/** Minor units → major-unit decimal string with all the currency's digits, e.g. 65000n NGN → "650.00". */
export function major(minor: bigint, currency: string): string {
  const e = exponent(currency);
  const negative = minor < 0n;
  const digits = (negative ? -minor : minor).toString().padStart(e + 1, '0');
  const text = e === 0 ? digits : `${digits.slice(0, -e)}.${digits.slice(-e)}`;
  return negative ? `-${text}` : text;
}

/** Minor units → major units as a JSON number (rendering only), e.g. 65000n NGN → 650. */
export function majorNumber(minor: bigint, currency: string): number {
  return Number(major(minor, currency));
}

/** A minor-unit integer for JSON: a number when safe, else its decimal string. */
export function jsonInt(minor: bigint): number | string {
  return minor <= BigInt(Number.MAX_SAFE_INTEGER) && minor >= -BigInt(Number.MAX_SAFE_INTEGER)
    ? Number(minor)
    : minor.toString();
}

export const INT32_MAX = 2_147_483_647n;

/**
 * Parses an amount a caller sent in MINOR units (integer number or digit string); null when it is
 * not an integer ≥ 1 (≥ 0 with `allowZero`).
 */
export function parseMinor(value: unknown, allowZero = false): bigint | null {
  let text: string;
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) return null;
    text = String(value);
  } else if (typeof value === 'string') text = value.trim();
  else return null;
  if (!/^\d+$/.test(text)) return null;
  const amount = BigInt(text);
  return amount > 0n || (allowZero && amount === 0n) ? amount : null;
}

/**
 * Parses an amount a caller sent in MAJOR units of `currency` (a number or decimal string with at
 * most the currency's fraction digits: 10 → 1000n USD cents, "10.5" → 1050n) into minor units;
 * null when malformed, finer than the currency, or not ≥ 1 minor unit.
 */
export function parseMajor(value: unknown, currency: string): bigint | null {
  let text: string;
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || Math.abs(value) > Number.MAX_SAFE_INTEGER) return null;
    text = String(value);
  } else if (typeof value === 'string') text = value.trim();
  else return null;
  const match = /^(\d+)(?:\.(\d+))?$/.exec(text);
  if (!match) return null;
  const e = exponent(currency);
  const fraction = (match[2] ?? '').replace(/0+$/, '');
  if (fraction.length > e) return null;
  const amount = BigInt(match[1]) * scale(currency) + BigInt(fraction.padEnd(e, '0') || '0');
  return amount > 0n ? amount : null;
}

/** How the simulator reads initialize-swap's `amount`: `major` (the documented samples) or `minor`. */
export type AmountUnit = 'major' | 'minor';

/**
 * The documented failure trigger of the simulator: true when the MAJOR amount's integer part ends
 * in 13 (e.g. 113.00 USD = 11300 cents, 13.00 USD = 1300 cents). Payouts, card creations, card
 * top-ups and withdrawals of such amounts fail when they settle.
 */
export function isFailureAmount(minor: bigint, currency: string): boolean {
  return (minor / scale(currency)) % 100n === 13n;
}
