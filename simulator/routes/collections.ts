import { COLLECTION_LIMITS } from '../countries';
import { randomDigits } from '../generate';
import { badRequest, type Body, bodyOf, envelope, optString, requireFields, str } from '../http';
import { feeOf, parseMinor, scale } from '../money';
import { op } from '../operations';
import type { Collection } from '../state';
import { collectionView } from '../views';
import type { RouteModule } from './context';

/** Collection fee: 1.5% of the amount (150 basis points), rounded half up. */
export const COLLECTION_FEE_BP = 150n;

function payloadOf(body: Body): { type: string; accountName: string } {
  const payload = body.payload;
  if (!payload || typeof payload !== 'object' || Array.isArray(payload)) throw badRequest('payload must be an object');
  const p = payload as Body;
  return { type: str(p, 'type'), accountName: str(p, 'accountName') };
}

/** initializeCollection: an account detail to pay `amount` (minor units) into, `processing`. */
export const collectionRoutes: RouteModule = (api, { state, config }) => {
  api.post('/wallets/collections/initialize', op('initializeCollection'), async (request) => {
    const body = bodyOf(request);
    requireFields(body, ['country', 'currency', 'customerEmail', 'amount', 'reference', 'description', 'payload']);
    const customer = state.requireCustomer(body.customerEmail);
    const country = str(body, 'country').toUpperCase();
    const requestCurrency = str(body, 'currency');
    const currency = requestCurrency.toUpperCase();
    const limits = COLLECTION_LIMITS[country];
    if (!limits) throw badRequest(`Collections are not supported in ${country}`);
    if (limits.currency !== currency) throw badRequest(`currency must be ${limits.currency} for ${country}`);
    const amount = parseMinor(body.amount);
    if (amount === null) throw badRequest('amount must be a positive integer in minor units');
    if (amount < limits.min * scale(currency) || amount > limits.max * scale(currency)) {
      throw badRequest(`amount must be between ${limits.min} and ${limits.max} ${currency}`);
    }
    const payload = payloadOf(body);
    const reference = str(body, 'reference');
    state.claimReference('collection', reference);
    const collection: Collection = {
      ...state.stamp(),
      customerId: customer.id,
      reference,
      country,
      currency,
      requestCurrency,
      amount,
      fee: feeOf(amount, COLLECTION_FEE_BP),
      status: 'processing',
      accountName: payload.accountName,
      accountNumber: randomDigits(10),
      bankName: payload.type,
      description: str(body, 'description'),
      expiryInSeconds: config.collectionTtlSeconds,
      expiresAt: state.now() + config.collectionTtlSeconds * 1000,
      callbackUrl: optString(body, 'callbackUrl'),
    };
    state.collections.set(collection.id, collection);
    return envelope(collectionView(collection), 'Collection initialized successfully');
  });
};
