import { countryOfDialCode, findCountry } from '../countries';
import { cardCreatedEvent, cardTransactionEvent, kycEvent } from '../events';
import { cardNumber, randomDigits } from '../generate';
import { badRequest, bodyOf, envelope, notFound, optString, requireFields, str } from '../http';
import { INT32_MAX, isFailureAmount, parseMinor } from '../money';
import { op, type OperationName } from '../operations';
import type { Card, CardTransaction, CardUser, SimulatorState } from '../state';
import { cardCreationView, cardTransactionView, cardUserView, cardView, pageMeta } from '../views';
import { param, type RouteModule } from './context';

/** Card top-up bounds, USD cents (docs/provider.md#limits: 3 to 2,500 USD). */
export const TOPUP_MIN_CENTS = 300n;
export const TOPUP_MAX_CENTS = 250_000n;

/** Card-number prefix per supported brand. */
const BRAND_PREFIX: Record<string, string> = { visa: '4', mastercard: '5399' };

/** The card with this id, else 404. */
export function cardById(state: SimulatorState, id: string): Card {
  const card = state.cards.get(id);
  if (!card) throw notFound('Card');
  return card;
}

/** Why a card creation, top-up or withdrawal of a trigger amount fails (money.ts `isFailureAmount`). */
export const CARD_FAILURE_REASON = 'Declined by the card issuer (simulated)';
/** Why a card user whose id number ends in 13 fails KYC. */
export const KYC_FAILURE_REASON = 'Identity could not be verified (simulated)';

/** Records a card transaction (`amount` in cents) and returns it. */
export function addCardTransaction(
  state: SimulatorState,
  card: Card,
  fields: Pick<CardTransaction, 'reference' | 'amount' | 'method' | 'type' | 'status' | 'narrative'> &
    Partial<Pick<CardTransaction, 'reason' | 'callbackUrl'>>,
): CardTransaction {
  const txn: CardTransaction = { ...state.stamp(), seq: state.nextSeq(), cardId: card.id, ...fields };
  state.cardTransactions.push(txn);
  return txn;
}

/** A positive integer query value (number or numeric string), `fallback` when absent; 400 otherwise. */
function positiveInt(value: unknown, name: string, fallback: number, max = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > max) throw badRequest(`${name} must be an integer between 1 and ${max}`);
  return n;
}

/**
 * registerCardUser, createCard, freeze/unfreeze/terminate, topUpCard, withdrawFromCard,
 * listCardTransactions. Callbacks (to the request's callbackUrl if it sent one, else the account
 * webhook URL): `virtualcard.user.kyc.*` after registration (`kycCallbackDelayMs`),
 * `virtualcard.created.*` when a card's creation completes, `virtualcard.topup|withdrawal.*` when a
 * card transaction settles. Amounts whose dollars end in 13 fail; id numbers ending in 13 fail KYC.
 */
