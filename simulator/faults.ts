import type { FastifyReply } from 'fastify';
import { badRequest, errorBody } from './http';
import { OPERATIONS } from './operations';

/**
 * A fault for one operation (or `*` for every operation), set through PUT /__admin/faults or
 * SIMULATOR_FAULTS. Applied after the call is logged, in this order:
 * - latencyMs: wait, then go on (to the other fault kinds, or to the normal answer);
 * - timeout: hold the request (`faultTimeoutMs`, default 60 s; released with a 503 when the server closes);
 * - malformed: 200 with the non-JSON body `<html>oops</html>`;
 * - statusFalse: 200 with `{status:false, message}`;
 * - status: that HTTP status with a NestJS-style body (5xx outage; 4xx provider rejection; 429 rate
 *   limit), with a `Retry-After: <retryAfter>` header when `retryAfter` (seconds) is given;
 * - amountFactor: the request's `amount` is read multiplied by this factor (a provider reading the
 *   amount in another unit, e.g. 100), so the record, the money moved and the answer carry the
 *   wrong amount; the call log keeps the body as sent. Combines with the kinds above;
 * - times: apply this many times, then the fault is cleared.
 */
export interface Fault {
  latencyMs?: number;
  status?: number;
  timeout?: boolean;
  malformed?: boolean;
  statusFalse?: boolean;
  amountFactor?: number;
  retryAfter?: number;
  times?: number;
}

/** The `{ "<operation>|*": Fault }` map of PUT /__admin/faults and SIMULATOR_FAULTS. */
export type FaultMap = Record<string, Fault>;

const KEYS: Record<keyof Fault, 'number' | 'boolean'> = {
  latencyMs: 'number',
  status: 'number',
  timeout: 'boolean',
  malformed: 'boolean',
  statusFalse: 'boolean',
  amountFactor: 'number',
  retryAfter: 'number',
  times: 'number',
};

/** Validates a fault map (unknown operations, keys or types → 400 listing the problems). */
export function parseFaults(input: unknown): FaultMap {
  if (!input || typeof input !== 'object' || Array.isArray(input)) throw badRequest('faults must be an object');
  const problems: string[] = [];
  for (const [operation, fault] of Object.entries(input)) {
    if (operation !== '*' && !(OPERATIONS as readonly string[]).includes(operation))
      problems.push(`unknown operation ${operation}`);
    if (!fault || typeof fault !== 'object' || Array.isArray(fault)) {
      problems.push(`${operation} must be an object`);
      continue;
    }
    for (const [key, value] of Object.entries(fault)) {
      const type = KEYS[key as keyof Fault];
      if (!type) problems.push(`${operation}.${key} is not a fault kind`);
      else if (typeof value !== type || (type === 'number' && !(Number.isInteger(value) && (value as number) >= 0))) {
        problems.push(`${operation}.${key} must be a ${type === 'number' ? 'non-negative integer' : 'boolean'}`);
      }
    }
    const status = (fault as Fault).status;
    if (status !== undefined && (status < 400 || status > 599)) problems.push(`${operation}.status must be 400-599`);
    if ((fault as Fault).amountFactor === 0) problems.push(`${operation}.amountFactor must be at least 1`);
  }
  if (problems.length) throw badRequest(problems.join('; '));
  return input as FaultMap;
}

/**
 * The request body with its `amount` multiplied by `factor` (exactly, in decimal: 10.5 × 100 →
 * 1050); any other body, or one without a numeric `amount`, unchanged. A number stays a number, a
 * string a string.
 */
export function scaleAmount(body: unknown, factor: number): unknown {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return body;
  const amount = (body as Record<string, unknown>).amount;
  const text = typeof amount === 'number' && Number.isFinite(amount) ? String(amount) : amount;
  const match = typeof text === 'string' ? /^(\d+)(?:\.(\d+))?$/.exec(text.trim()) : null;
  if (!match) return body;
  const fraction = match[2] ?? '';
  const digits = (BigInt(match[1] + fraction) * BigInt(factor)).toString().padStart(fraction.length + 1, '0');
  const scaled = fraction
    ? `${digits.slice(0, -fraction.length)}.${digits.slice(-fraction.length)}`.replace(/\.?0+$/, '')
    : digits;
  return { ...(body as Record<string, unknown>), amount: typeof amount === 'number' ? Number(scaled) : scaled };
}

/** Active faults, and the requests held by `timeout` faults. */
export class FaultTable {
  private readonly faults = new Map<string, Fault>();
  private readonly held = new Set<() => void>();

  constructor(private readonly timeoutMs = 60_000) {}

  /** Replaces the fault of each operation named in `entries`. */
  set(entries: FaultMap): void {
    for (const [operation, fault] of Object.entries(entries)) this.faults.set(operation, { ...fault });
  }

  clear(): void {
    this.faults.clear();
  }

  list(): FaultMap {
    return Object.fromEntries(this.faults);
  }

  /** The fault to apply now to `operation` (its own, else `*`), consuming one of its `times`. */
  take(operation: string): Fault | undefined {
    const key = this.faults.has(operation) ? operation : this.faults.has('*') ? '*' : undefined;
    if (key === undefined) return undefined;
    const fault = this.faults.get(key) as Fault;
    if (fault.times !== undefined && --fault.times <= 0) this.faults.delete(key);
    return fault;
  }

  /** Applies `fault`; true when it has answered the request (the handler must not run). */
  async apply(fault: Fault, reply: FastifyReply): Promise<boolean> {
    if (fault.latencyMs) await new Promise((resolve) => setTimeout(resolve, fault.latencyMs));
    if (fault.timeout) {
      const released = await this.hold();
      const status = released ? 503 : 504;
      await reply.code(status).send(errorBody(status, released ? 'Simulator is shutting down' : 'Gateway Timeout'));
    } else if (fault.malformed) {
      await reply.code(200).type('text/html').send('<html>oops</html>');
    } else if (fault.statusFalse) {
      await reply.code(200).send({ status: false, message: 'Request could not be processed (simulated)' });
    } else if (fault.status) {
      const message =
        fault.status >= 500
          ? `Simulated provider failure (${fault.status})`
          : `Simulated provider rejection (${fault.status})`;
      if (fault.retryAfter !== undefined) void reply.header('retry-after', String(fault.retryAfter));
      await reply.code(fault.status).send(errorBody(fault.status, message));
    } else {
      return false;
    }
    return true;
  }

  /** Waits `timeoutMs`; resolves true early when `releaseAll` is called. */
  private hold(): Promise<boolean> {
    return new Promise((resolve) => {
      const release = () => finish(true);
      const timer = setTimeout(() => finish(false), this.timeoutMs);
      const finish = (released: boolean) => {
        clearTimeout(timer);
        this.held.delete(release);
        resolve(released);
      };
      this.held.add(release);
    });
  }

  /** Releases every held request (called before the server closes, so nothing hangs). */
  releaseAll(): void {
    for (const release of [...this.held]) release();
  }
}
