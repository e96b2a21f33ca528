/**
 * The provider's card dialect → the gateway's terms: card callbacks (`virtualcard.*`, with their
 * field names, status spellings and amount unit) become a typed `CardEvent`, and a card
 * transaction from the listing or from a spend callback becomes a `CardMovement` through the one
 * builder `cardMovementOf`. Nothing outside `src/provider` reads a card event's `data`.
 */
import type { ProviderUnits } from './provider-units';
import { CARD_CURRENCY } from './provider.mappers';
import type {
  CardEvent,
  CardEventDetails,
  CardMovement,
  CardMovementKind,
  CardMovementStatus,
  ProviderCardTransaction,
} from './provider.models';
import type { WireCardCreatedEvent, WireCardKycEvent, WireCardMoneyEvent } from './provider.types';

type Data = Record<string, unknown>;

/** Card creation results (id, reference, status, createdStatus / reason). */
export const CARD_CREATED_EVENTS = ['virtualcard.created.success', 'virtualcard.created.failed'] as const;

/** Settlements of the gateway's top-ups and withdrawals (id, cardId, amount, status, reference, narrative). */
export const CARD_MONEY_EVENTS = [
  'virtualcard.topup.success',
  'virtualcard.topup.failed',
  'virtualcard.withdrawal.success',
  'virtualcard.withdrawal.failed',
] as const;

/** Card spending the provider starts (id, cardId, amount, narrative, status, reason). */
export const CARD_SPEND_EVENTS = [
  'virtualcard.transaction.debit',
  'virtualcard.transaction.credit',
  'virtualcard.transaction.reversed',
  'virtualcard.transaction.declined',
] as const;

/** KYC results of a card holder (id = the provider's card user id, customerEmail, status, reason). */
export const CARD_KYC_EVENTS = ['virtualcard.user.kyc.success', 'virtualcard.user.kyc.failed'] as const;

/** Every card event name `readCardEvent` reads. */
export const CARD_EVENTS: readonly string[] = [
  ...CARD_CREATED_EVENTS,
  ...CARD_MONEY_EVENTS,
  ...CARD_SPEND_EVENTS,
  ...CARD_KYC_EVENTS,
];

/**
 * The gateway's status of a provider card-transaction status (listings, answers and events, any
 * case); null for a spelling the provider documents nowhere (left alone rather than guessed).
 */
export function cardMovementStatus(status: string | null | undefined): CardMovementStatus | null {
  switch ((status ?? '').toLowerCase()) {
    case 'pending':
    case 'processing':
      return 'pending';
    case 'success':
    case 'successful':
    case 'completed':
      return 'success';
    case 'failed':
    case 'declined':
      return 'failed';
    case 'reversed':
      return 'reversed';
    default:
      return null;
  }
}

/** The fields of a provider card transaction a movement is built from. */
export type CardMovementRecord = Pick<
  ProviderCardTransaction,
  'id' | 'method' | 'type' | 'narrative' | 'currency' | 'amountMinor' | 'createdAt' | 'raw'
> & { reference: string | null };

/**
 * The one builder of a `CardMovement`. The kind comes from the provider's `method` (`topup`,
 * `withdrawal`, anything else a spend); the direction from the kind — a top-up credits the card,
 * a withdrawal debits it, whatever its `type` says (`credit` for both in the provider's samples) —
 * and for a spend from `type` (`credit`, else a debit).
 */
export function cardMovementOf(
  record: CardMovementRecord,
  status: CardMovementStatus,
  failureReason: string | null = null,
): CardMovement {
  const kind: CardMovementKind =
    record.method === 'topup' ? 'card_topup' : record.method === 'withdrawal' ? 'card_withdrawal' : 'card_spend';
  const direction =
    kind === 'card_topup'
      ? 'credit'
      : kind === 'card_withdrawal'
        ? 'debit'
        : record.type === 'credit'
          ? 'credit'
          : 'debit';
  return {
    providerId: record.id,
    reference: record.reference,
    kind,
    direction,
    status,
    amountMinor: record.amountMinor,
    currency: record.currency,
    narrative: record.narrative,
    failureReason,
    createdAt: record.createdAt,
    raw: record.raw,
  };
}

/** A row of the provider's card-transaction listing as a movement; null when its status is unknown. */
export function cardMovementOfListing(item: ProviderCardTransaction): CardMovement | null {
  return item.status ? cardMovementOf(item, item.status) : null;
}

/** A string field of an event's data, trimmed (ids may come as numbers: never validated as UUIDs). */
function text<T>(data: Data, key: keyof T & string): string | null {
  const value = data[key];
  if (typeof value === 'string' && value.trim()) return value.trim();
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return null;
}

