import { timingSafeEqual } from 'node:crypto';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { CallbackDispatcher, type CallbackFaults } from './callbacks';
import { type FaultMap, FaultTable, parseFaults, scaleAmount } from './faults';
import { errorBody, ProviderHttpError } from './http';
import type { AmountUnit } from './money';
import { adminRoutes } from './routes/admin';
import { cardRoutes } from './routes/cards';
import { collectionRoutes } from './routes/collections';
import type { RouteContext, SimulatorConfig } from './routes/context';
import { customerRoutes } from './routes/customers';
import { payoutRoutes } from './routes/payouts';
import { swapRoutes } from './routes/swaps';
import { transactionRoutes } from './routes/transactions';
import { virtualAccountRoutes } from './routes/virtual-accounts';
import { SimulatorState } from './state';

export { SimulatorState } from './state';
export type { Fault, FaultMap } from './faults';
export type { CallbackFaults, CallbackRecord } from './callbacks';

/** Options of the provider simulator (money is always integer minor units; times as named). */
export interface SimulatorOptions {
  /** The key every /api/v1 call must carry as `Authorization: Bearer <apiKey>`. */
  apiKey: string;
  /** Secret for signing callbacks (hex HMAC-SHA512, `x-brails-signature`); without it no callback is sent. */
  webhookSecret?: string;
  /** Account-level callback URL, for events whose request carried no callbackUrl (deposits, cards). */
  webhookUrl?: string;
  /** Pause between the attempts of a callback answered with anything but 200, ms (default 100). */
  callbackRetryDelayMs?: number;
  /** Callback fault switches active from the start, as in PUT /__admin/callback-faults (validated). */
  callbackFaults?: CallbackFaults;
  /**
   * Delay after which a finalized (`pending`) payout completes by itself, ms, with its callback:
   * failed when the major amount's integer part ends in 13, else success. Default undefined:
   * payouts stay `pending` until POST /__admin/payouts/:id/complete.
   */
  payoutCompleteDelayMs?: number;
  /** Delay before `beneficiary.status.success` follows a beneficiary's creation, ms; default undefined = not sent. */
  beneficiaryCallbackDelayMs?: number;
  /** Delay before `virtualcard.user.kyc.*` follows a card user's registration, ms (default 50). */
  kycCallbackDelayMs?: number;
  /**
   * How initialize-swap reads `amount`: `major` (default: the documented samples, amount 10 →
   * sourceAmount "10") or `minor`; quotes answer major decimal strings either way. Changed at run
   * time with PUT /__admin/settings `{swapAmountUnit}`.
   */
  swapAmountUnit?: AmountUnit;
  /** Validity of swap quotes, seconds (default 250, the documented sample). */
  quoteTtlSeconds?: number;
  /** Validity of collection account details, seconds (default 7200). */
  collectionTtlSeconds?: number;
  /** Delay before a new card becomes createdStatus `success` / status `active`, ms (default 300). */
  cardCreateDelayMs?: number;
  /** Delay before a card top-up/withdrawal settles to `success`, ms (default 300). */
  cardTxnSettleDelayMs?: number;
  /** Rate window between payout initialize and finalize, seconds (default 240, "~4 minutes"). */
  payoutRateWindowSeconds?: number;
  /** How long a `timeout` fault holds a request, ms (default 60000; released when the server closes). */
  faultTimeoutMs?: number;
  /** Faults active from the start, as in PUT /__admin/faults (validated). */
  faults?: FaultMap;
  /** Clock in epoch ms for every timestamp and expiry (default Date.now); inject one in tests. */
  now?: () => number;
  /** How many of the latest calls GET /__admin/calls (and callbacks GET /__admin/callbacks) keeps (default 10000). */
  callLogLimit?: number;
  /** Fastify request logging (default off). */
  logger?: boolean;
}

/** A running-ready simulator: the Fastify app (not listening yet), its state, fault table and callback dispatcher. */
export interface Simulator {
  app: FastifyInstance;
  state: SimulatorState;
  faults: FaultTable;
  callbacks: CallbackDispatcher;
}

