/**
 * The one comparison of a provider answer with the request it answers
 * (docs/design.md#money-guards-at-the-border): an amount or currency the provider states that differs from what was asked means
 * it read the request otherwise (most often a unit misconfiguration: ×100 for cents), and nothing
 * it answered may be confirmed or used.
 */
import { DomainError, ErrorCode } from '../common/errors';
import { CURRENCY_EXPONENTS, formatMajor, minorToJson } from '../common/money';

/** An amount in minor units of an upper-case currency. */
export interface MoneyAmount {
  amountMinor: bigint;
  currency: string;
}

/** The hint given when the two amounts differ by exactly one minor-unit factor (×100 for cents). */
export const UNIT_HINT = 'unit misconfigured?';

function show(money: MoneyAmount): string {
  const major = Object.prototype.hasOwnProperty.call(CURRENCY_EXPONENTS, money.currency)
    ? formatMajor(money.amountMinor, money.currency)
    : money.amountMinor.toString();
  return `${major} ${money.currency} (${money.amountMinor} minor units)`;
}

/**
 * Whether `a` and `b` (same currency) differ by exactly the currency's minor-unit factor
 * (10^exponent: ×100 for USD, NGN, KES): the signature of one side reading minor units as major.
 */
export function differsByUnitFactor(a: MoneyAmount, b: MoneyAmount): boolean {
  if (a.currency !== b.currency) return false;
  const exponent = CURRENCY_EXPONENTS[a.currency] ?? 0;
  if (exponent === 0 || a.amountMinor === 0n || b.amountMinor === 0n) return false;
  const factor = 10n ** BigInt(exponent);
  return a.amountMinor * factor === b.amountMinor || b.amountMinor * factor === a.amountMinor;
}

/**
 * 502 `provider_amount_mismatch`: the provider's answer to `operation` states `answered` where
 * `asked` was requested. Carries both values, the provider's id and its answer (card secrets
 * already stripped) so the caller can hold its ledger row for review; the problem body shows
 * `operation`, `asked` and `answered` (`{amount, currency}`, minor units) and `hint` when the
 * amounts differ by exactly the minor-unit factor.
 */
export class ProviderAmountMismatchError extends DomainError {
  readonly unitHint: boolean;

  constructor(
    readonly operation: string,
    readonly asked: MoneyAmount,
    readonly answered: MoneyAmount,
    /** The provider's id of the record it created, when its answer names one. */
    readonly providerId: string | null = null,
    /** The provider's answer (`data`), card secrets stripped. */
    readonly raw: Record<string, unknown> | null = null,
  ) {
    const unitHint = differsByUnitFactor(asked, answered);
    super(
      ErrorCode.ProviderAmountMismatch,
      `The provider answered ${operation} with ${show(answered)} for a request of ${show(asked)}; nothing was confirmed.` +
        (unitHint ? ` The amounts differ by exactly the minor-unit factor: ${UNIT_HINT}` : ''),
      {
        operation,
        asked: { amount: minorToJson(asked.amountMinor), currency: asked.currency },
        answered: { amount: minorToJson(answered.amountMinor), currency: answered.currency },
        ...(unitHint ? { hint: UNIT_HINT } : {}),
      },
    );
    this.unitHint = unitHint;
  }
}

/**
 * Compares the money a provider answer states with the money asked. Returns the error to throw
 * when the amount or the currency differs, null when they agree.
 */
export function answerMismatch(
  operation: string,
  asked: MoneyAmount,
  answered: MoneyAmount,
  record: { id?: string | null; raw?: Record<string, unknown> | null } = {},
): ProviderAmountMismatchError | null {
  if (asked.amountMinor === answered.amountMinor && asked.currency === answered.currency) return null;
  return new ProviderAmountMismatchError(operation, asked, answered, record.id ?? null, record.raw ?? null);
}
