import type { FastifyInstance } from 'fastify';
import { type FaultTable, parseFaults } from '../faults';
import { badRequest, bodyOf, notFound, optString } from '../http';
import { jsonInt, parseMinor } from '../money';
import { moneyRecordsView } from '../views';
import { adminCallbackRoutes } from './admin-callbacks';
import { adminMoveRoutes } from './admin-moves';
import type { RouteContext, SimulatorConfig } from './context';
import { transactionById } from './transactions';

/** What the admin routes receive: the route context plus the fault table of the /api/v1 routes. */
export interface AdminContext extends RouteContext {
  faults: FaultTable;
  /** The settings as built, restored by POST /__admin/reset. */
  initialConfig: SimulatorConfig;
}

/** Settings PUT /__admin/settings may change at run time, with their allowed values. */
const SETTINGS = { swapAmountUnit: ['major', 'minor'] } as const;

/**
 * The admin/test API under /__admin (no Bearer key): call log, faults, state, reset, flush, money
 * records and card secrets (for leak checks); the callback log and fault switches
 * (admin-callbacks.ts); and the moves the real provider makes on its own (admin-moves.ts).
 */
export function adminRoutes(app: FastifyInstance, ctx: AdminContext): void {
  const { state, faults, callbacks, config, initialConfig } = ctx;
  app.get('/__admin/calls', async (request) => {
    const { operation } = request.query as { operation?: string };
    return { calls: operation ? state.calls.filter((c) => c.operation === operation) : state.calls };
  });
  app.delete('/__admin/calls', async () => {
    state.calls = [];
    return { ok: true };
  });

  app.get('/__admin/faults', async () => ({ faults: faults.list() }));
  app.put('/__admin/faults', async (request) => {
    faults.set(parseFaults(request.body));
    return { faults: faults.list() };
  });
  app.delete('/__admin/faults', async () => {
    faults.clear();
    return { ok: true };
  });

  /** The run-time settings: `{swapAmountUnit}` (how initialize-swap reads `amount`: major or minor). */
  app.get('/__admin/settings', async () => ({ swapAmountUnit: config.swapAmountUnit }));
  app.put('/__admin/settings', async (request) => {
    const body = request.body;
    if (!body || typeof body !== 'object' || Array.isArray(body)) throw badRequest('settings must be an object');
    const problems: string[] = [];
    for (const [key, value] of Object.entries(body)) {
      const allowed = SETTINGS[key as keyof typeof SETTINGS] as readonly string[] | undefined;
      if (!allowed) problems.push(`${key} is not a setting`);
      else if (!allowed.includes(value as string)) problems.push(`${key} must be one of ${allowed.join(', ')}`);
    }
    if (problems.length) throw badRequest(problems.join('; '));
    Object.assign(config, body);
    return { swapAmountUnit: config.swapAmountUnit };
  });

  app.get('/__admin/state', async () => ({
    balances: Object.fromEntries([...state.balances].map(([currency, minor]) => [currency, jsonInt(minor)])),
    counts: state.counts(),
  }));
  /**
   * Funds a wallet: `POST /__admin/wallets/:currency/fund {amount}` adds `amount` minor units
   * (a positive integer) to the wallet and answers `{currency, before, after}` in minor units (as
   * /__admin/state: numbers, strings beyond 2^53). No callback: the real provider's funding arrives as a deposit this simulator does not
   * model. For benchmarks whose baseline spends the seed (bench/payouts.bench.ts) and for tests.
   */
  app.post('/__admin/wallets/:currency/fund', async (request) => {
    const currency = (request.params as { currency: string }).currency.toUpperCase();
    if (!state.balances.has(currency)) throw notFound('Wallet');
    const amount = parseMinor(bodyOf(request).amount);
    if (amount === null) throw badRequest('amount must be a positive integer in minor units');
    const { before, after } = state.credit(currency, amount);
    return { currency, before: jsonInt(before), after: jsonInt(after) };
  });
  /** Back to the seed: records, balances, call log, faults, settings, callback log and switches; pending callbacks abandoned. */
  app.post('/__admin/reset', async () => {
    state.reset();
    faults.clear();
    Object.assign(config, initialConfig);
    callbacks.cancel(true);
    return { ok: true };
  });
  /**
   * Runs every delayed change now (card creations, card settlements, payout completions), then cuts
   * every callback wait short, sends held callbacks and answers once every delivery is done:
   * `{ran: scheduled tasks run, callbacks: callbacks outstanding}`.
   */
  app.post('/__admin/flush', async () => {
    const ran = state.flushScheduled();
    return { ran, callbacks: await callbacks.flush() };
  });

  /**
   * Every money movement the simulator holds (payouts, swaps, collections, card fundings and card
   * transactions): `{records: [{id, kind, reference, status, amount, currency, …}]}`, amounts in
   * minor units as strings. For soak benchmarks that compare them with the gateway's ledger.
   */
  app.get('/__admin/records', async () => ({ records: moneyRecordsView(state) }));

  /**
   * The disagreement switch: `PUT /__admin/transactions/:id/disagree {status?, amount?, missing?}` makes
   * GET /transactions/:id answer that status (e.g. `failed`) and/or amount (minor units) for this
   * payout, collection or swap, or 404 with `missing: true`, leaving the record and balances as they
   * are; `DELETE` removes it. For reconciliation reports (status_mismatch, amount_mismatch,
   * missing_at_provider). POST /__admin/reset clears every switch.
   */
  app.put('/__admin/transactions/:id/disagree', async (request) => {
    const { id } = request.params as { id: string };
    state.disagreements.delete(id);
    if (!transactionById(state, id)) throw notFound('Transaction');
    const body = bodyOf(request);
    const status = optString(body, 'status');
    const amount = body.amount === undefined ? undefined : parseMinor(body.amount, true);
    const missing = body.missing === true;
    if (amount === null) throw badRequest('amount must be a non-negative integer in minor units');
    if (status === undefined && amount === undefined && !missing) {
      throw badRequest('name a status, an amount, or missing: true');
    }
    state.disagreements.set(id, { status, amount, missing });
    return { id, transaction: transactionById(state, id) ?? null };
  });
  app.delete('/__admin/transactions/:id/disagree', async (request) => {
    const { id } = request.params as { id: string };
    return { removed: state.disagreements.delete(id) };
  });

  /** `[{id, cardNumber, cvv2}]` of every card, so a test can look for them where they must never be. */
  app.get('/__admin/cards/secrets', async () =>
    [...state.cards.values()].map((c) => ({ id: c.id, cardNumber: c.cardNumber, cvv2: c.cvv2 })),
  );

  adminCallbackRoutes(app, ctx);
  adminMoveRoutes(app, ctx);
}
