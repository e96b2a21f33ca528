import type { FieldError } from '../common/errors';
import { currencyExponent, formatMajor } from '../common/money';

/** Documented bounds of one country's collections, in MAJOR units of its currency. */
export interface CollectionLimit {
  currency: string;
  minMajor: bigint;
  maxMajor: bigint;
}

/**
 * Collection limits per country (docs/provider.md#limits:
 * NG 100–2,000,000 NGN; KE 20–145,000 KES; UG 500–4,000,000 UGX). The doc gives MAJOR units;
 * `collectionLimitProblems` compares in minor units. Countries not listed have no documented
 * bound: the provider decides.
 */
export const COLLECTION_LIMITS: Readonly<Record<string, CollectionLimit>> = Object.freeze({
  NG: { currency: 'NGN', minMajor: 100n, maxMajor: 2_000_000n },
  KE: { currency: 'KES', minMajor: 20n, maxMajor: 145_000n },
  UG: { currency: 'UGX', minMajor: 500n, maxMajor: 4_000_000n },
});

/** A limit's bounds in minor units of its currency: NG → 10000n … 200000000n kobo. */
export function limitInMinorUnits(limit: CollectionLimit): { min: bigint; max: bigint } {
  const scale = 10n ** BigInt(currencyExponent(limit.currency));
  return { min: limit.minMajor * scale, max: limit.maxMajor * scale };
}

/**
 * The limits in words for the API description, from COLLECTION_LIMITS:
 * `NG 10000–200000000 (100–2,000,000 NGN), KE …`.
 */
export function collectionLimitsInWords(): string {
  return Object.entries(COLLECTION_LIMITS)
    .map(([country, limit]) => {
      const { min, max } = limitInMinorUnits(limit);
      return `${country} ${min}–${max} (${formatMajor(min, limit.currency)}–${formatMajor(max, limit.currency)} ${limit.currency})`;
    })
    .join(', ');
}

/** The countries with documented limits and their currencies, in words: `NG in NGN, KE in KES, UG in UGX`. */
export function collectionCurrenciesInWords(): string {
  return Object.entries(COLLECTION_LIMITS)
    .map(([country, limit]) => `${country} in ${limit.currency}`)
    .join(', ');
}

/**
 * Checks a collection request against the documented limits, before the provider is called.
 * `country` and `currency` are upper-case codes; `amountMinor` is in minor units of `currency`.
 * Returns the failing fields (empty when the request is within bounds):
 * - `amount` when not a positive amount, or outside the country's bounds;
 * - `currency` when the country has documented limits in another currency (a collection in NG
 *   is in NGN: the doc states the NG limits in NGN and no other currency).
 * A country without documented limits yields no problem here.
 */
export function collectionLimitProblems(country: string, currency: string, amountMinor: bigint): FieldError[] {
  if (amountMinor <= 0n) return [{ field: 'amount', message: 'amount must be a positive integer of minor units' }];
  const limit = COLLECTION_LIMITS[country];
  if (!limit) return [];
  if (currency !== limit.currency) {
    return [{ field: 'currency', message: `collections in ${country} are in ${limit.currency}` }];
  }
  const { min, max } = limitInMinorUnits(limit);
  if (amountMinor < min || amountMinor > max) {
    return [
      {
        field: 'amount',
        message:
          `amount must be between ${formatMajor(min, currency)} and ${formatMajor(max, currency)} ${currency} ` +
          `(${min} to ${max} minor units) for collections in ${country}`,
      },
    ];
  }
  return [];
}
