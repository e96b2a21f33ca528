/**
 * THE table of money units at the provider border (docs/design.md#money-guards-at-the-border): for
 * every provider operation, the unit of each amount the gateway sends (request), reads (answer)
 * or receives in a callback (event), with the documentation that says so. The client and the
 * mappers look every unit up here (`unitOf`); nothing else decides a unit. Where the provider's
 * documentation is silent the unit is a validated setting (src/config/env.ts), default as the
 * samples read.
 *
 * Sources quoted, by section: the provider's API reference (PA) and its callbacks documentation
 * (PW), both retold in docs/provider.md (the units: docs/provider.md#units).
 */
import {
  currencyExponent,
  formatMajor,
  minorToNumber,
  parseMinorUnits,
  type Rounding,
  toMinorUnits,
} from '../common/money';

/** `major`: decimal units of the currency (dollars, naira); `minor`: integer minor units (cents, kobo). */
export type AmountUnit = 'major' | 'minor';

/** The settings that decide the undocumented units (src/config/env.ts). */
export interface AmountUnitSettings {
  /** initialize-swap request `amount` (PA "Swaps" gives no unit). */
  SWAP_AMOUNT_UNIT: AmountUnit;
  /** `amount` of card events (PW "Event names": dollars or cents "not documented"). */
  CARD_EVENT_AMOUNT_UNIT: AmountUnit;
}

/** Defaults: what the samples support (initialize-swap amount 10 → sourceAmount "10"; card events like card records). */
export const DEFAULT_UNIT_SETTINGS: Readonly<AmountUnitSettings> = Object.freeze({
  SWAP_AMOUNT_UNIT: 'major',
  CARD_EVENT_AMOUNT_UNIT: 'major',
});

/** One row: where an amount is, its unit (or the setting naming it), and the evidence. */
export interface AmountUnitRow {
  /** Provider operation (ProviderClient method name) or card-event family. */
  operation: string;
  side: 'request' | 'answer' | 'event';
  /** Wire field name. */
  field: string;
  unit: AmountUnit | keyof AmountUnitSettings;
  /** What the documentation says, quoted. */
  evidence: string;
}

const SENT_MINOR = 'PW "Other documented rules": "Amounts sent to the provider are minor units"';
const PAYOUT_CENT = 'PA "Payout transaction": centAmount "amount in minor units"';
const PAYOUT_MAJOR =
  'PA "Payout transaction": amount "wallet-currency amount" beside centAmount (minor); PW: "payouts answer `amount` and `centAmount`"';
const CARD_TX_MAJOR = 'PA "Card transaction": amount "major units"';
const CARD_TX_MINOR = 'PA "Card transaction": centAmount "minor units"';
const CARD_EVENT = 'PW "Event names": "Whether card-event amounts are dollars or cents is not documented"';
const GET_TX =
  'PA "Transactions": get-transaction answers the payout shape, money as major strings (PA "Payout transaction": amount, balanceBefore/After "string")';

