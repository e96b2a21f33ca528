import type { FastifyInstance } from 'fastify';
import type { SimulatorState } from '../state';

/** Resolved simulator settings (defaults applied). */
export interface SimulatorConfig {
  quoteTtlSeconds: number;
  collectionTtlSeconds: number;
  cardCreateDelayMs: number;
  cardTxnSettleDelayMs: number;
  payoutRateWindowSeconds: number;
}

/** What every route module receives. */
export interface RouteContext {
  state: SimulatorState;
  config: SimulatorConfig;
}

/** Registers one group of provider routes on the `/api/v1` scope. */
export type RouteModule = (api: FastifyInstance, ctx: RouteContext) => void;

/** The `:id`-style path parameter `name` of a request. */
export const param = (request: { params: unknown }, name: string): string =>
  String((request.params as Record<string, unknown>)[name]);