/** Whether the Authorization header is exactly `Bearer <apiKey>` (constant-time compare). */
function authorized(header: string | undefined, apiKey: string): boolean {
  const given = Buffer.from(header ?? '');
  const wanted = Buffer.from(`Bearer ${apiKey}`);
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

/**
 * Builds the provider sandbox simulator: the 20 operations of docs/provider.md#operations under /api/v1 with
 * the `{status, message, data}` envelope, the documented field names and mixed types, state in
 * memory and the Bearer key check; signed callbacks for every event of docs/provider.md#events
 * (callbacks.ts, events.ts); plus the admin/test API under /__admin (call log, faults, state,
 * reset, flush, callback log and fault switches, collection/payout/card moves, money records).
 * Call `app.listen()` to serve it.
 */
export async function buildSimulator(opts: SimulatorOptions): Promise<Simulator> {
  const app = Fastify({ logger: opts.logger ?? false, bodyLimit: 1024 * 1024 });
  const state = new SimulatorState(opts.now ?? Date.now, opts.callLogLimit ?? 10_000);
  const faults = new FaultTable(opts.faultTimeoutMs ?? 60_000);
  if (opts.faults) faults.set(parseFaults(opts.faults));
  const callbacks = new CallbackDispatcher({
    secret: opts.webhookSecret,
    webhookUrl: opts.webhookUrl,
    retryDelayMs: opts.callbackRetryDelayMs,
    iso: () => state.iso(),
    logLimit: opts.callLogLimit,
    faults: opts.callbackFaults,
  });
  if (opts.swapAmountUnit !== undefined && opts.swapAmountUnit !== 'major' && opts.swapAmountUnit !== 'minor')
    throw new Error('swapAmountUnit must be major or minor');
  const config: SimulatorConfig = {
    swapAmountUnit: opts.swapAmountUnit ?? 'major',
    quoteTtlSeconds: opts.quoteTtlSeconds ?? 250,
    collectionTtlSeconds: opts.collectionTtlSeconds ?? 7200,
    cardCreateDelayMs: opts.cardCreateDelayMs ?? 300,
    cardTxnSettleDelayMs: opts.cardTxnSettleDelayMs ?? 300,
    payoutRateWindowSeconds: opts.payoutRateWindowSeconds ?? 240,
    payoutCompleteDelayMs: opts.payoutCompleteDelayMs,
    beneficiaryCallbackDelayMs: opts.beneficiaryCallbackDelayMs,
    kycCallbackDelayMs: opts.kycCallbackDelayMs ?? 50,
  };

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const status =
      error instanceof ProviderHttpError
        ? error.statusCode
        : error.statusCode && error.statusCode < 500
          ? error.statusCode
          : 500;
    if (status === 500) request.log.error(error);
    void reply.code(status).send(errorBody(status, status === 500 ? 'Internal server error' : error.message));
  });
  app.setNotFoundHandler((request, reply) => {
    void reply.code(404).send(errorBody(404, `Cannot ${request.method} ${request.url.split('?')[0]}`));
  });
  app.addHook('preClose', async () => faults.releaseAll());
  app.addHook('onClose', async () => {
    state.cancelScheduled();
    callbacks.cancel();
  });

  await app.register(
    async (api) => {
      api.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
        if (!authorized(request.headers.authorization, opts.apiKey))
          return reply.code(401).send(errorBody(401, 'Unauthorized'));
      });
      // The call reached its handler: log it (never the Authorization header), then apply any fault.
      api.addHook('preHandler', async (request: FastifyRequest, reply: FastifyReply) => {
        const operation = request.routeOptions.config.operation ?? 'unknown';
        state.logCall({
          operation,
          method: request.method,
          path: request.url,
          body: request.body === undefined ? null : structuredClone(request.body),
          at: state.iso(),
          ...(typeof request.headers['x-request-id'] === 'string'
            ? { requestId: request.headers['x-request-id'] }
            : {}),
        });
        const fault = faults.take(operation);
        if (fault?.amountFactor !== undefined) request.body = scaleAmount(request.body, fault.amountFactor);
        if (fault && (await faults.apply(fault, reply))) return reply;
      });
      const ctx: RouteContext = { state, config, callbacks };
      for (const routes of [
        customerRoutes,
        collectionRoutes,
        payoutRoutes,
        swapRoutes,
        virtualAccountRoutes,
        cardRoutes,
        transactionRoutes,
      ]) {
        routes(api, ctx);
      }
    },
    { prefix: '/api/v1' },
  );
  adminRoutes(app, { state, config, callbacks, faults, initialConfig: { ...config } });

  await app.ready();
  return { app, state, faults, callbacks };
}