/** The table. Every amount the gateway sends or reads is here, and only here. */
export const AMOUNT_UNITS = [
  // ---- Collections ----
  {
    operation: 'initializeCollection',
    side: 'request',
    field: 'amount',
    unit: 'minor',
    evidence: `${SENT_MINOR} ("a collection of 65000 NGN kobo answers amount: 650")`,
  },
  {
    operation: 'initializeCollection',
    side: 'answer',
    field: 'amount',
    unit: 'major',
    evidence: 'PW "Other documented rules": "a collection of 65000 NGN kobo answers `amount: 650`"',
  },
  {
    operation: 'initializeCollection',
    side: 'answer',
    field: 'fees',
    unit: 'major',
    evidence:
      'PA "Collection": fees is a number beside amount, which is major (PW "a collection … answers amount: 650")',
  },
  // ---- Payouts ----
  {
    operation: 'initializePayout',
    side: 'request',
    field: 'amount',
    unit: 'minor',
    evidence: `${SENT_MINOR}; PA "Beneficiaries and payouts": amount (int32), "the unit of amount: not shown"`,
  },
  { operation: 'initializePayout', side: 'answer', field: 'centAmount', unit: 'minor', evidence: PAYOUT_CENT },
  { operation: 'initializePayout', side: 'answer', field: 'amount', unit: 'major', evidence: PAYOUT_MAJOR },
  {
    operation: 'initializePayout',
    side: 'answer',
    field: 'centFees',
    unit: 'minor',
    evidence: 'PA "Payout transaction": centFees beside centAmount (minor units)',
  },
  {
    operation: 'initializePayout',
    side: 'answer',
    field: 'fees',
    unit: 'major',
    evidence: 'PA "Payout transaction": fees beside centFees, as amount beside centAmount',
  },
  {
    operation: 'finalizePayout',
    side: 'answer',
    field: 'centAmount',
    unit: 'minor',
    evidence: `${PAYOUT_CENT} (not in the finalize sample: read when present)`,
  },
  { operation: 'finalizePayout', side: 'answer', field: 'amount', unit: 'major', evidence: PAYOUT_MAJOR },
  {
    operation: 'finalizePayout',
    side: 'answer',
    field: 'centFees',
    unit: 'minor',
    evidence: 'PA "Payout transaction": centFees (minor), read when present',
  },
  {
    operation: 'finalizePayout',
    side: 'answer',
    field: 'fees',
    unit: 'major',
    evidence: 'PA "Payout transaction": fees "number or string", as amount',
  },
  {
    operation: 'finalizePayout',
    side: 'answer',
    field: 'payoutAmount',
    unit: 'major',
    evidence:
      'PA "Payout transaction": payoutAmount "amount paid to the destination" in payoutCurrency, beside the major amount',
  },
  { operation: 'getTransaction', side: 'answer', field: 'centAmount', unit: 'minor', evidence: PAYOUT_CENT },
  { operation: 'getTransaction', side: 'answer', field: 'amount', unit: 'major', evidence: GET_TX },
  {
    operation: 'getTransaction',
    side: 'answer',
    field: 'centFees',
    unit: 'minor',
    evidence: 'PA "Payout transaction": centFees (minor), read when present',
  },
  { operation: 'getTransaction', side: 'answer', field: 'fees', unit: 'major', evidence: GET_TX },
  { operation: 'getTransaction', side: 'answer', field: 'payoutAmount', unit: 'major', evidence: GET_TX },
  { operation: 'getTransaction', side: 'answer', field: 'balanceBefore', unit: 'major', evidence: GET_TX },
  { operation: 'getTransaction', side: 'answer', field: 'balanceAfter', unit: 'major', evidence: GET_TX },
  // ---- Swaps ----
  {
    operation: 'initializeSwap',
    side: 'request',
    field: 'amount',
    unit: 'SWAP_AMOUNT_UNIT',
    evidence:
      'PA "Swaps": amount "(string; the sample sends a number)", no unit given; the samples answer amount 10 with sourceAmount "10", usdAmount "10", targetAmount "11500.00" at rate 1150, and finalize amount 10 / centAmount 1000: major',
  },
  {
    operation: 'initializeSwap',
    side: 'answer',
    field: 'sourceAmount',
    unit: 'major',
    evidence:
      'PA "Swap quote": decimal strings; sample targetAmount "11500.00" = 10 × rate 1150 with two decimals, finalize centAmount 1000 for amount 10. Read as major whatever SWAP_AMOUNT_UNIT says, so a provider reading the request in the other unit is caught by the echo check',
  },
  {
    operation: 'initializeSwap',
    side: 'answer',
    field: 'targetAmount',
    unit: 'major',
    evidence: 'PA "Swap quote": sample targetAmount "11500.00" for 10 at rate 1150',
  },
  {
    operation: 'initializeSwap',
    side: 'answer',
    field: 'fee',
    unit: 'major',
    evidence: 'PA "Swap quote": fee a decimal string beside sourceAmount (major)',
  },
  {
    operation: 'finalizeSwap',
    side: 'answer',
    field: 'centAmount',
    unit: 'minor',
    evidence: 'PA "Swap transaction": centAmount "minor units" (sample 1000 for amount 10)',
  },
  {
    operation: 'finalizeSwap',
    side: 'answer',
    field: 'amount',
    unit: 'major',
    evidence: 'PA "Swap transaction": sample amount 10 beside centAmount 1000',
  },
  {
    operation: 'finalizeSwap',
    side: 'answer',
    field: 'centFees',
    unit: 'minor',
    evidence: 'PA "Swap transaction": "fees, centFees" as amount, centAmount',
  },
  {
    operation: 'finalizeSwap',
    side: 'answer',
    field: 'fees',
    unit: 'major',
    evidence: 'PA "Swap transaction": "fees, centFees" as amount, centAmount',
  },
  {
    operation: 'finalizeSwap',
    side: 'answer',
    field: 'balanceAfter',
    unit: 'major',
    evidence: 'PA "Swap transaction": balanceAfter a number beside the major amount (unit not stated)',
  },
  // ---- Cards ----
  {
    operation: 'createCard',
    side: 'request',
    field: 'amount',
    unit: 'minor',
    evidence: `${SENT_MINOR}; PA "Virtual cards": top-up amount "in cents"`,
  },
  {
    operation: 'createCard',
    side: 'answer',
    field: 'centAmount',
    unit: 'minor',
    evidence: `PA "Virtual card": the creation answer carries no amount; if it ever does: ${CARD_TX_MINOR}`,
  },
  {
    operation: 'createCard',
    side: 'answer',
    field: 'amount',
    unit: 'major',
    evidence: `PA "Virtual card": the creation answer carries no amount; if it ever does: ${CARD_TX_MAJOR}`,
  },
  ...(['freezeCard', 'unfreezeCard', 'terminateCard'] as const).map(
    (operation) =>
      ({
        operation,
        side: 'answer',
        field: 'balance',
        unit: 'major',
        evidence: `PA "Virtual card": balance "number", unit not stated; read like the card transaction amount (${CARD_TX_MAJOR})`,
      }) as const,
  ),
  {
    operation: 'topUpCard',
    side: 'request',
    field: 'amount',
    unit: 'minor',
    evidence: 'PA "Virtual cards" topup: "amount (in cents …)"; PW "Card top-up: … sent in cents"',
  },
  { operation: 'topUpCard', side: 'answer', field: 'centAmount', unit: 'minor', evidence: CARD_TX_MINOR },
  { operation: 'topUpCard', side: 'answer', field: 'amount', unit: 'major', evidence: CARD_TX_MAJOR },
  {
    operation: 'withdrawFromCard',
    side: 'request',
    field: 'amount',
    unit: 'minor',
    evidence: `${SENT_MINOR}; PA "Virtual cards" withdraw: amount (int32)`,
  },
  { operation: 'withdrawFromCard', side: 'answer', field: 'centAmount', unit: 'minor', evidence: CARD_TX_MINOR },
  { operation: 'withdrawFromCard', side: 'answer', field: 'amount', unit: 'major', evidence: CARD_TX_MAJOR },
  { operation: 'listCardTransactions', side: 'answer', field: 'centAmount', unit: 'minor', evidence: CARD_TX_MINOR },
  { operation: 'listCardTransactions', side: 'answer', field: 'amount', unit: 'major', evidence: CARD_TX_MAJOR },
  // ---- Payout and deposit events ----
  {
    operation: 'payout.transfer.*',
    side: 'event',
    field: 'amount',
    unit: 'major',
    evidence:
      'PW "Event names": payout events carry "amount as a decimal string" beside fees; PW "Other documented rules": "payouts answer `amount` and `centAmount`" (amount major)',
  },
  {
    operation: 'transaction.deposit.success',
    side: 'event',
    field: 'amount',
    unit: 'major',
    evidence:
      'PW "Event names": deposit "data fields all strings"; PW "Other documented rules": "a collection of 65000 NGN kobo answers `amount: 650`"',
  },
  // ---- Card events ----
  {
    operation: 'virtualcard.topup.*',
    side: 'event',
    field: 'amount',
    unit: 'CARD_EVENT_AMOUNT_UNIT',
    evidence: CARD_EVENT,
  },
  {
    operation: 'virtualcard.withdrawal.*',
    side: 'event',
    field: 'amount',
    unit: 'CARD_EVENT_AMOUNT_UNIT',
    evidence: CARD_EVENT,
  },
  {
    operation: 'virtualcard.transaction.*',
    side: 'event',
    field: 'amount',
    unit: 'CARD_EVENT_AMOUNT_UNIT',
    evidence: CARD_EVENT,
  },
] as const satisfies readonly AmountUnitRow[];

