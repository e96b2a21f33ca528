import { createHmac } from 'node:crypto';
import { badRequest } from './http';

/** A callback as the provider sends it: `{event, data}` (docs/provider.md#callback-delivery). */
export interface ProviderCallback {
  event: string;
  data: Record<string, unknown>;
}

/** Result of delivering one callback: the HTTP status of each attempt (0 = no answer). */
export interface Delivery {
  url: string;
  attempts: number[];
}

/**
 * Callback fault switches, set through PUT /__admin/callback-faults, `buildSimulator({callbackFaults})`
 * or SIMULATOR_CALLBACK_FAULTS; cleared by DELETE /__admin/callback-faults and by reset.
 * - duplicate: deliver each callback this many extra times (one after the other);
 * - outOfOrder: hold each callback until the next one is due, then send that later one first;
 * - badSignature: sign with a wrong secret; unsigned: send no signature header;
 * - delayMs: wait this long before delivering (POST /__admin/flush cuts the wait short);
 * - drop: never deliver (the callback "never came");
 * - times: the switches apply to the next `times` callbacks only, then clear themselves.
 */
export interface CallbackFaults {
  duplicate?: number;
  outOfOrder?: boolean;
  badSignature?: boolean;
  unsigned?: boolean;
  delayMs?: number;
  drop?: boolean;
  times?: number;
}

/** The switches a callback was sent with (`times` left out; only those that are on). */
export type AppliedCallbackFaults = Omit<CallbackFaults, 'times'>;

const FAULT_KEYS: Record<keyof CallbackFaults, 'number' | 'boolean'> = {
  duplicate: 'number',
  outOfOrder: 'boolean',
  badSignature: 'boolean',
  unsigned: 'boolean',
  delayMs: 'number',
  drop: 'boolean',
  times: 'number',
};

/** Validates callback fault switches (unknown keys or wrong types → 400 listing the problems). */
export function parseCallbackFaults(input: unknown): CallbackFaults {
  if (!input || typeof input !== 'object' || Array.isArray(input))
    throw badRequest('callback faults must be an object');
  const problems: string[] = [];
  for (const [key, value] of Object.entries(input)) {
    const type = FAULT_KEYS[key as keyof CallbackFaults];
    if (!type) problems.push(`${key} is not a callback fault`);
    else if (typeof value !== type || (type === 'number' && !(Number.isInteger(value) && (value as number) >= 0)))
      problems.push(`${key} must be a ${type === 'number' ? 'non-negative integer' : 'boolean'}`);
    else if (key === 'times' && value === 0) problems.push('times must be at least 1');
  }
  if (problems.length) throw badRequest(problems.join('; '));
  return { ...(input as CallbackFaults) };
}

/**
 * Where a logged callback is:
 * skipped (no URL or no secret: nothing to send) · dropped (the `drop` switch) · waiting (a delay) ·
 * held (`outOfOrder`, until the next callback is due or a flush) · sending · delivered (a 200) ·
 * failed (no 200 after every attempt) · cancelled (reset or shutdown before it was sent).
 */
export type CallbackStatus =
  'skipped' | 'dropped' | 'waiting' | 'held' | 'sending' | 'delivered' | 'failed' | 'cancelled';

/** One entry of the delivery log (GET /__admin/callbacks). */
export interface CallbackRecord {
  /** 1, 2, … in dispatch order. */
  seq: number;
  event: string;
  data: Record<string, unknown>;
  /** Where it goes: the request's callbackUrl, else the account webhook URL; null when neither. */
  url: string | null;
  /** When it was dispatched (ISO, the simulator's clock). */
  at: string;
  /** The fault switches applied to it. */
  faults: AppliedCallbackFaults;
  status: CallbackStatus;
  /** HTTP status of every attempt of every copy, in order (0 = no answer). */
  attempts: number[];
  /** The attempts per copy (one copy, plus one per `duplicate`). */
  deliveries: number[][];
  /** When its last copy was delivered or given up (ISO). */
  finishedAt?: string;
}

