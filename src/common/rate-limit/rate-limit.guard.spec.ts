import type { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import {
  SkipThrottle,
  Throttle,
  ThrottlerException,
  ThrottlerGuard,
  type ThrottlerModuleOptions,
} from '@nestjs/throttler';
import { FixedWindowThrottlerStorage } from './fixed-window.storage';
import { RateLimitGuard } from './rate-limit.guard';

/** A controller with no throttling metadata of its own. */
class Routes {}

/** Route handlers as Nest hands them to guards, with the decorators the app's routes may carry. */
const handlers = {
  plain: () => undefined,
  skipped: () => undefined,
  tighter: () => undefined,
  resolved: () => undefined,
};
SkipThrottle()(handlers.skipped, 'skipped', { value: handlers.skipped });
Throttle({ default: { limit: 2, ttl: 10_000 } })(handlers.tighter, 'tighter', { value: handlers.tighter });
Throttle({ default: { limit: () => 1, ttl: 60_000 } })(handlers.resolved, 'resolved', { value: handlers.resolved });

type Route = keyof typeof handlers;

/** The options app.module.ts gives the module: one budget per API key. */
function options(limit: number): ThrottlerModuleOptions {
  return {
    throttlers: [{ name: 'default', ttl: 60_000, limit }],
    getTracker: (req: { apiClient?: { id: string } }) => req.apiClient?.id ?? 'ip',
    generateKey: (_ctx, tracker, name) => `${name}:${tracker}`,
  };
}

function contextOf(handler: Route, headers: Record<string, unknown>): ExecutionContext {
  const req = { apiClient: { id: 'client-1' }, headers: {} };
  const res = { header: (name: string, value: unknown) => (headers[name] = value) };
  return {
    getHandler: () => handlers[handler],
    getClass: () => Routes,
    switchToHttp: () => ({ getRequest: () => req, getResponse: () => res }),
  } as unknown as ExecutionContext;
}

/** Each answer (true, or the exception's status) and the headers set, for `count` requests to `handler`. */
async function run(guard: ThrottlerGuard, handler: Route, count: number) {
  const answers: unknown[] = [];
  for (let i = 0; i < count; i++) {
    const headers: Record<string, unknown> = {};
    try {
      answers.push({ allowed: await guard.canActivate(contextOf(handler, headers)), headers });
    } catch (error) {
      answers.push({ refused: error instanceof ThrottlerException ? error.getStatus() : error, headers });
    }
  }
  return answers;
}

async function guards(limit: number): Promise<[ThrottlerGuard, ThrottlerGuard]> {
  const library = new ThrottlerGuard(options(limit), new FixedWindowThrottlerStorage(() => 1_000_000), new Reflector());
  const ours = new RateLimitGuard(options(limit), new FixedWindowThrottlerStorage(() => 1_000_000), new Reflector());
  await library.onModuleInit();
  await ours.onModuleInit();
  return [library, ours];
}

describe('RateLimitGuard', () => {
  it.each(['plain', 'skipped', 'tighter', 'resolved'] as const)(
    'answers %s routes as @nestjs/throttler does: same outcome and headers, request after request',
    async (handler) => {
      const [library, ours] = await guards(3);
      const expected = await run(library, handler, 5);
      expect(await run(ours, handler, 5)).toEqual(expected);
    },
  );

  it('refuses over the limit with 429 and Retry-After, and sets the three headers before', async () => {
    const [, ours] = await guards(2);
    const answers = await run(ours, 'plain', 3);
    expect(answers[1]).toEqual({
      allowed: true,
      headers: { 'X-RateLimit-Limit': 2, 'X-RateLimit-Remaining': 0, 'X-RateLimit-Reset': 60 },
    });
    expect(answers[2]).toEqual({ refused: 429, headers: { 'Retry-After': 60 } });
  });
});
