import { isAxiosError } from 'axios';
import {
  BrokenCircuitError,
  type BulkheadPolicy,
  BulkheadRejectedError,
  bulkhead,
  type CircuitBreakerPolicy,
  CircuitState,
  ConsecutiveBreaker,
  circuitBreaker,
  handleWhen,
  IsolatedCircuitError,
  type IPolicy,
  wrap,
} from 'cockatiel';
import { ErrorCode, ProviderError } from '../common/errors';

/** Settings of the breaker and the bulkhead (PROVIDER_BREAKER_*, PROVIDER_BULKHEAD_* in src/config/env.ts). */
export interface ProviderResilienceSettings {
  /** Consecutive failed calls that open the breaker. */
  breakerFailures: number;
  /** How long an open breaker refuses calls before it lets one probe through (half-open), in ms. */
  halfOpenAfterMs: number;
  /** Calls run at once. */
  bulkheadLimit: number;
  /** Calls waiting for a slot; one more is refused. */
  bulkheadQueue: number;
}

/** The breaker's state as shown in /metrics and /health/ready. */
export type BreakerState = 'closed' | 'half_open' | 'open';

/** Why a call was refused before it was sent. */
export type FastFailureReason = 'breaker_open' | 'bulkhead_full';

/** Provider calls holding a bulkhead slot (`inFlight`) and waiting for one (`queued`). */
export interface BulkheadUse {
  inFlight: number;
  queued: number;
}

/** Seconds a client is told to wait when the bulkhead is full (calls in flight end within a timeout). */
const BULKHEAD_RETRY_AFTER_S = 1;

/**
 * A failure that counts against the provider: no answer (connection failure, timeout) or a 5xx,
 * after axios-retry's attempts. A refusal (4xx, 429 included) is an answer and does not count.
 */
function countsAsFailure(error: Error): boolean {
  if (!isAxiosError(error) || error.code === 'ERR_CANCELED') return false;
  return !error.response || error.response.status >= 500;
}

/**
 * The circuit breaker and bulkhead around every provider call (cockatiel):
 * - a consecutive breaker opens after `breakerFailures` failed calls in a row (see
 *   `countsAsFailure`); while open, calls are refused at once; after `halfOpenAfterMs` one call is
 *   let through as a probe (half-open, the others wait for it): its success closes the breaker,
 *   its failure opens it again;
 * - a bulkhead runs at most `bulkheadLimit` calls at once with `bulkheadQueue` waiting.
 * A refused call was never sent: it fails with `ProviderError` `provider_retry_later` (503) and a
 * `retryAfter` (the time left before the half-open probe, or 1 s for a full bulkhead), so a money
 * movement it was for ends `failed`, never `unknown` (providerDidNotAct in src/common/errors.ts).
 */
export class ProviderResilience {
  private readonly breaker: CircuitBreakerPolicy;
  private readonly bulkhead: BulkheadPolicy;
  private readonly policy: IPolicy;
  private openedAt = 0;
  private readonly onFastFailure?: (reason: FastFailureReason, operation: string) => void;

  constructor(
    private readonly settings: ProviderResilienceSettings,
    hooks: {
      /** Called on every change of state. */
      onStateChange?: (state: BreakerState) => void;
      /** Called once per refused call. */
      onFastFailure?: (reason: FastFailureReason, operation: string) => void;
    } = {},
  ) {
    this.breaker = circuitBreaker(handleWhen(countsAsFailure), {
      halfOpenAfter: settings.halfOpenAfterMs,
      breaker: new ConsecutiveBreaker(settings.breakerFailures),
    });
    this.bulkhead = bulkhead(settings.bulkheadLimit, settings.bulkheadQueue);
    this.breaker.onBreak(() => (this.openedAt = Date.now()));
    this.breaker.onStateChange((state) => hooks.onStateChange?.(toBreakerState(state)));
    this.onFastFailure = hooks.onFastFailure;
    // The breaker first: an open breaker refuses without taking a bulkhead slot.
    this.policy = wrap(this.breaker, this.bulkhead);
  }

  /** The breaker's state now. */
  get state(): BreakerState {
    return toBreakerState(this.breaker.state);
  }

  /**
   * The bulkhead now: calls running (at most `bulkheadLimit`) and calls waiting for a slot (at most
   * `bulkheadQueue`; one more is refused with 503). For /metrics (`provider_bulkhead_calls`).
   */
  get bulkheadUse(): BulkheadUse {
    return {
      inFlight: this.settings.bulkheadLimit - this.bulkhead.executionSlots,
      queued: this.settings.bulkheadQueue - this.bulkhead.queueSlots,
    };
  }

  /**
   * Runs one provider call (`send`: the HTTP request with its retries) through the breaker and
   * the bulkhead.
   * @throws ProviderError `provider_retry_later` when refused before sending; else what `send` throws.
   */
  async execute<T>(operation: string, send: () => Promise<T>): Promise<T> {
    try {
      return await this.policy.execute(send);
    } catch (error) {
      if (error instanceof BrokenCircuitError || error instanceof IsolatedCircuitError) {
        this.onFastFailure?.('breaker_open', operation);
        const left = this.openedAt + this.settings.halfOpenAfterMs - Date.now();
        throw new ProviderError(
          ErrorCode.ProviderRetryLater,
          'The provider keeps failing: calls to it are paused (circuit breaker open); nothing was sent.',
          operation,
          undefined,
          Math.max(1, Math.ceil(left / 1000)),
        );
      }
      if (error instanceof BulkheadRejectedError) {
        this.onFastFailure?.('bulkhead_full', operation);
        throw new ProviderError(
          ErrorCode.ProviderRetryLater,
          'Too many provider calls are in flight on this instance; nothing was sent.',
          operation,
          undefined,
          BULKHEAD_RETRY_AFTER_S,
        );
      }
      throw error;
    }
  }
}

function toBreakerState(state: CircuitState): BreakerState {
  if (state === CircuitState.Closed) return 'closed';
  if (state === CircuitState.HalfOpen) return 'half_open';
  return 'open';
}
