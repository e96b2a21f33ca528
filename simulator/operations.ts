/** The stable names of the provider's 20 operations, used in the call log and in faults. */
export const OPERATIONS = [
  'createCustomer',
  'updateCustomer',
  'getCustomer',
  'initializeCollection',
  'createBeneficiary',
  'getSupportedCountry',
  'initializePayout',
  'finalizePayout',
  'initializeSwap',
  'finalizeSwap',
  'createVirtualAccount',
  'registerCardUser',
  'createCard',
  'freezeCard',
  'unfreezeCard',
  'terminateCard',
  'topUpCard',
  'withdrawFromCard',
  'listCardTransactions',
  'getTransaction',
] as const;

export type OperationName = (typeof OPERATIONS)[number];

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The provider operation a route serves (call log and faults). */
    operation?: OperationName;
  }
}

/** Route options naming the operation: `api.post(path, op('createCustomer'), handler)`. */
export const op = (operation: OperationName) => ({ config: { operation } });
