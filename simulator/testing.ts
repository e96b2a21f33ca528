/** Helpers for the simulator's own tests (jest, `app.inject`; no port is opened). */
import type { InjectOptions } from 'fastify';
import { buildSimulator, type Simulator, type SimulatorOptions } from './app';

export const TEST_KEY = 'sk.0123456789abcdef.simtest';
export const T0 = Date.parse('2026-01-01T00:00:00.000Z');

export interface TestSim extends Simulator {
  /** Moves the injected clock forward. */
  advance(ms: number): void;
  /** An authorised /api/v1 call; answers status and parsed JSON body. */
  api(method: InjectOptions['method'], path: string, body?: unknown): Promise<{ status: number; body: any }>;
  /** An /__admin call. */
  admin(method: InjectOptions['method'], path: string, body?: unknown): Promise<{ status: number; body: any }>;
  /** Creates a customer and answers its record. */
  customer(email?: string, extra?: Record<string, unknown>): Promise<any>;
}

export async function testSimulator(options: Partial<SimulatorOptions> = {}): Promise<TestSim> {
  let now = T0;
  const sim = await buildSimulator({
    apiKey: TEST_KEY,
    now: () => now,
    cardCreateDelayMs: 60_000,
    cardTxnSettleDelayMs: 60_000,
    ...options,
  });
  const send = async (method: InjectOptions['method'], url: string, body: unknown, headers: Record<string, string>) => {
    const res = await sim.app.inject({
      method,
      url,
      headers,
      ...(body === undefined ? {} : { payload: body as object }),
    });
    return { status: res.statusCode, body: res.body ? safeJson(res.body) : undefined };
  };
  const api: TestSim['api'] = (method, path, body) =>
    send(method, `/api/v1${path}`, body, { authorization: `Bearer ${TEST_KEY}` });
  let n = 0;
  return {
    ...sim,
    advance: (ms) => {
      now += ms;
    },
    api,
    admin: (method, path, body) => send(method, `/__admin${path}`, body, {}),
    customer: async (email = `c${++n}@example.com`, extra = {}) => {
      const res = await api('POST', '/customers', {
        email,
        firstName: 'Ada',
        lastName: 'Obi',
        phone: '8012345678',
        countryCode: '+234',
        ...extra,
      });
      if (res.status !== 200) throw new Error(`customer: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.data;
    },
  };
}

/** The body of POST /virtualcards/registercarduser for a Nigerian card user (with a BVN). */
export function cardUserBody(customerEmail: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    customerEmail,
    idNumber: 'A1234567',
    idType: 'PASSPORT',
    firstName: 'Ada',
    lastName: 'Obi',
    phoneNumber: '+2348012345678',
    city: 'Lagos',
    state: 'Lagos',
    zipCode: '100001',
    line1: '1 Marina',
    houseName: '1',
    bvn: '22222222222',
    userPhoto: 'x',
    country: 'NG',
    ...overrides,
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
