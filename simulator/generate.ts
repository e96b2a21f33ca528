import { randomInt } from 'node:crypto';

/** `n` random decimal digits (account numbers, CVVs). */
export function randomDigits(n: number): string {
  let out = '';
  for (let i = 0; i < n; i++) out += String(randomInt(10));
  return out;
}

/** The Luhn check digit for `payload` (the number without its last digit). */
export function luhnCheckDigit(payload: string): string {
  let sum = 0;
  for (let i = 0; i < payload.length; i++) {
    let d = Number(payload[payload.length - 1 - i]);
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return String((10 - (sum % 10)) % 10);
}

/** Whether `number` passes the Luhn check. */
export function isLuhnValid(number: string): boolean {
  return /^\d{2,}$/.test(number) && luhnCheckDigit(number.slice(0, -1)) === number.slice(-1);
}

/** A Luhn-valid 16-digit card number starting with `prefix`. */
export function cardNumber(prefix: string): string {
  const payload = prefix + randomDigits(15 - prefix.length);
  return payload + luhnCheckDigit(payload);
}