export const cardRoutes: RouteModule = (api, { state, config, callbacks }) => {
  api.post('/virtualcards/registercarduser', op('registerCardUser'), async (request) => {
    const body = bodyOf(request);
    requireFields(body, ['customerEmail', 'idType', 'idNumber']);
    const customer = state.requireCustomer(body.customerEmail);
    const country = findCountry(body.country) ?? countryOfDialCode(customer.countryCode);
    if (country?.code === 'NG' && !optString(body, 'bvn')) throw badRequest('bvn is required for Nigerian customers');
    if (country?.code === 'GH' && !optString(body, 'dateOfBirth'))
      throw badRequest('dateOfBirth is required for Ghanaian customers');
    const existing = state.cardUsers.get(customer.id);
    const failsKyc = String(body.idNumber).endsWith('13');
    const user: CardUser = {
      ...(existing ?? state.stamp()),
      updatedAt: state.iso(),
      customerId: customer.id,
      country: country?.code ?? null,
      firstName: optString(body, 'firstName') ?? customer.firstName,
      lastName: optString(body, 'lastName') ?? customer.lastName,
      idType: optString(body, 'idType') ?? null,
      phoneNumber: optString(body, 'phoneNumber') ?? customer.phone,
      status: failsKyc ? 'pending' : 'active',
      callbackUrl: optString(body, 'callbackUrl'),
    };
    state.cardUsers.set(customer.id, user);
    // KYC passes at once (the callback follows); a failing id number is pending, then failed.
    if (failsKyc) {
      state.later(config.kycCallbackDelayMs, () => {
        if (user.status !== 'pending' || state.cardUsers.get(customer.id) !== user) return;
        user.status = 'failed';
        state.touch(user);
        const { event, data } = kycEvent(user, customer.email, KYC_FAILURE_REASON);
        callbacks.dispatch(event, data, { url: user.callbackUrl });
      });
    } else {
      const { event, data } = kycEvent(user, customer.email);
      callbacks.dispatch(event, data, { url: user.callbackUrl, afterMs: config.kycCallbackDelayMs });
    }
    return envelope(cardUserView(user, customer.email), 'Card user registered successfully');
  });

  api.post('/virtualcards/create', op('createCard'), async (request) => {
    const body = bodyOf(request);
    requireFields(body, ['customerEmail', 'reference']);
    const customer = state.requireCustomer(body.customerEmail);
    const user = state.cardUsers.get(customer.id);
    if (!user) throw badRequest('Customer is not registered as a card user');
    if (user.status !== 'active') throw badRequest(`Card user KYC is ${user.status}`);
    const cardBrand = (optString(body, 'cardBrand') ?? 'visa').toLowerCase();
    const prefix = BRAND_PREFIX[cardBrand];
    if (!prefix) throw badRequest(`cardBrand must be one of ${Object.keys(BRAND_PREFIX).join(', ')}`);
    const amount = body.amount === undefined ? 0n : parseMinor(body.amount, true);
    if (amount === null || amount > INT32_MAX) throw badRequest('amount must be a non-negative integer in cents');
    const reference = str(body, 'reference');
    state.ensureBalance('USD', amount);
    state.claimReference('card', reference);
    state.debit('USD', amount);
    const expiry = new Date(state.now());
    expiry.setUTCFullYear(expiry.getUTCFullYear() + 3);
    const name = `${optString(body, 'firstName') ?? customer.firstName ?? ''} ${optString(body, 'lastName') ?? customer.lastName ?? ''}`;
    const card: Card = {
      ...state.stamp(),
      customerId: customer.id,
      cardUserId: user.id,
      reference,
      cardType: optString(body, 'cardType') ?? 'virtual',
      cardBrand,
      cardName: name.trim().toUpperCase(),
      cardNumber: cardNumber(prefix),
      cvv2: randomDigits(3),
      expiry: expiry.toISOString(),
      valid: `${String(expiry.getUTCMonth() + 1).padStart(2, '0')}/${expiry.getUTCFullYear()}`,
      status: 'pending',
      createdStatus: 'pending',
      balance: 0n,
      initialAmount: amount,
      callbackUrl: optString(body, 'callbackUrl') ?? user.callbackUrl,
    };
    state.cards.set(card.id, card);
    state.later(config.cardCreateDelayMs, () => {
      const failed = isFailureAmount(card.initialAmount, 'USD');
      if (failed) {
        card.createdStatus = 'failed';
        card.status = 'failed';
        state.credit('USD', card.initialAmount);
      } else {
        card.createdStatus = 'success';
        card.balance += card.initialAmount;
        if (card.status === 'pending') card.status = 'active';
      }
      state.touch(card);
      const { event, data } = cardCreatedEvent(card, failed ? CARD_FAILURE_REASON : undefined);
      callbacks.dispatch(event, data, { url: card.callbackUrl });
    });
    return envelope(cardCreationView(card), 'Card creation in progress');
  });

  const cardAction = (operation: OperationName, path: string, from: Card['status'][], to: Card['status']) =>
    api.post(path, op(operation), async (request) => {
      const card = cardById(state, str(bodyOf(request), 'cardId'));
      if (!from.includes(card.status)) throw badRequest(`Card is ${card.status}`);
      card.status = to;
      state.touch(card);
      return envelope(cardView(state, card), `Card ${to} successfully`);
    });
  cardAction('freezeCard', '/virtualcards/freeze', ['active'], 'frozen');
  cardAction('unfreezeCard', '/virtualcards/unfreeze', ['frozen'], 'active');
  cardAction('terminateCard', '/virtualcards/terminate', ['pending', 'active', 'frozen'], 'terminated');

  // Top-up: wallet debited now, card credited on settle. Withdrawal: card debited now, wallet credited on settle.
  const cardMoney = (operation: OperationName, path: string, method: 'topup' | 'withdrawal') =>
    api.post(path, op(operation), async (request) => {
      const body = bodyOf(request);
      requireFields(body, ['amount', 'cardId', 'reference']);
      const card = cardById(state, str(body, 'cardId'));
      if (card.status !== 'active') throw badRequest(`Card is ${card.status}`);
      const amount = parseMinor(body.amount);
      if (amount === null || amount > INT32_MAX) throw badRequest('amount must be a positive integer in cents');
      if (method === 'topup' && (amount < TOPUP_MIN_CENTS || amount > TOPUP_MAX_CENTS)) {
        throw badRequest('amount must be between 300 and 250000 cents (3 to 2,500 USD)');
      }
      if (method === 'topup') state.ensureBalance('USD', amount);
      if (method === 'withdrawal' && amount > card.balance) throw badRequest('Insufficient card balance');
      const reference = str(body, 'reference');
      state.claimReference('cardTransaction', reference);
      if (method === 'topup') state.debit('USD', amount);
      else card.balance -= amount;
      const txn = addCardTransaction(state, card, {
        reference,
        amount,
        method,
        type: 'credit',
        status: 'pending',
        narrative: null,
        callbackUrl: optString(body, 'callbackUrl') ?? card.callbackUrl,
      });
      // Settles as success, or failed for a trigger amount: then the money goes back where it came from.
      state.later(config.cardTxnSettleDelayMs, () => {
        const failed = isFailureAmount(amount, 'USD');
        txn.status = failed ? 'failed' : 'success';
        if (failed) txn.reason = CARD_FAILURE_REASON;
        state.touch(txn);
        // A settled top-up lands on the card, a failed one back in the wallet; a withdrawal the other way round.
        const toCard = method === 'topup' ? !failed : failed;
        if (toCard) card.balance += amount;
        else state.credit('USD', amount);
        const { event, data } = cardTransactionEvent(txn);
        callbacks.dispatch(event, data, { url: txn.callbackUrl });
      });
      return envelope(
        cardTransactionView(txn),
        method === 'topup' ? 'Card top-up in progress' : 'Card withdrawal in progress',
      );
    });
  cardMoney('topUpCard', '/virtualcards/topup', 'topup');
  cardMoney('withdrawFromCard', '/virtualcards/withdraw', 'withdrawal');

  api.get('/virtualcards/cards/:card_id/transactions', op('listCardTransactions'), async (request) => {
    const card = cardById(state, param(request, 'card_id'));
    const query = request.query as Record<string, unknown>;
    const order = String(query.order ?? 'ASC').toUpperCase();
    if (order !== 'ASC' && order !== 'DESC') throw badRequest('order must be ASC or DESC');
    const page = positiveInt(query.page, 'page', 1);
    const take = positiveInt(query.take, 'take', 10, 100);
    const all = state.cardTransactions
      .filter((t) => t.cardId === card.id)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.seq - b.seq);
    if (order === 'DESC') all.reverse();
    return envelope(
      {
        cardTransactions: all.slice((page - 1) * take, page * take).map((t) => cardTransactionView(t, true)),
        meta: pageMeta(page, take, all.length),
      },
      'Card transactions retrieved successfully',
    );
  });
};
