import { randomUUID } from 'node:crypto';
import { badRequest, conflict, notFound } from './http';

// Records as the simulator keeps them. Money fields are bigint MINOR units of the named currency;
// times are ISO strings (as answered) or epoch milliseconds (`…At` numbers, for expiry checks).

/** Fields every record carries. */
export interface BaseRecord {
  id: string;
  createdAt: string;
  updatedAt: string;
}

export interface Customer extends BaseRecord {
  firstName: string | null;
  lastName: string | null;
  email: string;
  phone: string | null;
  countryCode: string | null;
  blacklist: boolean;
}

/** A collection; `amount`/`fee` in minor units of `currency` (upper-case). */
export interface Collection extends BaseRecord {
  customerId: string;
  reference: string;
  country: string;
  currency: string;
  /** The currency code exactly as the request sent it (answers echo it). */
  requestCurrency: string;
  amount: bigint;
  fee: bigint;
  /** processing → success (admin pay) | expired (lazily, after expiresAt). */
  status: 'processing' | 'success' | 'expired';
  accountName: string;
  accountNumber: string;
  bankName: string;
  description: string;
  expiryInSeconds: number;
  expiresAt: number;
  callbackUrl?: string;
  balanceBefore?: bigint;
  balanceAfter?: bigint;
}

export interface Beneficiary extends BaseRecord {
  customerId: string;
  reference: string;
  country: string;
  currency: string;
  status: 'success';
  destination: Record<string, string>;
  callbackUrl?: string;
}

/** A payout; `amount`/`fee` in minor units of the wallet `currency`, `payoutAmount` of `payoutCurrency`. */
export interface Payout extends BaseRecord {
  initiatedAt: number;
  customerId: string;
  reference: string;
  description: string;
  beneficiaryId: string;
  country: string;
  currency: string;
  amount: bigint;
  fee: bigint;
  /**
   * initiated → pending (finalize) → success | failed (admin route, or by itself after
   * `payoutCompleteDelayMs`); initiated → expired (late finalize).
   */
  status: 'initiated' | 'pending' | 'success' | 'failed' | 'expired';
  payoutCurrency: string;
  payoutAmount: bigint;
  exchangeRate: string;
  balanceBefore?: bigint;
  balanceAfter?: bigint;
  callbackUrl?: string;
}

/** A swap quote; `sourceAmount`/`fee` in minor units of the source, `targetAmount` of the target. */
export interface SwapQuote {
  id: string;
  createdAt: string;
  sourceCurrency: string;
  targetCurrency: string;
  sourceAmount: bigint;
  targetAmount: bigint;
  fee: bigint;
  rate: string;
  expiresAt: number;
  /** The swap that used this quote. */
  swapId?: string;
}

/** An executed swap; money in minor units (amount, fee, balances: source; targetAmount: target). */
export interface Swap extends BaseRecord {
  reference: string;
  quoteId: string;
  sourceCurrency: string;
  targetCurrency: string;
  amount: bigint;
  fee: bigint;
  targetAmount: bigint;
  rate: string;
  balanceBefore: bigint;
  balanceAfter: bigint;
  status: 'success';
}

export interface CardUser extends BaseRecord {
  customerId: string;
  country: string | null;
  firstName: string | null;
  lastName: string | null;
  idType: string | null;
  phoneNumber: string | null;
  /** active (KYC passed); pending → failed when the id number ends in 13 (`virtualcard.user.kyc.*`). */
  status: 'active' | 'pending' | 'failed';
  callbackUrl?: string;
}

/** A virtual card; `balance` in USD cents. */
export interface Card extends BaseRecord {
  customerId: string;
  cardUserId: string;
  reference: string;
  cardType: string;
  cardBrand: string;
  cardName: string;
  cardNumber: string;
  cvv2: string;
  expiry: string;
  valid: string;
  /** pending → active (created) | failed (initial amount's dollars end in 13; wallet refunded). */
  status: 'pending' | 'active' | 'frozen' | 'terminated' | 'failed';
  createdStatus: 'pending' | 'success' | 'failed';
  balance: bigint;
  /** Cents debited from the USD wallet at creation, credited to the card when it is created. */
  initialAmount: bigint;
  callbackUrl?: string;
}

/**
 * A card top-up, withdrawal, spend (debit; `declined` when refused, `reversed` when the money went
 * back) or merchant credit; `amount` in USD cents.
 */
