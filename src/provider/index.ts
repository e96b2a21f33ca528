/** Public surface of the provider anti-corruption layer: the client, its module and the normalised models. */
export { ProviderClient } from './provider.client';
export type { ProviderCallOutcome, ProviderClientOptions, ProviderLogger } from './provider.client';
export { nestProviderLogger, ProviderModule } from './provider.module';
export { ProviderResilience } from './provider-resilience';
export type { BreakerState, FastFailureReason, ProviderResilienceSettings } from './provider-resilience';
export { CARD_CURRENCY, maskCardNumbers, stripCardSecrets } from './provider.mappers';
export { answerMismatch, differsByUnitFactor, ProviderAmountMismatchError, UNIT_HINT } from './answer-checks';
export type { MoneyAmount } from './answer-checks';
export { callbackAmountMismatch, LEDGER_CALLBACK_EVENTS } from './ledger-events.mapper';
export type { LedgerCallbackEvent } from './ledger-events.mapper';
export {
  AMOUNT_UNITS,
  DEFAULT_UNIT_SETTINGS,
  fromWireAmount,
  int32AmountBound,
  ProviderUnits,
  toWireAmount,
  unitOf,
} from './provider-units';
export type { AmountUnit, AmountUnitRow, AmountUnitSettings } from './provider-units';
export type * from './provider.models';
export {
  CARD_CREATED_EVENTS,
  CARD_EVENTS,
  CARD_KYC_EVENTS,
  CARD_MONEY_EVENTS,
  CARD_SPEND_EVENTS,
  cardMovementOfListing,
  readCardEvent,
} from './card-events.mapper';
