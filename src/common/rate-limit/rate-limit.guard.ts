import { type ExecutionContext, Injectable } from '@nestjs/common';
import { ThrottlerGuard, type ThrottlerGenerateKeyFunction, type ThrottlerGetTrackerFunction } from '@nestjs/throttler';
// The metadata keys of @SkipThrottle and @Throttle (the package does not export them; it is pinned).
import {
  THROTTLER_BLOCK_DURATION,
  THROTTLER_KEY_GENERATOR,
  THROTTLER_LIMIT,
  THROTTLER_SKIP,
  THROTTLER_TRACKER,
  THROTTLER_TTL,
} from '@nestjs/throttler/dist/throttler.constants';

/** One named throttler as a route uses it, resolved from the module options and the route's decorators. */
interface ThrottlePlan {
  name: string;
  /** `@SkipThrottle()` on the route or its controller. */
  skip: boolean;
  limit: number;
  ttl: number;
  blockDuration: number;
  getTracker: ThrottlerGetTrackerFunction;
  generateKey: ThrottlerGenerateKeyFunction;
  setHeaders: boolean;
  /** Header suffix: '' for the `default` throttler, `-<name>` for the others. */
  suffix: string;
}

/**
 * @nestjs/throttler's guard (the per-API-key limit, app.module.ts), with the same answers, headers
 * and storage calls, at less cost per request. The library's `canActivate` reads five metadata
 * keys and awaits seven promises on every request; here what a route's decorators and the module
 * options say is read once per route handler (it does not change while the app runs), and a
 * request costs the storage's `increment` and one `then`.
 *
 * A route whose limit, TTL or block duration is a function of the request (`@Throttle` with
 * resolvers), or an app with `skipIf` or `ignoreUserAgents`, goes through the library's own
 * `canActivate` unchanged. Throttlers are counted one after the other, as the library does: the
 * first that refuses throws `ThrottlerException` (429, with `Retry-After`) and the next ones are
 * not counted.
 */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  /** Per route handler: its plan, or null when the library's path applies (see the class comment). */
  private readonly plans = new WeakMap<object, ThrottlePlan[] | null>();

  override canActivate(context: ExecutionContext): Promise<boolean> {
    const plans = this.plansOf(context);
    if (!plans) return super.canActivate(context);
    let chain: Promise<boolean> | undefined;
    for (const plan of plans) {
      if (plan.skip) continue;
      chain = chain ? chain.then(() => this.hit(context, plan)) : this.hit(context, plan);
    }
    return chain ?? Promise.resolve(true);
  }

  /** Counts the request against one throttler; sets the rate-limit headers; rejects with ThrottlerException when over. */
  private hit(context: ExecutionContext, plan: ThrottlePlan): Promise<boolean> {
    const { req, res } = this.getRequestResponse(context);
    const tracker = plan.getTracker(req, context);
    if (typeof tracker !== 'string')
      return Promise.resolve(tracker).then((value) => this.count(context, plan, res, value));
    return this.count(context, plan, res, tracker);
  }

  private count(
    context: ExecutionContext,
    plan: ThrottlePlan,
    res: Record<string, unknown>,
    tracker: string,
  ): Promise<boolean> {
    const { name, limit, ttl, blockDuration, suffix } = plan;
    const key = plan.generateKey(context, tracker, name);
    return this.storageService.increment(key, ttl, limit, blockDuration, name).then((record) => {
      const { totalHits, timeToExpire, isBlocked, timeToBlockExpire } = record;
      if (isBlocked) {
        if (plan.setHeaders) this.setResponseHeader(res, `Retry-After${suffix}`, timeToBlockExpire);
        const detail = { limit, ttl, key, tracker, totalHits, timeToExpire, isBlocked, timeToBlockExpire };
        return this.throwThrottlingException(context, detail).then(() => false);
      }
      if (plan.setHeaders) {
        this.setResponseHeader(res, `${this.headerPrefix}-Limit${suffix}`, limit);
        this.setResponseHeader(res, `${this.headerPrefix}-Remaining${suffix}`, Math.max(0, limit - totalHits));
        this.setResponseHeader(res, `${this.headerPrefix}-Reset${suffix}`, timeToExpire);
      }
      return true;
    });
  }

  /** The route's plans, read once per handler; null when a setting depends on the request. */
  private plansOf(context: ExecutionContext): ThrottlePlan[] | null {
    const handler = context.getHandler();
    let plans = this.plans.get(handler);
    if (plans === undefined) {
      plans = this.readPlans(handler, context.getClass());
      this.plans.set(handler, plans);
    }
    return plans;
  }

  private readPlans(
    handler: ReturnType<ExecutionContext['getHandler']>,
    classRef: ReturnType<ExecutionContext['getClass']>,
  ): ThrottlePlan[] | null {
    if (this.commonOptions.skipIf || this.commonOptions.ignoreUserAgents) return null;
    const plans: ThrottlePlan[] = [];
    for (const throttler of this.throttlers) {
      if (throttler.skipIf || throttler.ignoreUserAgents) return null;
      const name = throttler.name ?? 'default';
      const read = <T>(key: string) => this.reflector.getAllAndOverride<T>(key + name, [handler, classRef]);
      const limit = read<unknown>(THROTTLER_LIMIT) ?? throttler.limit;
      const ttl = read<unknown>(THROTTLER_TTL) ?? throttler.ttl;
      const blockDuration = read<unknown>(THROTTLER_BLOCK_DURATION) ?? throttler.blockDuration ?? ttl;
      // Resolvers (functions of the request) and anything the library would convert or refuse: its path.
      if (typeof limit !== 'number' || typeof ttl !== 'number' || typeof blockDuration !== 'number') return null;
      const getTracker =
        read<ThrottlerGetTrackerFunction>(THROTTLER_TRACKER) ?? throttler.getTracker ?? this.commonOptions.getTracker;
      const generateKey =
        read<ThrottlerGenerateKeyFunction>(THROTTLER_KEY_GENERATOR) ??
        throttler.generateKey ??
        this.commonOptions.generateKey;
      if (!getTracker || !generateKey) return null;
      plans.push({
        name,
        skip: read<boolean>(THROTTLER_SKIP) === true,
        limit,
        ttl,
        blockDuration,
        getTracker,
        generateKey,
        setHeaders: throttler.setHeaders ?? this.commonOptions.setHeaders ?? true,
        suffix: name === 'default' ? '' : `-${name}`,
      });
    }
    return plans;
  }
}