export interface CardTransaction extends BaseRecord {
  seq: number;
  cardId: string;
  reference: string;
  amount: bigint;
  method: 'topup' | 'withdrawal' | 'spend' | 'credit';
  type: 'credit' | 'debit';
  status: 'pending' | 'success' | 'failed' | 'declined' | 'reversed';
  narrative: string | null;
  /** Why it failed or was declined. */
  reason?: string;
  callbackUrl?: string;
}

export interface VirtualAccount extends BaseRecord {
  customerId: string;
  bank: string;
  bankName: string;
  reference: string;
  accountName: string;
  accountNumber: string;
  status: 'active';
}

/** One call that reached a handler (the Authorization header is never kept). */
export interface Call {
  operation: string;
  method: string;
  path: string;
  body: unknown;
  at: string;
  /** The call's `x-request-id` header, when it carried one. */
  requestId?: string;
}

/** Seed wallet balances, minor units. */
export const SEED_BALANCES: Readonly<Record<string, bigint>> = {
  USD: 100_000_000n, // 1,000,000.00
  NGN: 50_000_000_000n, // 500,000,000.00
  GHS: 100_000_000n, // 1,000,000.00
  KES: 1_000_000_000n, // 10,000,000.00
  UGX: 10_000_000_000n, // 10,000,000,000 (exponent 0)
  BTC: 1_000_000_000n, // 10 BTC
};

/** The account holder's id on every record (`companyId`). */
export const COMPANY_ID = '6f1c2a8e-0b7d-4c4e-9d51-3c2f7f9b1a10';

/** Kinds of records whose `reference` must be unique (a duplicate answers 409). */
export type ReferenceKind = 'collection' | 'beneficiary' | 'payout' | 'virtualAccount' | 'card' | 'cardTransaction';

/** Everything the simulator remembers, in memory, plus its clock and scheduled work. */
export class SimulatorState {
  customers = new Map<string, Customer>();
  collections = new Map<string, Collection>();
  beneficiaries = new Map<string, Beneficiary>();
  payouts = new Map<string, Payout>();
  quotes = new Map<string, SwapQuote>();
  swaps = new Map<string, Swap>();
  /** Card users by customer id. */
  cardUsers = new Map<string, CardUser>();
  cards = new Map<string, Card>();
  cardTransactions: CardTransaction[] = [];
  virtualAccounts = new Map<string, VirtualAccount>();
  /** Wallet balances, minor units per upper-case currency. */
  balances = new Map<string, bigint>(Object.entries(SEED_BALANCES));
  calls: Call[] = [];
  /**
   * Disagreement switches by record id (PUT /__admin/transactions/:id/disagree): GET /transactions/:id
   * answers this status and/or amount (minor units) instead of the record's, or 404 (`missing`), so a
   * reconciliation report finds a mismatch. The record itself (and money) is untouched.
   */
  disagreements = new Map<string, { status?: string; amount?: bigint; missing?: boolean }>();
  private references = new Map<ReferenceKind, Set<string>>();
  private scheduled = new Map<NodeJS.Timeout, () => void>();
  private seq = 0;

  /**
   * `now` is the clock (epoch ms) used for every timestamp and expiry; the call log keeps the
   * latest `callLogLimit` calls (long benchmarks must not grow memory without bound).
   */
  constructor(
    readonly now: () => number = Date.now,
    readonly callLogLimit = 10_000,
  ) {}

  /** Appends to the call log, dropping the oldest entries beyond `callLogLimit`. */
  logCall(call: Call): void {
    this.calls.push(call);
    if (this.calls.length > this.callLogLimit) this.calls.splice(0, this.calls.length - this.callLogLimit);
  }

  /** The current time as an ISO 8601 UTC string with milliseconds. */
  iso(): string {
    return new Date(this.now()).toISOString();
  }

  newId(): string {
    return randomUUID();
  }

  nextSeq(): number {
    return ++this.seq;
  }

  /** Fresh `id`, `createdAt`, `updatedAt`. */
  stamp(): BaseRecord {
    const at = this.iso();
    return { id: this.newId(), createdAt: at, updatedAt: at };
  }

  /** Sets `updatedAt` to now. */
  touch(record: { updatedAt: string }): void {
    record.updatedAt = this.iso();
  }

  /** The customer with this email (case-insensitive), if any. */
  customerByEmail(email: unknown): Customer | undefined {
    const wanted = String(email ?? '')
      .trim()
      .toLowerCase();
    for (const c of this.customers.values()) if (c.email.toLowerCase() === wanted) return c;
    return undefined;
  }

  /** The customer with this email, else 404 "Customer not found". */
  requireCustomer(email: unknown): Customer {
    const customer = this.customerByEmail(email);
    if (!customer) throw notFound('Customer');
    return customer;
  }

