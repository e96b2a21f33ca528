// Display helpers. Money arrives as integer minor units (a JSON number, or a string when it is
// beyond JavaScript's safe integers) plus, where the gateway gives one, a major-unit decimal
// string with exactly the currency's digits ("1500.00" USD, "5" UGX). No float arithmetic here:
// digits are handled as text and BigInt.

/** Thousands separators on a decimal string: "1234567.50" → "1,234,567.50". */
export function groupDigits(decimal) {
  const text = String(decimal);
  const negative = text.startsWith('-');
  const [whole, fraction] = (negative ? text.slice(1) : text).split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${negative ? '-' : ''}${grouped}${fraction !== undefined ? `.${fraction}` : ''}`;
}

/** The currency's minor-unit digits as shown by a decimal string: "1500.00" → 2, "5" → 0. */
export function exponentOf(decimal) {
  if (typeof decimal !== 'string' || !/^-?\d+(\.\d+)?$/.test(decimal)) return null;
  const dot = decimal.indexOf('.');
  return dot < 0 ? 0 : decimal.length - dot - 1;
}

/** Integer minor units → major-unit decimal string with `exponent` digits (BigInt, exact). */
export function minorToDecimal(minor, exponent) {
  const value = BigInt(String(minor));
  const negative = value < 0n;
  const digits = (negative ? -value : value).toString().padStart(exponent + 1, '0');
  const whole = exponent ? digits.slice(0, -exponent) : digits;
  const fraction = exponent ? `.${digits.slice(-exponent)}` : '';
  return `${negative ? '-' : ''}${whole}${fraction}`;
}

/**
 * An amount for people: "1,500.00 USD". Uses `decimal` when given, else converts `minor` with the
 * exponent read from `exponentHint` (another decimal of the same currency), else shows minor units.
 */
export function formatMoney(minor, currency, decimal, exponentHint) {
  if (minor === null || minor === undefined) return '—';
  if (typeof decimal === 'string' && decimal !== '') return `${groupDigits(decimal)} ${currency}`;
  const exponent = exponentOf(exponentHint);
  if (exponent !== null) return `${groupDigits(minorToDecimal(minor, exponent))} ${currency}`;
  return `${groupDigits(String(minor))} ${currency} (minor units)`;
}

/** An ISO timestamp as "2026-11-23 10:26:05 UTC" (the same for everyone, whatever their zone). */
export function formatTime(iso) {
  if (!iso) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso);
  return `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** A `datetime-local` value read as UTC → ISO timestamp ("" stays ""). */
export function utcInputToIso(value) {
  if (!value) return '';
  const withSeconds = value.length === 16 ? `${value}:00` : value;
  const date = new Date(`${withSeconds}Z`);
  return Number.isNaN(date.getTime()) ? '' : date.toISOString();
}

/** "card_topup" → "card topup". */
export function humanise(word) {
  return String(word ?? '').replace(/_/g, ' ');
}

/** A shortened id for tables: the first 8 characters. */
export function shortId(id) {
  return id ? String(id).slice(0, 8) : '—';
}

/**
 * An amount typed in major units ("1500", "1,500.5", "12.34") → integer minor units as a string,
 * exactly (text and BigInt, no float), with the currency's `exponent` (2 for USD, 0 for JPY, 3 for
 * KWD). "" stays "". Throws a RangeError naming the problem for anything else, or for more decimals
 * than the currency has.
 */
export function majorToMinor(text, exponent) {
  const value = String(text ?? '')
    .trim()
    .replace(/,/g, '');
  if (value === '') return '';
  const match = /^(\d+)(?:\.(\d*))?$/.exec(value);
  if (!match) throw new RangeError(`"${text}" is not an amount`);
  const fraction = match[2] ?? '';
  if (fraction.length > exponent) {
    throw new RangeError(`"${text}" has more than ${exponent} decimal${exponent === 1 ? '' : 's'}`);
  }
  return BigInt(match[1] + fraction.padEnd(exponent, '0')).toString();
}