/** How one callback is dispatched. */
export interface DispatchOptions {
  /** The request's callbackUrl; the account webhook URL when absent. */
  url?: string;
  /** A pause before it is due (e.g. after a synchronous answer), ms; flush cuts it short. */
  afterMs?: number;
}

/** Settings of the dispatcher (see SimulatorOptions). */
export interface CallbackDispatcherConfig {
  /** HMAC key; without it nothing is sent (callbacks are logged as `skipped`). */
  secret?: string;
  /** Account-level webhook URL. */
  webhookUrl?: string;
  /** Pause between attempts of one copy, ms (default 100). */
  retryDelayMs?: number;
  /** Timestamp for the log (ISO). */
  iso?: () => string;
  /** How many of the latest callbacks the log keeps (default 10000). */
  logLimit?: number;
  /** Switches active from the start. */
  faults?: CallbackFaults;
}

/** Lower-case hex HMAC-SHA512 of `body` (docs/provider.md#callback-delivery). */
export function signCallback(body: string, secret: string): string {
  return createHmac('sha512', secret).update(body).digest('hex');
}

/**
 * Posts `body` to `url` with the given signature header (none when undefined). Any answer but 200
 * is retried 3 more times (docs/provider.md#callback-delivery), `retryDelayMs` apart; stops early when `signal`
 * aborts. Answers the status of each attempt (0 = no answer). Never throws.
 */
export async function postCallback(
  url: string,
  body: string,
  signature: string | undefined,
  retryDelayMs = 100,
  signal?: AbortSignal,
): Promise<number[]> {
  const attempts: number[] = [];
  for (let attempt = 0; attempt < 4 && !signal?.aborted; attempt++) {
    if (attempt > 0) await new Promise((r) => setTimeout(r, retryDelayMs));
    try {
      const timeout = AbortSignal.timeout(5000);
      const res = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(signature === undefined ? {} : { 'x-brails-signature': signature }),
        },
        body,
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
      attempts.push(res.status);
      await res.arrayBuffer();
      if (res.status === 200) break;
    } catch {
      attempts.push(0);
    }
  }
  return attempts;
}

/**
 * Posts a signed callback to `url`: JSON body, header `x-brails-signature` = hex HMAC-SHA512 of the
 * body with the webhook secret, retried as `postCallback`. Never throws.
 */
export async function deliverCallback(
  url: string,
  secret: string,
  callback: ProviderCallback,
  retryDelayMs = 100,
): Promise<Delivery> {
  const body = JSON.stringify(callback);
  return { url, attempts: await postCallback(url, body, signCallback(body, secret), retryDelayMs) };
}

/** A dispatched callback: its log entry, and a promise settled when the entry is final. */
export interface Dispatched {
  record: CallbackRecord;
  done: Promise<CallbackRecord>;
}

/** Whether the entry waits for something else (a delay, or the next callback) before it is sent. */
export function isDeferred(record: CallbackRecord): boolean {
  return record.status === 'waiting' || record.status === 'held';
}

/**
 * The entry once delivered or given up, or at once when it is deferred (a delay or `outOfOrder`):
 * what admin routes answer as `callback`, so that a test is never blocked by a held callback.
 */
export function outcomeOf({ record, done }: Dispatched): Promise<CallbackRecord> {
  return isDeferred(record) ? Promise.resolve(record) : done;
}

/** A callback waiting for the next one (`outOfOrder`). */
interface Held {
  record: CallbackRecord;
  send: () => Promise<void>;
}

/**
 * The one way the simulator sends callbacks. Each dispatched callback is logged, gets the active
 * fault switches (consuming one of their `times`), and is delivered in the background; `dispatch`
 * answers the log entry and a promise settled when the entry is final (`outcomeOf` does not wait
 * for a deferred one).
 * `flush` cuts every wait short, sends held callbacks and waits for every delivery; `cancel`
 * (reset, shutdown) abandons whatever is not sent yet.
 */
