import type { FieldError } from '../common/errors';

/** Banks a virtual account can be issued at (docs/provider.md#limits). */
export const VIRTUAL_ACCOUNT_BANKS = ['safehaven', 'providus'] as const;
export type VirtualAccountBank = (typeof VIRTUAL_ACCOUNT_BANKS)[number];

/** Banks that need the holder's `dateOfBirth` (docs/provider.md#virtual-accounts: required only for one bank). */
export const BANKS_NEEDING_DATE_OF_BIRTH: readonly string[] = ['providus'];

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Whether `value` is a real calendar date written yyyy-mm-dd (2024-02-30 is not). */
export function isCalendarDate(value: string): boolean {
  const match = DATE.exec(value);
  if (!match) return false;
  const [, y, m, d] = match.map(Number);
  const date = new Date(Date.UTC(y, m - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
}

/**
 * Local checks of a virtual-account request, before the provider is called. Returns the failing
 * fields (empty when fine):
 * - `dateOfBirth` missing when `bank` needs it (providus);
 * - `dateOfBirth` not a real yyyy-mm-dd date, or after `today` (UTC date).
 */
export function virtualAccountProblems(
  input: { bank: string; dateOfBirth?: string },
  today: Date = new Date(),
): FieldError[] {
  const problems: FieldError[] = [];
  if (input.dateOfBirth === undefined || input.dateOfBirth === '') {
    if (BANKS_NEEDING_DATE_OF_BIRTH.includes(input.bank)) {
      problems.push({ field: 'dateOfBirth', message: `dateOfBirth is required for bank ${input.bank}` });
    }
    return problems;
  }
  if (!isCalendarDate(input.dateOfBirth)) {
    problems.push({ field: 'dateOfBirth', message: 'dateOfBirth must be a date written yyyy-mm-dd' });
  } else if (input.dateOfBirth > today.toISOString().slice(0, 10)) {
    problems.push({ field: 'dateOfBirth', message: 'dateOfBirth must not be in the future' });
  }
  return problems;
}