  /** Records `reference` as used for `kind`; 409 when it already is. */
  claimReference(kind: ReferenceKind, reference: string): void {
    const used = this.references.get(kind) ?? new Set<string>();
    if (used.has(reference)) throw conflict(`Duplicate reference: ${reference}`);
    used.add(reference);
    this.references.set(kind, used);
  }

  /** Marks a `processing` collection past its expiry as `expired`; returns it. */
  refreshCollection(collection: Collection): Collection {
    if (collection.status === 'processing' && this.now() > collection.expiresAt) {
      collection.status = 'expired';
      this.touch(collection);
    }
    return collection;
  }

  /** Wallet balance, minor units. */
  balance(currency: string): bigint {
    return this.balances.get(currency.toUpperCase()) ?? 0n;
  }

  /** Adds `amount` minor units to the wallet; returns the balances before and after. */
  credit(currency: string, amount: bigint): { before: bigint; after: bigint } {
    const before = this.balance(currency);
    const after = before + amount;
    this.balances.set(currency.toUpperCase(), after);
    return { before, after };
  }

  /** 400 "Insufficient balance" when the wallet holds less than `amount` minor units. */
  ensureBalance(currency: string, amount: bigint): void {
    if (amount > this.balance(currency)) throw badRequest('Insufficient balance');
  }

  /** Takes `amount` minor units from the wallet (see `ensureBalance`); returns the balances before and after. */
  debit(currency: string, amount: bigint): { before: bigint; after: bigint } {
    this.ensureBalance(currency, amount);
    return this.credit(currency, -amount);
  }

  /** Runs `task` after `ms` (or earlier, on `flushScheduled`); cancelled by `reset`. */
  later(ms: number, task: () => void): void {
    const timer = setTimeout(() => {
      this.scheduled.delete(timer);
      task();
    }, ms);
    timer.unref();
    this.scheduled.set(timer, task);
  }

  /** Runs every scheduled task now (tests and demos need not wait); returns how many ran. */
  flushScheduled(): number {
    const tasks = [...this.scheduled];
    this.cancelScheduled();
    for (const [, task] of tasks) task();
    return tasks.length;
  }

  /** Drops every scheduled task. */
  cancelScheduled(): void {
    for (const timer of this.scheduled.keys()) clearTimeout(timer);
    this.scheduled.clear();
  }

  /** Back to the seed: no records, seed balances, empty call log, nothing scheduled. */
  reset(): void {
    this.cancelScheduled();
    Object.assign(this, new SimulatorState(this.now, this.callLogLimit));
  }

  /**
   * The records, balances and used references as JSON (bigints and Maps tagged), for
   * SIMULATOR_STATE_FILE: what a restarted simulator must remember so that the gateway's customers
   * and cards still exist upstream. The call log, faults and scheduled work are not kept.
   */
  snapshot(): string {
    const {
      calls: _calls,
      scheduled: _scheduled,
      now: _now,
      callLogLimit: _limit,
      ...kept
    } = this as unknown as Record<string, unknown>;
    return JSON.stringify(kept, (_key, value: unknown) => {
      if (typeof value === 'bigint') return { $bigint: value.toString() };
      if (value instanceof Map) return { $map: [...value.entries()] };
      if (value instanceof Set) return { $set: [...value] };
      return value;
    });
  }

  /** Loads a `snapshot()` over the current records (scheduled work and the call log are left as they are). */
  restore(json: string): void {
    const kept = JSON.parse(json, (_key, value: unknown) => {
      if (value && typeof value === 'object') {
        const tagged = value as { $bigint?: string; $map?: Array<[unknown, unknown]>; $set?: unknown[] };
        if (typeof tagged.$bigint === 'string') return BigInt(tagged.$bigint);
        if (Array.isArray(tagged.$map)) return new Map(tagged.$map);
        if (Array.isArray(tagged.$set)) return new Set(tagged.$set);
      }
      return value;
    }) as Record<string, unknown>;
    Object.assign(this, kept);
  }

  /** Record counts, for GET /__admin/state. */
  counts(): Record<string, number> {
    return {
      customers: this.customers.size,
      collections: this.collections.size,
      beneficiaries: this.beneficiaries.size,
      payouts: this.payouts.size,
      quotes: this.quotes.size,
      swaps: this.swaps.size,
      cardUsers: this.cardUsers.size,
      cards: this.cards.size,
      cardTransactions: this.cardTransactions.length,
      virtualAccounts: this.virtualAccounts.size,
      calls: this.calls.length,
      scheduled: this.scheduled.size,
    };
  }
}
