import fc from 'fast-check';
import { DomainError, ErrorCode, ValidationError } from './errors';
import {
  CURRENCY_EXPONENTS,
  currencyExponent,
  formatMajor,
  minorToNumber,
  normaliseCurrency,
  parseMinorUnits,
  parseRate,
  toMinorUnits,
} from './money';

const currencies = Object.keys(CURRENCY_EXPONENTS);

describe('currencyExponent', () => {
  it.each([
    ['USD', 2],
    ['NGN', 2],
    ['GHS', 2],
    ['KES', 2],
    ['UGX', 0],
    ['EUR', 2],
    ['GBP', 2],
    ['ZAR', 2],
    ['XOF', 0],
    ['BTC', 8],
    ['USDT', 6],
  ])('%s has %i minor-unit digits', (code, exponent) => {
    expect(currencyExponent(code)).toBe(exponent);
    expect(currencyExponent(code.toLowerCase())).toBe(exponent);
  });

  it('refuses an unknown code with a validation_failed DomainError', () => {
    const error = (() => {
      try {
        currencyExponent('XYZ');
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ValidationError);
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe(ErrorCode.ValidationFailed);
    expect(() => currencyExponent('')).toThrow(ValidationError);
    expect(() => currencyExponent('__proto__')).toThrow(ValidationError);
  });

  it('normalises codes to upper case', () => {
    expect(normaliseCurrency('ngn')).toBe('NGN');
    expect(normaliseCurrency(' usdt ')).toBe('USDT');
  });
});

describe('toMinorUnits', () => {
  it('NGN (2 digits): kobo', () => {
    expect(toMinorUnits('650', 'NGN')).toBe(65000n);
    expect(toMinorUnits(650, 'ngn')).toBe(65000n);
    expect(toMinorUnits('650.5', 'NGN')).toBe(65050n);
    expect(toMinorUnits('650.05', 'NGN')).toBe(65005n);
    expect(toMinorUnits(0.1, 'NGN')).toBe(10n);
  });

  it('USD (2 digits): cents, including exponent notation and signs', () => {
    expect(toMinorUnits('12.34', 'USD')).toBe(1234n);
    expect(toMinorUnits(12.34, 'USD')).toBe(1234n);
    expect(toMinorUnits('1e2', 'USD')).toBe(10000n);
    expect(toMinorUnits('1.5E-1', 'USD')).toBe(15n);
    expect(toMinorUnits('-3.10', 'USD')).toBe(-310n);
    expect(toMinorUnits('+3', 'USD')).toBe(300n);
    expect(toMinorUnits('-0', 'USD')).toBe(0n);
  });

  it('UGX (0 digits): minor equals major', () => {
    expect(toMinorUnits('5', 'UGX')).toBe(5n);
    expect(toMinorUnits(4000000, 'UGX')).toBe(4000000n);
    expect(() => toMinorUnits('5.5', 'UGX')).toThrow(ValidationError);
  });

  it('BTC (8 digits): satoshi, including numbers printed in exponent notation', () => {
    expect(toMinorUnits('0.00000001', 'BTC')).toBe(1n);
    expect(toMinorUnits(1e-8, 'BTC')).toBe(1n);
    expect(String(1e-7)).toBe('1e-7');
    expect(toMinorUnits(1e-7, 'BTC')).toBe(10n);
    expect(toMinorUnits('21000000', 'BTC')).toBe(2_100_000_000_000_000n);
  });

  it('accepts extra fraction digits only when they are zeros', () => {
    expect(toMinorUnits('650.000', 'NGN')).toBe(65000n);
    expect(toMinorUnits('100.000000', 'USD')).toBe(10000n);
    expect(() => toMinorUnits('650.001', 'NGN')).toThrow(/more fraction digits than NGN allows/);
    expect(() => toMinorUnits(0.1 + 0.2, 'USD')).toThrow(ValidationError);
    expect(() => toMinorUnits('0.000000001', 'BTC')).toThrow(ValidationError);
  });

  it('rounds half-even only when asked', () => {
    expect(toMinorUnits('1.005', 'USD', 'half-even')).toBe(100n);
    expect(toMinorUnits('1.015', 'USD', 'half-even')).toBe(102n);
    expect(toMinorUnits('1.0151', 'USD', 'half-even')).toBe(102n);
    expect(toMinorUnits('-1.015', 'USD', 'half-even')).toBe(-102n);
    expect(toMinorUnits('2.5', 'UGX', 'half-even')).toBe(2n);
    expect(toMinorUnits('3.5', 'UGX', 'half-even')).toBe(4n);
  });

  it.each([
    ['empty', ''],
    ['letters', 'abc'],
    ['grouping', '1,000.00'],
    ['space', ' 1'],
    ['bare point', '1.'],
    ['no whole part', '.5'],
    ['hex', '0x10'],
    ['huge exponent', '1e999999'],
    ['too long', '1'.repeat(200)],
  ])('refuses a malformed value (%s)', (_label, value) => {
    expect(() => toMinorUnits(value, 'USD')).toThrow(ValidationError);
  });

  it('refuses non-finite and unsafe numbers, and non-numeric types', () => {
    expect(() => toMinorUnits(Number.NaN, 'USD')).toThrow(ValidationError);
    expect(() => toMinorUnits(Number.POSITIVE_INFINITY, 'USD')).toThrow(ValidationError);
    expect(() => toMinorUnits(2 ** 60, 'USD')).toThrow(/send a string/);
    expect(() => toMinorUnits(null as unknown as string, 'USD')).toThrow(ValidationError);
    expect(() => toMinorUnits('1', 'XYZ')).toThrow(ValidationError);
  });
});

describe('parseMinorUnits', () => {
  it('parses integer minor units given as numbers or strings', () => {
    expect(parseMinorUnits(65000)).toBe(65000n);
    expect(parseMinorUnits('65000')).toBe(65000n);
    expect(parseMinorUnits('65000.00')).toBe(65000n);
    expect(() => parseMinorUnits('65000.5')).toThrow(ValidationError);
    expect(parseMinorUnits('65000.5', 'half-even')).toBe(65000n);
  });
});

describe('formatMajor', () => {
  it('writes exactly the exponent digits', () => {
    expect(formatMajor(65000n, 'NGN')).toBe('650.00');
    expect(formatMajor(5n, 'UGX')).toBe('5');
    expect(formatMajor(1n, 'BTC')).toBe('0.00000001');
    expect(formatMajor(-150n, 'USD')).toBe('-1.50');
    expect(formatMajor(-5n, 'USD')).toBe('-0.05');
    expect(formatMajor(0n, 'USDT')).toBe('0.000000');
    expect(formatMajor(123456789n, 'usdt')).toBe('123.456789');
  });
});

describe('minorToNumber', () => {
  it('converts safe integers and refuses the rest', () => {
    expect(minorToNumber(65000n)).toBe(65000);
    expect(minorToNumber(-1n)).toBe(-1);
    expect(minorToNumber(BigInt(Number.MAX_SAFE_INTEGER))).toBe(Number.MAX_SAFE_INTEGER);
    expect(() => minorToNumber(BigInt(Number.MAX_SAFE_INTEGER) + 1n)).toThrow(ValidationError);
    expect(() => minorToNumber(-BigInt(Number.MAX_SAFE_INTEGER) - 1n)).toThrow(ValidationError);
  });
});

describe('parseRate', () => {
  it('keeps an exact canonical decimal string', () => {
    expect(parseRate('1540.50')).toBe('1540.5');
    expect(parseRate(1540.5)).toBe('1540.5');
    expect(parseRate('0001.2300')).toBe('1.23');
    expect(parseRate(1e-7)).toBe('0.0000001');
    // What Prisma's Decimal#toString gives for a small stored rate: rendered back in plain digits.
    expect(parseRate('6.5e-7')).toBe('0.00000065');
    expect(parseRate('0.000649350649350649')).toBe('0.000649350649350649');
    expect(parseRate(1600)).toBe('1600');
    expect(parseRate('0')).toBe('0');
  });

  it('refuses negative and malformed rates', () => {
    expect(() => parseRate('-1')).toThrow(ValidationError);
    expect(() => parseRate('abc')).toThrow(ValidationError);
  });
});

describe('money properties (fast-check)', () => {
  const currency = fc.constantFrom(...currencies);
  const minor = fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n });

  it('toMinorUnits ∘ formatMajor is the identity on minor units', () => {
    fc.assert(fc.property(minor, currency, (m, c) => toMinorUnits(formatMajor(m, c), c) === m));
  });

  it('formatMajor ∘ toMinorUnits is the identity on canonical major strings', () => {
    const canonical = fc.tuple(currency, minor).map(([c, m]) => [c, formatMajor(m, c)] as const);
    fc.assert(fc.property(canonical, ([c, text]) => formatMajor(toMinorUnits(text, c), c) === text));
  });

  it('safe-integer numbers and their decimal strings give the same minor units', () => {
    fc.assert(
      fc.property(fc.integer({ min: -1e9, max: 1e9 }), fc.integer({ min: 0, max: 99 }), (whole, cents) => {
        const text = `${whole}.${String(cents).padStart(2, '0')}`;
        return toMinorUnits(Number(text), 'USD') === toMinorUnits(text, 'USD');
      }),
    );
  });

  it('minorToNumber agrees with Number() within the safe range', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -BigInt(Number.MAX_SAFE_INTEGER), max: BigInt(Number.MAX_SAFE_INTEGER) }),
        (m) => BigInt(minorToNumber(m)) === m,
      ),
    );
  });

  it('half-even rounding is never more than half a minor unit away', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 15n }), fc.boolean(), (thousandths, negative) => {
        const text = `${negative ? '-' : ''}${formatDecimal(thousandths, 3)}`;
        const cents = toMinorUnits(text, 'USD', 'half-even');
        const diff = (negative ? -cents : cents) * 10n - thousandths;
        return diff >= -5n && diff <= 5n && (diff !== 5n && diff !== -5n ? true : cents % 2n === 0n);
      }),
    );
  });

  it('parseRate is idempotent', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 20n }), fc.integer({ min: 0, max: 18 }), (digits, scale) => {
        const text = formatDecimal(digits, scale);
        return parseRate(parseRate(text)) === parseRate(text);
      }),
    );
  });
});

function formatDecimal(digits: bigint, scale: number): string {
  const text = digits.toString().padStart(scale + 1, '0');
  return scale ? `${text.slice(0, -scale)}.${text.slice(-scale)}` : text;
}
