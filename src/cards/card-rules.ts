import type { FieldError } from '../common/errors';
import type { TransactionStatus } from '../generated/prisma/client';
import { isCalendarDate } from '../virtual-accounts/virtual-account-rules';

/** Card top-up bounds in USD minor units (docs/provider.md#limits: 3 to 2,500 USD). */
export const CARD_TOPUP_MIN_MINOR = 300n;
export const CARD_TOPUP_MAX_MINOR = 250_000n;

/** Card networks the provider issues (`cardBrand`, lower case). */
export const CARD_BRANDS = ['visa', 'mastercard'] as const;

/**
 * Problems of a card funding amount (top-up, or a card's initial funding when not zero), in USD
 * minor units: outside 300–250000 (3.00–2,500.00 USD). Empty when fine.
 */
export function topUpAmountProblems(amount: bigint, field = 'amount'): FieldError[] {
  if (amount < CARD_TOPUP_MIN_MINOR || amount > CARD_TOPUP_MAX_MINOR) {
    return [
      {
        field,
        message: `${field} must be between ${CARD_TOPUP_MIN_MINOR} and ${CARD_TOPUP_MAX_MINOR} USD minor units (3.00 to 2,500.00 USD)`,
      },
    ];
  }
  return [];
}

/**
 * Local checks of a card-holder registration (docs/provider.md#card-holders): `bvn` is
 * required when the customer is Nigerian and `dateOfBirth` when Ghanaian. Nationality is read from
 * `address.country` (ISO 3166-1 alpha-2), as the provider reads its `country` field.
 * `bvn` is 11 digits; `dateOfBirth` a real, past yyyy-mm-dd date. Empty when fine.
 */
export function cardHolderProblems(
  input: { country: string; bvn?: string; dateOfBirth?: string },
  today: Date = new Date(),
): FieldError[] {
  const problems: FieldError[] = [];
  if (input.country === 'NG' && !input.bvn) {
    problems.push({ field: 'bvn', message: 'bvn is required for Nigerian customers (address.country NG)' });
  }
  if (input.bvn !== undefined && !/^\d{11}$/.test(input.bvn)) {
    problems.push({ field: 'bvn', message: 'bvn must be 11 digits' });
  }
  if (input.country === 'GH' && !input.dateOfBirth) {
    problems.push({
      field: 'dateOfBirth',
      message: 'dateOfBirth is required for Ghanaian customers (address.country GH)',
    });
  }
  if (input.dateOfBirth !== undefined) {
    if (!isCalendarDate(input.dateOfBirth)) {
      problems.push({ field: 'dateOfBirth', message: 'dateOfBirth must be a date written yyyy-mm-dd' });
    } else if (input.dateOfBirth > today.toISOString().slice(0, 10)) {
      problems.push({ field: 'dateOfBirth', message: 'dateOfBirth must not be in the future' });
    }
  }
  return problems;
}

/**
 * A card's expiry month and year from the provider's `valid` (MM/YYYY, or MM/YY), else from its
 * `expiry` timestamp (UTC). Null when neither is readable.
 */
export function cardExpiry(
  validThru: string | null | undefined,
  expiresAt?: Date | null,
): { month: number; year: number } | null {
  const match = typeof validThru === 'string' ? /^\s*(\d{1,2})\s*\/\s*(\d{2}|\d{4})\s*$/.exec(validThru) : null;
  if (match) {
    const month = Number(match[1]);
    const year = match[2].length === 2 ? 2000 + Number(match[2]) : Number(match[2]);
    if (month >= 1 && month <= 12) return { month, year };
  }
  if (expiresAt && !Number.isNaN(expiresAt.getTime())) {
    return { month: expiresAt.getUTCMonth() + 1, year: expiresAt.getUTCFullYear() };
  }
  return null;
}

/**
 * Effect of a ledger status move on the card's balance, in minor units (signed). A movement counts
 * once it is `success`: + for a credit to the card (top-up, merchant credit), − for a debit
 * (withdrawal, spend). A reversal of a successful movement gives it back; other moves change nothing.
 */
export function balanceEffect(
  direction: 'credit' | 'debit',
  amount: bigint,
  from: TransactionStatus | null,
  to: TransactionStatus,
): bigint {
  const signed = direction === 'credit' ? amount : -amount;
  if (to === 'success' && from !== 'success') return signed;
  if (to === 'reversed' && from === 'success') return -signed;
  return 0n;
}
