import type { FastifyInstance } from 'fastify';
import type { CallbackDispatcher } from '../callbacks';
import type { AmountUnit } from '../money';
import type { SimulatorState } from '../state';

/** Resolved simulator settings (defaults applied). */
export interface SimulatorConfig {
  /** How initialize-swap reads `amount` (major by default, as the documented samples); PUT /__admin/settings changes it. */
  swapAmountUnit: AmountUnit;
  quoteTtlSeconds: number;
  collectionTtlSeconds: number;
  cardCreateDelayMs: number;
  cardTxnSettleDelayMs: number;
  payoutRateWindowSeconds: number;
  /** Delay after which a finalized payout completes by itself; undefined = only the admin route completes it. */
  payoutCompleteDelayMs?: number;
  /** Delay before `beneficiary.status.success` after a beneficiary is created; undefined = no callback. */
  beneficiaryCallbackDelayMs?: number;
  /** Delay before `virtualcard.user.kyc.*` after a card user is registered. */
  kycCallbackDelayMs: number;
}

/** What every route module receives. */
export interface RouteContext {
  state: SimulatorState;
  config: SimulatorConfig;
  /** The one way callbacks are sent (log, fault switches, retries). */
  callbacks: CallbackDispatcher;
}

/** Registers one group of provider routes on the `/api/v1` scope. */
export type RouteModule = (api: FastifyInstance, ctx: RouteContext) => void;

/** The `:id`-style path parameter `name` of a request. */
export const param = (request: { params: unknown }, name: string): string =>
  String((request.params as Record<string, unknown>)[name]);