type Row = (typeof AMOUNT_UNITS)[number];
/** Operations (and card-event families) the table knows. */
export type UnitOperation = Row['operation'];
/** Sides an operation has rows for. */
export type UnitSide<O extends UnitOperation> = Extract<Row, { operation: O }>['side'];
/** Fields an operation has rows for on a side. */
export type UnitField<O extends UnitOperation, S extends string> = Extract<Row, { operation: O; side: S }>['field'];

/**
 * The unit of `field` on `side` of `operation`, from the table; a setting row resolves through
 * `settings`. Throws (a programming error, caught by the tests) for a row that is not in the
 * table, or a setting row asked without settings.
 */
export function unitOf<O extends UnitOperation, S extends UnitSide<O>>(
  operation: O,
  side: S,
  field: UnitField<O, S>,
  settings?: AmountUnitSettings,
): AmountUnit {
  const row = (AMOUNT_UNITS as readonly AmountUnitRow[]).find(
    (r) => r.operation === operation && r.side === side && r.field === field,
  );
  if (!row) throw new Error(`no unit row for ${operation} ${side} ${String(field)}`);
  if (row.unit === 'major' || row.unit === 'minor') return row.unit;
  if (!settings) throw new Error(`${operation} ${side} ${String(field)} needs the setting ${row.unit}`);
  return settings[row.unit];
}

