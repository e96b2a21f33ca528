/** Public surface of the provider anti-corruption layer: the client, its module and the normalised models. */
export { ProviderClient } from './provider.client';
export type { ProviderCallOutcome, ProviderClientOptions, ProviderLogger } from './provider.client';
export { nestProviderLogger, ProviderModule } from './provider.module';
export {
  CARD_CURRENCY,
  CARD_EVENT_AMOUNT_UNIT,
  cardEventAmountToMinor,
  maskCardNumbers,
  stripCardSecrets,
} from './provider.mappers';
export type * from './provider.models';