export class CallbackDispatcher {
  log: CallbackRecord[] = [];
  private faults: CallbackFaults | undefined;
  private held: Held[] = [];
  private readonly active = new Set<Promise<void>>();
  private readonly sleepers = new Set<() => void>();
  /** Callbacks not final yet: waiting, held or being sent. */
  private readonly outstanding = new Set<CallbackRecord>();
  private flushing = 0;
  private seq = 0;
  private abort = new AbortController();
  private readonly retryDelayMs: number;
  private readonly iso: () => string;
  private readonly logLimit: number;

  constructor(private readonly config: CallbackDispatcherConfig = {}) {
    this.retryDelayMs = config.retryDelayMs ?? 100;
    this.iso = config.iso ?? (() => new Date().toISOString());
    this.logLimit = config.logLimit ?? 10_000;
    if (config.faults) this.setFaults(parseCallbackFaults(config.faults));
  }

  /** The account-level webhook URL, if any. */
  get webhookUrl(): string | undefined {
    return this.config.webhookUrl;
  }

  /** Replaces the fault switches. */
  setFaults(faults: CallbackFaults): void {
    this.faults = Object.keys(faults).length ? { ...faults } : undefined;
  }

  clearFaults(): void {
    this.faults = undefined;
  }

  /** The active switches (`{}` when none). */
  listFaults(): CallbackFaults {
    return { ...this.faults };
  }

  /** Empties the delivery log (deliveries under way go on). */
  clearLog(): void {
    this.log = [];
  }

  /** How many callbacks wait for a delay, are held, or are being sent. */
  pending(): number {
    return this.outstanding.size;
  }

  /**
   * Logs `{event, data}` and sends it (in the background) to `opts.url` or the account webhook URL.
   * `done` settles when the entry is final: delivered, failed, dropped, skipped or cancelled.
   */
  dispatch(event: string, data: Record<string, unknown>, opts: DispatchOptions = {}): Dispatched {
    const url = opts.url ?? this.config.webhookUrl ?? null;
    const sendable = url !== null && this.config.secret !== undefined;
    const faults = sendable ? this.takeFaults() : {};
    const record: CallbackRecord = {
      seq: ++this.seq,
      event,
      data,
      url,
      at: this.iso(),
      faults,
      status: sendable ? 'sending' : 'skipped',
      attempts: [],
      deliveries: [],
    };
    this.log.push(record);
    if (this.log.length > this.logLimit) this.log.splice(0, this.log.length - this.logLimit);
    if (!sendable) return { record, done: Promise.resolve(record) };
    if (faults.drop) {
      record.status = 'dropped';
      return { record, done: Promise.resolve(record) };
    }
    let resolve!: (record: CallbackRecord) => void;
    const done = new Promise<CallbackRecord>((r) => (resolve = r));
    this.outstanding.add(record);
    const settle = (final: CallbackRecord) => {
      this.outstanding.delete(final);
      resolve(final);
    };
    this.track(this.run(record, url, faults, opts.afterMs ?? 0, settle));
    return { record, done };
  }

  /**
   * Dispatches and, unless the callback waits for a delay or is held, waits until it is delivered
   * or given up; answers its log entry (what the admin routes return as `callback`).
   */
  send(event: string, data: Record<string, unknown>, opts: DispatchOptions = {}): Promise<CallbackRecord> {
    return outcomeOf(this.dispatch(event, data, opts));
  }

  /** Waits until no callback is waiting for a delay or being sent (held callbacks stay held). */
  async idle(): Promise<void> {
    while (this.active.size) await Promise.all([...this.active]);
  }