/**
 * Minor units → the JSON value to send in `unit`: minor → an integer number (65000n → 65000);
 * major → the exact major decimal as a number when a double holds it exactly (10000n USD → 100,
 * 10050n USD → 100.5), else as a decimal string (1n BTC → "0.00000001").
 * @throws ValidationError beyond the largest safe JSON integer, or for an unknown currency.
 */
export function toWireAmount(minor: bigint, currency: string, unit: AmountUnit): number | string {
  if (unit === 'minor') return minorToNumber(minor);
  let text = formatMajor(minor, currency);
  if (text.includes('.')) text = text.replace(/0+$/, '').replace(/\.$/, '');
  const n = Number(text);
  return Math.abs(n) <= Number.MAX_SAFE_INTEGER && String(n) === text ? n : text;
}

/** The largest value of an int32 field (2^31 − 1). */
export const WIRE_INT32_MAX = 2_147_483_647n;

/**
 * The largest amount, in minor units of `currency`, whose wire value in `unit` fits an int32
 * `amount`: 2,147,483,647 minor units, or 2,147,483,647 major units (× 10^exponent) in major.
 * @throws ValidationError for an unknown currency.
 */
export function int32AmountMaxMinor(currency: string, unit: AmountUnit): bigint {
  const exponent = currencyExponent(currency);
  return unit === 'minor' ? WIRE_INT32_MAX : WIRE_INT32_MAX * 10n ** BigInt(exponent);
}

/**
 * The largest amount, in minor units, that `operation`'s int32 `amount` takes in each of
 * `currencies` (the smallest of int32AmountMaxMinor over them, in the unit table's unit): the bound
 * a request body states with `@Max`, so that the API description says it (2,147,483,647 while
 * the table sends minor units). ProviderClient.checkAmountFits checks the exact per-currency bound.
 */
export function int32AmountBound(
  operation: 'initializePayout' | 'withdrawFromCard',
  currencies: readonly string[],
): number {
  const unit = unitOf(operation, 'request', 'amount');
  const bounds = currencies.map((currency) => int32AmountMaxMinor(currency, unit));
  return Number(bounds.reduce((low, b) => (b < low ? b : low)));
}

/**
 * A wire amount in `unit` → minor units of `currency`: major "650" NGN → 65000n, minor 65000 → 65000n.
 * @throws ValidationError for a malformed value, or finer digits than the currency (rounding `reject`).
 */
export function fromWireAmount(
  value: string | number,
  currency: string,
  unit: AmountUnit,
  rounding: Rounding = 'reject',
  field = 'amount',
): bigint {
  return unit === 'major' ? toMinorUnits(value, currency, rounding, field) : parseMinorUnits(value, rounding, field);
}

/**
 * The validated unit settings of one gateway (from src/config/env.ts via ProviderModule), for the
 * code outside `src/provider` that reads provider amounts: the card-event handlers.
 */
export class ProviderUnits {
  readonly settings: Readonly<AmountUnitSettings>;

  constructor(settings: Partial<AmountUnitSettings> = {}) {
    this.settings = Object.freeze({ ...DEFAULT_UNIT_SETTINGS, ...settings });
  }

  /**
   * A card event's `amount` → USD minor units, in the unit the table gives the event's family
   * (CARD_EVENT_AMOUNT_UNIT): major 25.5 → 2550n; minor 2550 → 2550n.
   * @throws ValidationError for a malformed value (or sub-cent digits in major).
   */
  cardEventAmountToMinor(event: string, value: string | number): bigint {
    const family = event.startsWith('virtualcard.topup.')
      ? 'virtualcard.topup.*'
      : event.startsWith('virtualcard.withdrawal.')
        ? 'virtualcard.withdrawal.*'
        : 'virtualcard.transaction.*';
    return fromWireAmount(value, 'USD', unitOf(family, 'event', 'amount', this.settings));
  }
}
