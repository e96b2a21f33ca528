/**
 * The money a payout or deposit callback states, checked against the ledger row it names before
 * the event may move that row (docs/design.md#money-guards-at-the-border: what the provider says is
 * checked against what was asked before anything moves on). A callback is the provider's last word
 * on a movement, so it gets the same check as a synchronous answer (answer-checks.ts): a
 * `payout.transfer.success` for 60.00 USD on a payout of 50.00 USD is not applied.
 *
 * Units come from the one table (provider-units.ts): payout and deposit events state `amount` as a
 * major decimal string (PW "Event names"). The documented payout fields name no currency; deposits
 * (and the simulator's payout events) send it lower-case: when present it must be the row's.
 */
import { CURRENCY_EXPONENTS } from '../common/money';
import { answerMismatch, type MoneyAmount, type ProviderAmountMismatchError } from './answer-checks';
import { fromWireAmount, unitOf } from './provider-units';

/** The ledger callbacks whose money is checked: payouts settled, collections paid (PW "Event names"). */
export const LEDGER_CALLBACK_EVENTS = [
  'payout.transfer.success',
  'payout.transfer.failed',
  'transaction.deposit.success',
] as const;

export type LedgerCallbackEvent = (typeof LEDGER_CALLBACK_EVENTS)[number];

/** The unit table's row for an event's `amount`. */
function amountUnitOf(event: LedgerCallbackEvent) {
  return event === 'transaction.deposit.success'
    ? unitOf('transaction.deposit.success', 'event', 'amount')
    : unitOf('payout.transfer.*', 'event', 'amount');
}

/**
 * Compares the money callback `event` states in `data` (`amount`, and `currency` when present)
 * with `held`, the amount and currency (minor units, upper-case) of the ledger row it names.
 * Returns null when they agree or when the event states no amount (nothing contradicts the row);
 * otherwise a `ProviderAmountMismatchError` (operation = the event name, `asked` = the row's money,
 * `answered` = the event's, the provider's id and the event's data kept) for the caller to hold the
 * row `needs_review` instead of applying the event.
 * @throws ValidationError when `amount` is not a decimal in the currency's digits (e.g. "abc",
 * "50.001" USD): an unreadable amount moves nothing either; the inbox keeps the event `failed`.
 */
export function callbackAmountMismatch(
  event: LedgerCallbackEvent,
  data: Record<string, unknown>,
  held: MoneyAmount,
): ProviderAmountMismatchError | null {
  const amount = data.amount;
  if (amount === undefined || amount === null) return null;
  const stated = typeof data.currency === 'string' && data.currency.trim() ? data.currency.trim().toUpperCase() : null;
  const currency = stated ?? held.currency;
  // An unknown stated currency differs from the row's anyway; its amount is read in the row's digits to show it.
  const readAs = Object.prototype.hasOwnProperty.call(CURRENCY_EXPONENTS, currency) ? currency : held.currency;
  const amountMinor = fromWireAmount(amount as string | number, readAs, amountUnitOf(event));
  const id = typeof data.id === 'string' || typeof data.id === 'number' ? String(data.id) : null;
  return answerMismatch(event, held, { amountMinor, currency }, { id, raw: data });
}