  /**
   * Cuts every wait short, sends every held callback (oldest first) and waits for every delivery;
   * answers how many callbacks were outstanding when it started.
   */
  async flush(): Promise<number> {
    const outstanding = this.pending();
    this.flushing++;
    try {
      for (;;) {
        for (const wake of [...this.sleepers]) wake();
        await this.idle();
        const held = this.held.splice(0);
        if (!held.length) break;
        this.track(
          (async () => {
            for (const h of held) await h.send();
          })(),
        );
      }
    } finally {
      this.flushing--;
    }
    return outstanding;
  }

  /** Abandons every waiting, held and in-flight callback (reset, shutdown); clears log and switches with `reset`. */
  cancel(reset = false): void {
    this.abort.abort();
    this.abort = new AbortController();
    for (const wake of [...this.sleepers]) wake();
    for (const h of this.held.splice(0)) {
      h.record.status = 'cancelled';
      void h.send();
    }
    if (reset) {
      this.log = [];
      this.faults = undefined;
    }
  }

  /** The switches for the next callback, consuming one of their `times`. */
  private takeFaults(): AppliedCallbackFaults {
    const active = this.faults;
    if (!active) return {};
    if (active.times !== undefined && --active.times <= 0) this.faults = undefined;
    const applied: AppliedCallbackFaults = {};
    for (const [key, value] of Object.entries(active)) {
      if (key !== 'times' && value) (applied as Record<string, unknown>)[key] = value;
    }
    return applied;
  }

  private track(job: Promise<void>): void {
    const tracked = job.catch(() => undefined).finally(() => this.active.delete(tracked));
    this.active.add(tracked);
  }

  /** Sleeps `ms`, or less when a flush or cancel comes; true when it was cancelled meanwhile. */
  private async sleep(ms: number, signal: AbortSignal): Promise<boolean> {
    if (this.flushing === 0 && !signal.aborted) {
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.sleepers.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, ms);
        timer.unref();
        this.sleepers.add(wake);
      });
    }
    return signal.aborted;
  }

  /** Waits (delay switches), holds (`outOfOrder`) or sends; a due callback releases held ones after it. */
  private async run(
    record: CallbackRecord,
    url: string,
    faults: AppliedCallbackFaults,
    afterMs: number,
    settle: (record: CallbackRecord) => void,
  ): Promise<void> {
    const signal = this.abort.signal;
    const wait = afterMs + (faults.delayMs ?? 0);
    if (wait > 0) {
      record.status = 'waiting';
      if (await this.sleep(wait, signal)) {
        record.status = 'cancelled';
        settle(record);
        return;
      }
    }
    const send = async () => {
      if (record.status !== 'cancelled') await this.deliver(record, url, faults, signal);
      settle(record);
    };
    const earlier = this.held.splice(0);
    if (!earlier.length && faults.outOfOrder && this.flushing === 0) {
      record.status = 'held';
      this.held.push({ record, send });
      return;
    }
    await send();
    for (const h of earlier) await h.send();
  }

  /** Sends every copy of the callback, signed as its switches say, and records the attempts. */
  private async deliver(
    record: CallbackRecord,
    url: string,
    faults: AppliedCallbackFaults,
    signal: AbortSignal,
  ): Promise<void> {
    record.status = 'sending';
    const body = JSON.stringify({ event: record.event, data: record.data });
    const secret = faults.badSignature ? `${this.config.secret}-wrong` : (this.config.secret as string);
    const signature = faults.unsigned ? undefined : signCallback(body, secret);
    let delivered = false;
    for (let copy = 0; copy <= (faults.duplicate ?? 0) && !signal.aborted; copy++) {
      const attempts = await postCallback(url, body, signature, this.retryDelayMs, signal);
      record.deliveries.push(attempts);
      record.attempts.push(...attempts);
      delivered ||= attempts.includes(200);
    }
    record.status = signal.aborted && !delivered ? 'cancelled' : delivered ? 'delivered' : 'failed';
    record.finishedAt = this.iso();
  }
}