function present(data: Data, key: string): boolean {
  return data[key] !== undefined && data[key] !== null;
}

/**
 * Reads a card callback: `readCardEvent(name, data)` → `CardEvent`, or null for a name that is
 * not a card event. Amounts are read in the unit the provider unit table gives card events
 * (`ProviderUnits.cardEventAmountToMinor`: the setting CARD_EVENT_AMOUNT_UNIT).
 * @throws ValidationError for a malformed `amount` (the event is then `failed` and retried).
 */
export function readCardEvent(units: ProviderUnits, name: string, data: Data): CardEvent | null {
  const amount = () => units.cardEventAmountToMinor(name, data.amount as string | number);
  switch (name) {
    case 'virtualcard.created.success':
    case 'virtualcard.created.failed': {
      const success = name === 'virtualcard.created.success';
      const t = (key: keyof WireCardCreatedEvent) => text<WireCardCreatedEvent>(data, key);
      return {
        type: 'card.created',
        result: success ? 'success' : 'failed',
        // A creation still in progress is no result: a success naming it `pending`.
        inProgress: success && (t('createdStatus') ?? t('status'))?.toLowerCase() === 'pending',
        reason: t('reason'),
        details: success ? createdDetails(data) : null,
      };
    }
    case 'virtualcard.topup.success':
    case 'virtualcard.topup.failed':
    case 'virtualcard.withdrawal.success':
    case 'virtualcard.withdrawal.failed': {
      const t = (key: keyof WireCardMoneyEvent) => text<WireCardMoneyEvent>(data, key);
      return {
        type: name.startsWith('virtualcard.topup.') ? 'card.topup' : 'card.withdrawal',
        result: name.endsWith('.success') ? 'success' : 'failed',
        status: cardMovementStatus(t('status')),
        amountMinor: present(data, 'amount') ? amount() : null,
        reason: t('reason') ?? t('narrative'),
      };
    }
    case 'virtualcard.transaction.reversed': {
      const t = (key: keyof WireCardMoneyEvent) => text<WireCardMoneyEvent>(data, key);
      return {
        type: 'card.spend_reversed',
        cardProviderId: t('cardId'),
        providerId: t('id'),
        reference: t('reference'),
      };
    }
    case 'virtualcard.transaction.debit':
    case 'virtualcard.transaction.credit':
    case 'virtualcard.transaction.declined': {
      const t = (key: keyof WireCardMoneyEvent) => text<WireCardMoneyEvent>(data, key);
      const id = t('id');
      const declined = name === 'virtualcard.transaction.declined';
      // A spend's own status, if it states a known one; a reversal comes as its own event.
      const stated = cardMovementStatus(t('status'));
      const status: CardMovementStatus = declined
        ? 'failed'
        : stated === null || stated === 'reversed'
          ? 'success'
          : stated;
      const movement = id
        ? cardMovementOf(
            {
              id,
              reference: t('reference'),
              method: null,
              type: name === 'virtualcard.transaction.credit' ? 'credit' : 'debit',
              narrative: t('narrative'),
              currency: CARD_CURRENCY,
              // A decline may name no amount: nothing moved either way.
              amountMinor: declined && !present(data, 'amount') ? 0n : amount(),
              createdAt: null,
              raw: data,
            },
            status,
            declined ? (t('reason') ?? 'declined') : null,
          )
        : null;
      return { type: 'card.spend', cardProviderId: t('cardId'), movement };
    }
    case 'virtualcard.user.kyc.success':
    case 'virtualcard.user.kyc.failed': {
      const t = (key: keyof WireCardKycEvent) => text<WireCardKycEvent>(data, key);
      return {
        type: 'card_holder.kyc',
        result: name === 'virtualcard.user.kyc.success' ? 'success' : 'failed',
        providerUserId: t('id'),
        email: t('customerEmail')?.toLowerCase() ?? null,
        reason: t('reason'),
      };
    }
    default:
      return null;
  }
}

/** The card details of a creation success (brand lower-case; a billing address only if it is an object). */
function createdDetails(data: Data): CardEventDetails {
  const t = (key: keyof WireCardCreatedEvent) => text<WireCardCreatedEvent>(data, key);
  const expiry = t('expiry');
  const address = data.billingAddress;
  return {
    last4: t('last4'),
    brand: t('cardBrand')?.toLowerCase() ?? null,
    nameOnCard: t('cardName'),
    validThru: t('valid'),
    expiresAt: expiry ? new Date(expiry) : null,
    billingAddress: address && typeof address === 'object' ? (address as Data) : null,
  };
}
