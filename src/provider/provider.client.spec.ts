import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ErrorCode, ProviderError, ValidationError } from '../common/errors';
import {
  type ProviderCallOutcome,
  ProviderClient,
  type ProviderClientOptions,
  type ProviderLogger,
} from './provider.client';

// ---------------------------------------------------------------------------------------------
// A real local HTTP server standing in for the provider, answering sample bodies built from the
// field tables of docs/provider.md#operations (mixed number/string money, lower- and upper-case codes).
// ---------------------------------------------------------------------------------------------

const API_KEY = 'sk.0123456789abcdef0123456789abcdef.secretpart';
const CARD_NUMBER = '5399838383838381';
const CVV = '731';
const T0 = '2024-05-01T10:00:00.000Z';
const T1 = '2024-05-01T10:00:05.123Z';
const stamps = { createdAt: T0, updatedAt: T1 };

interface Received {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  body: any;
}

/** What the fake answers: an envelope around `data`, a raw body, a bare status, or nothing (hang / reset). */
type Reply = {
  status?: number;
  data?: unknown;
  envelope?: unknown;
  raw?: string;
  contentType?: string;
  hang?: boolean;
  reset?: boolean;
  headers?: Record<string, string>;
};

const customer = {
  id: 'cus_1',
  ...stamps,
  firstName: 'Ada',
  lastName: 'Obi',
  email: 'ada@example.com',
  phone: '8012345678',
  countryCode: '+234',
  blacklist: false,
};
const card = {
  id: 'card_1',
  ...stamps,
  balance: 25.5,
  cardNumber: CARD_NUMBER,
  last4: '8381',
  cardName: 'Ada Obi',
  cardType: 'virtual',
  cardBrand: 'visa',
  cvv2: CVV,
  expiry: '2027-09-30T00:00:00.000Z',
  valid: '09/2027',
  reference: 'card-ref-1',
  createdStatus: 'success',
  customerId: null,
  billingAddress: { city: 'Lagos', street: '1 Marina', zipCode: '100001', countryCode: 'NG', country: 'Nigeria' },
  customerEmail: 'ada@example.com',
};
const cardTx = (over: Record<string, unknown>) => ({
  id: 'ctx_1',
  ...stamps,
  type: 'credit',
  narrative: null,
  status: 'pending',
  currency: 'usd',
  reference: 'ct-ref',
  cardId: 'card_1',
  ...over,
});

/** Sample `data` per route ("METHOD /path" without the /api/v1 prefix). */
const SAMPLES: Record<string, unknown> = {
  'POST /customers/': customer,
  'PUT /customers/cus_1': { ...customer, lastName: 'Okafor', transactions: [] },
  'GET /customers/cus_1': {
    ...customer,
    firstName: null,
    lastName: null,
    phone: null,
    countryCode: '234',
    blacklist: true,
    customerId: 'cus_1',
    meta: { page: 1, take: 10, itemCount: 0, pageCount: 0, hasPreviousPage: false, hasNextPage: false },
  },
  'POST /wallets/collections/initialize': {
    id: 'col_1',
    ...stamps,
    accountName: 'Ada Obi',
    accountNumber: '9912345678',
    bankName: 'Test Bank',
    type: 'credit',
    description: 'Invoice 7',
    customerId: 'cus_1',
    companyId: 'co_1',
    reference: 'col-ref-1',
    channel: 'collection',
    amount: 650,
    currency: 'NGN',
    action: 'deposit_ngn',
    status: 'processing',
    fees: 3.25,
    expiryInSeconds: 7200,
    expiryDate: '2024-05-01T12:00:00.000Z',
  },
  'POST /beneficiaries': {
    id: 'ben_1',
    ...stamps,
    currency: 'ngn',
    country: 'ng',
    status: 'success',
    reference: 'ben-ref-1',
    destination: {
      type: 'BANK',
      bankCode: '058',
      bankName: 'GTBank',
      accountName: 'Ada Obi',
      accountNumber: '0123456789',
    },
  },
  'GET /wallets/payout/supported-countries/GH': {
    code: 'GH',
    name: 'Ghana',
    flag: '🇬🇭',
    dialCode: '+233',
    destination: {
      MOBILEMONEY: [
        { name: 'type', type: 'string', required: true, const: 'MOBILEMONEY' },
        { name: 'network', type: 'string', required: true, enum: ['MTN', 'VODAFONE', 'AIRTELTIGO'] },
        { name: 'accountName', type: 'string', required: true },
        { name: 'accountNumber', type: 'string', required: true, pattern: '^\\d{10}$' },
      ],
    },
  },
  'POST /wallets/payout/initialize': {
    id: 'tx_1',
    ...stamps,
    companyId: 'co_1',
    customerId: 'cus_1',
    reference: 'pay-ref-1',
    channel: 'payout',
    description: 'Rent',
    type: 'debit',
    status: 'initiated',
    action: 'ng_account_payout',
    fees: '1.5',
    centFees: 150,
    amount: 100,
    centAmount: 10000,
    spotPrice: 1,
  },
  'POST /wallets/payout/finalize': {
    id: 'tx_1',
    ...stamps,
    companyId: 'co_1',
    customerId: 'cus_1',
    reference: 'pay-ref-1',
    channel: 'payout',
    description: 'Rent',
    type: 'debit',
    status: 'pending',
    action: 'ng_account_payout',
    fees: 1.5,
    amount: '100',
    exchangeRate: '1540.25',
    beneficiary: 'ben_1',
    payoutAmount: 154025,
    payoutCurrency: 'ngn',
  },
  'GET /transactions/tx_1': {
    id: 'tx_1',
    ...stamps,
    companyId: 'co_1',
    reference: 'pay-ref-1',
    channel: 'payout',
    description: 'Rent',
    type: 'DEBIT',
    status: 'SUCCESS',
    action: 'NG_ACCOUNT_PAYOUT',
    fees: '1.50',
    amount: '100.00',
    exchangeRate: '1540.25',
    payoutAmount: 154025,
    payoutCurrency: 'NGN',
    payoutUsdAmount: '100.00',
    balanceBefore: '1000.00',
    balanceAfter: '898.50',
    currency: 'USD',
    beneficiary: { id: 'ben_1', type: 'BANK', bankName: 'GTBank', accountName: 'Ada Obi', accountNumber: '0123456789' },
  },
  'POST /wallets/initialize-swap': {
    id: 'quote_1',
    ...stamps,
    sourceCurrency: 'usd',
    targetCurrency: 'ngn',
    sourceAmount: '10.00',
    targetAmount: '15402.505',
    amount: '15402.505',
    usdAmount: '10',
    fee: '0.10',
    expiration: '2024-05-01T10:04:10.000Z',
    expirationInSec: '250',
    conversionRate: { amount: '1540.2505', currency: 'ngn' },
  },
  'POST /wallets/finalize-swap': {
    id: 'swap_1',
    ...stamps,
    reference: 'swap-ref-1',
    description: 'swap',
    balanceAfter: 890.5,
    amount: 10,
    centAmount: 1000,
    fees: 0.1,
    centFees: 10,
    spotPrice: '1540.2505',
    action: 'swap_usd_ngn',
    type: 'debit',
    status: 'success',
    channel: 'swap',
    companyId: 'co_1',
  },
  'POST /virtual-accounts': {
    id: 'va_1',
    ...stamps,
    currency: 'ngn',
    bank: 'providus',
    customerId: 'cus_1',
    bankName: 'Providus Bank',
    reference: 'va-ref-1',
    accountName: 'Ada Obi',
    accountNumber: '9900112233',
    status: 'active',
  },
  'POST /virtualcards/registercarduser': { id: 'cu_1', status: 'PENDING', customerEmail: 'ada@example.com' },
  'POST /virtualcards/create': {
    id: 'card_1',
    ...stamps,
    cardType: 'virtual',
    cardBrand: 'visa',
    cardUserId: 'cu_1',
    reference: 'card-ref-1',
    createdStatus: 'pending',
    customerId: null,
  },
  'POST /virtualcards/freeze': { ...card, status: 'frozen' },
  'POST /virtualcards/unfreeze': { ...card, status: 'active' },
  'POST /virtualcards/terminate': { ...card, status: 'terminated' },
  'POST /virtualcards/topup': cardTx({
    id: 'ctx_top',
    amount: 25,
    centAmount: 2500,
    method: 'topup',
    reference: 'top-ref-1',
  }),
  'POST /virtualcards/withdraw': cardTx({
    id: 'ctx_wd',
    amount: '10.50',
    centAmount: '1050',
    method: 'withdrawal',
    reference: 'wd-ref-1',
  }),
  'GET /virtualcards/cards/card_1/transactions': {
    cardTransactions: [
      cardTx({ id: 'ctx_top', amount: '25', centAmount: 2500, method: 'topup', status: 'success' }),
      cardTx({ id: 'ctx_wd', amount: 10.5, method: 'withdrawal', status: 'success', narrative: 'ATM' }),
    ],
    meta: { page: 1, take: 10, itemCount: 2, pageCount: 1, hasPreviousPage: false, hasNextPage: false },
  },
};

class FakeProvider {
  readonly received: Received[] = [];
  /** Per-test override; return undefined to fall back to the samples. */
  handler?: (req: Received, n: number) => Reply | undefined;
  private readonly server: Server;

  constructor() {
    this.server = createServer((req, res) => {
      let text = '';
      req.on('data', (chunk) => (text += chunk));
      req.on('end', () => {
        const url = new URL(req.url ?? '/', 'http://x');
        const path = url.pathname.replace(/^\/api\/v1/, '');
        const received: Received = {
          method: req.method ?? '',
          path,
          query: Object.fromEntries(url.searchParams),
          headers: req.headers,
          body: text ? JSON.parse(text) : undefined,
        };
        this.received.push(received);
        const reply = this.handler?.(received, this.received.length) ?? this.sample(received);
        if (reply.hang) return;
        if (reply.reset) return req.socket.destroy();
        const body =
          reply.raw ?? JSON.stringify(reply.envelope ?? { status: true, message: 'successful', data: reply.data });
        res.writeHead(reply.status ?? 200, {
          'content-type': reply.contentType ?? 'application/json',
          ...reply.headers,
        });
        res.end(body);
      });
    });
  }

  private sample(req: Received): Reply {
    const data = SAMPLES[`${req.method} ${req.path}`];
    return data === undefined
      ? { status: 404, envelope: { statusCode: 404, message: `Cannot ${req.method} ${req.path}`, error: 'Not Found' } }
      : { data };
  }

  async listen(port = 0): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(port, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/api/v1`;
  }

  listenSoon(port: number): void {
    this.server.listen(port, '127.0.0.1');
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => (this.server.listening ? this.server.close(() => resolve()) : resolve()));
  }
}

interface LogLine {
  level: keyof ProviderLogger;
  obj: Record<string, unknown>;
  msg: string;
}

function capture(onLine?: (line: LogLine) => void): { logger: ProviderLogger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const at = (level: keyof ProviderLogger) => (obj: object, msg: string) => {
    const line = { level, obj: obj as Record<string, unknown>, msg };
    lines.push(line);
    onLine?.(line);
  };
  return { logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }, lines };
}

const json = (value: unknown) => JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v));

async function failureOf(promise: Promise<unknown>): Promise<ProviderError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ProviderError) return error;
    throw new Error(`expected a ProviderError, got ${String(error)}`, { cause: error });
  }
  throw new Error('expected the call to fail');
}

async function freePort(): Promise<number> {
  const probe = new FakeProvider();
  const url = await probe.listen();
  await probe.close();
  return Number(new URL(url).port);
}

describe('ProviderClient against a local HTTP provider', () => {
  let fake: FakeProvider;
  let baseUrl: string;
  let calls: Array<{ operation: string; outcome: ProviderCallOutcome; seconds: number }>;
  let log: ReturnType<typeof capture>;

  const client = (over: Partial<ProviderClientOptions> = {}) =>
    new ProviderClient({
      baseUrl,
      apiKey: API_KEY,
      timeoutMs: 1000,
      retry: { retries: 2, baseDelayMs: 10 },
      logger: log.logger,
      onCall: (operation, outcome, seconds) => calls.push({ operation, outcome, seconds }),
      ...over,
    });

  beforeEach(async () => {
    fake = new FakeProvider();
    baseUrl = await fake.listen();
    calls = [];
    log = capture();
  });
  afterEach(() => fake.close());

  describe('the 20 operations: method, path, body (minor units) and normalised answer', () => {
    const stamp0 = new Date(T0);
    const cases: Array<{
      op: string;
      run: (c: ProviderClient) => Promise<unknown>;
      method: string;
      path: string;
      body?: unknown;
      query?: Record<string, string>;
      expected: Record<string, unknown>;
    }> = [
      {
        op: 'createCustomer',
        run: (c) =>
          c.createCustomer({
            firstName: 'Ada',
            lastName: 'Obi',
            email: 'ada@example.com',
            phone: '8012345678',
            countryCode: '+234',
          }),
        method: 'POST',
        path: '/customers/',
        body: { firstName: 'Ada', lastName: 'Obi', email: 'ada@example.com', phone: '8012345678', countryCode: '+234' },
        expected: {
          id: 'cus_1',
          email: 'ada@example.com',
          firstName: 'Ada',
          blacklisted: false,
          createdAt: stamp0,
          updatedAt: new Date(T1),
        },
      },
      {
        op: 'updateCustomer',
        run: (c) => c.updateCustomer('cus_1', { firstName: 'Ada', email: 'ada@example.com', lastName: 'Okafor' }),
        method: 'PUT',
        path: '/customers/cus_1',
        body: { firstName: 'Ada', email: 'ada@example.com', lastName: 'Okafor' },
        expected: { id: 'cus_1', lastName: 'Okafor', blacklisted: false },
      },
      {
        op: 'getCustomer',
        run: (c) => c.getCustomer('cus_1'),
        method: 'GET',
        path: '/customers/cus_1',
        expected: { id: 'cus_1', firstName: null, lastName: null, phone: null, countryCode: '234', blacklisted: true },
      },
      {
        op: 'initializeCollection',
        run: (c) =>
          c.initializeCollection({
            country: 'ng',
            currency: 'ngn',
            customerEmail: 'ada@example.com',
            amountMinor: 65000n,
            reference: 'col-ref-1',
            description: 'Invoice 7',
            bank: 'Test Bank',
            accountName: 'Ada Obi',
          }),
        method: 'POST',
        path: '/wallets/collections/initialize',
        body: {
          country: 'NG',
          currency: 'NGN',
          customerEmail: 'ada@example.com',
          amount: 65000,
          reference: 'col-ref-1',
          description: 'Invoice 7',
          payload: { type: 'Test Bank', accountName: 'Ada Obi' },
        },
        expected: {
          id: 'col_1',
          amountMinor: 65000n,
          feeMinor: 325n,
          currency: 'NGN',
          status: 'processing',
          accountNumber: '9912345678',
          expiresAt: new Date('2024-05-01T12:00:00.000Z'),
          expiryInSeconds: 7200,
        },
      },
      {
        op: 'createBeneficiary',
        run: (c) =>
          c.createBeneficiary({
            currency: 'NGN',
            country: 'NG',
            reference: 'ben-ref-1',
            customerEmail: 'ada@example.com',
            callbackUrl: 'https://gw.example/webhooks/provider',
            destination: {
              type: 'BANK',
              bankCode: '058',
              bankName: 'GTBank',
              accountName: 'Ada Obi',
              accountNumber: '0123456789',
            },
          }),
        method: 'POST',
        path: '/beneficiaries',
        body: {
          currency: 'NGN',
          reference: 'ben-ref-1',
          country: 'NG',
          callbackUrl: 'https://gw.example/webhooks/provider',
          customerEmail: 'ada@example.com',
          destination: {
            type: 'BANK',
            bankCode: '058',
            bankName: 'GTBank',
            accountName: 'Ada Obi',
            accountNumber: '0123456789',
          },
        },
        expected: {
          id: 'ben_1',
          status: 'success',
          currency: 'NGN',
          country: 'NG',
          destination: {
            type: 'BANK',
            bankCode: '058',
            bankName: 'GTBank',
            accountName: 'Ada Obi',
            accountNumber: '0123456789',
          },
        },
      },
      {
        op: 'getSupportedCountry',
        run: (c) => c.getSupportedCountry('gh'),
        method: 'GET',
        path: '/wallets/payout/supported-countries/GH',
        expected: {
          code: 'GH',
          name: 'Ghana',
          dialCode: '+233',
          destinations: {
            MOBILEMONEY: [
              { name: 'type', type: 'string', required: true, const: 'MOBILEMONEY' },
              { name: 'network', type: 'string', required: true, enum: ['MTN', 'VODAFONE', 'AIRTELTIGO'] },
              { name: 'accountName', type: 'string', required: true },
              { name: 'accountNumber', type: 'string', required: true, pattern: '^\\d{10}$' },
            ],
          },
        },
      },
      {
        op: 'initializePayout',
        run: (c) =>
          c.initializePayout({
            amountMinor: 10000n,
            sourceCurrency: 'usd',
            reference: 'pay-ref-1',
            customerEmail: 'ada@example.com',
            description: 'Rent',
            beneficiaryId: 'ben_1',
            callbackUrl: 'https://gw.example/webhooks/provider',
          }),
        method: 'POST',
        path: '/wallets/payout/initialize',
        body: {
          amount: 10000,
          reference: 'pay-ref-1',
          customerEmail: 'ada@example.com',
          description: 'Rent',
          beneficiaryId: 'ben_1',
          sourceWalletCurrency: 'USD',
          callbackUrl: 'https://gw.example/webhooks/provider',
        },
        expected: {
          id: 'tx_1',
          status: 'initiated',
          type: 'debit',
          action: 'ng_account_payout',
          currency: 'USD',
          amountMinor: 10000n,
          feeMinor: 150n,
          spotPrice: '1',
          payoutAmountMinor: null,
        },
      },
      {
        op: 'finalizePayout',
        run: (c) => c.finalizePayout({ transactionId: 'tx_1', sourceCurrency: 'USD' }),
        method: 'POST',
        path: '/wallets/payout/finalize',
        body: { transactionId: 'tx_1' },
        expected: {
          id: 'tx_1',
          status: 'pending',
          currency: 'USD',
          amountMinor: 10000n,
          feeMinor: 150n,
          exchangeRate: '1540.25',
          beneficiaryId: 'ben_1',
          beneficiaryDetails: null,
          payoutAmountMinor: 15402500n,
          payoutCurrency: 'NGN',
        },
      },
      {
        op: 'getTransaction',
        run: (c) => c.getTransaction('tx_1'),
        method: 'GET',
        path: '/transactions/tx_1',
        expected: {
          id: 'tx_1',
          status: 'success',
          type: 'debit',
          action: 'ng_account_payout',
          currency: 'USD',
          amountMinor: 10000n,
          feeMinor: 150n,
          beneficiaryId: 'ben_1',
          beneficiaryDetails: {
            id: 'ben_1',
            type: 'BANK',
            bankName: 'GTBank',
            accountName: 'Ada Obi',
            accountNumber: '0123456789',
          },
          payoutAmountMinor: 15402500n,
          payoutCurrency: 'NGN',
          balanceBeforeMinor: 100000n,
          balanceAfterMinor: 89850n,
        },
      },
      {
        op: 'initializeSwap',
        run: (c) => c.initializeSwap({ sourceCurrency: 'usd', targetCurrency: 'ngn', amountMinor: 1000n }),
        method: 'POST',
        path: '/wallets/initialize-swap',
        // SWAP_AMOUNT_UNIT default major (the samples: amount 10 → sourceAmount "10"): 1000 cents go up as 10.
        body: { sourceCurrency: 'USD', amount: 10, targetCurrency: 'NGN' },
        expected: {
          id: 'quote_1',
          sourceCurrency: 'USD',
          targetCurrency: 'NGN',
          sourceAmountMinor: 1000n,
          targetAmountMinor: 1540250n,
          feeMinor: 10n,
          rate: '1540.2505',
          rateCurrency: 'NGN',
          expiresAt: new Date('2024-05-01T10:04:10.000Z'),
          expiresInSeconds: 250,
        },
      },
      {
        op: 'finalizeSwap',
        run: (c) => c.finalizeSwap({ quoteId: 'quote_1', sourceCurrency: 'USD' }),
        method: 'POST',
        path: '/wallets/finalize-swap',
        body: { quoteId: 'quote_1' },
        expected: {
          id: 'swap_1',
          status: 'success',
          action: 'swap_usd_ngn',
          currency: 'USD',
          amountMinor: 1000n,
          feeMinor: 10n,
          balanceAfterMinor: 89050n,
          spotPrice: '1540.2505',
        },
      },
      {
        op: 'createVirtualAccount',
        run: (c) =>
          c.createVirtualAccount({
            firstName: 'Ada',
            lastName: 'Obi',
            bvn: '22222222222',
            dateOfBirth: '1990-01-31',
            customerEmail: 'ada@example.com',
            reference: 'va-ref-1',
            bank: 'providus',
            phoneNumber: '+2348012345678',
          }),
        method: 'POST',
        path: '/virtual-accounts',
        body: {
          firstName: 'Ada',
          lastName: 'Obi',
          bvn: '22222222222',
          dateOfBirth: '1990-01-31',
          customerEmail: 'ada@example.com',
          reference: 'va-ref-1',
          bank: 'providus',
          phoneNumber: '+2348012345678',
        },
        expected: { id: 'va_1', currency: 'NGN', bank: 'providus', status: 'active', accountNumber: '9900112233' },
      },
      {
        op: 'registerCardUser',
        run: (c) =>
          c.registerCardUser({
            customerEmail: 'ada@example.com',
            idNumber: 'A1234567',
            idType: 'PASSPORT',
            firstName: 'Ada',
            lastName: 'Obi',
            phoneNumber: '+2348012345678',
            city: 'Lagos',
            state: 'Lagos',
            zipCode: '100001',
            line1: '1 Marina',
            houseName: 'Marina House',
            bvn: '22222222222',
            userPhoto: 'https://img.example/ada.jpg',
            country: 'NG',
          }),
        method: 'POST',
        path: '/virtualcards/registercarduser',
        body: {
          customerEmail: 'ada@example.com',
          idNumber: 'A1234567',
          idType: 'PASSPORT',
          firstName: 'Ada',
          lastName: 'Obi',
          phoneNumber: '+2348012345678',
          city: 'Lagos',
          state: 'Lagos',
          zipCode: '100001',
          line1: '1 Marina',
          houseName: 'Marina House',
          bvn: '22222222222',
          userPhoto: 'https://img.example/ada.jpg',
          country: 'NG',
        },
        expected: { id: 'cu_1', status: 'pending' },
      },
      {
        op: 'createCard',
        run: (c) =>
          c.createCard({
            customerEmail: 'ada@example.com',
            cardType: 'virtual',
            cardBrand: 'visa',
            reference: 'card-ref-1',
            amountMinor: 500n,
            firstName: 'Ada',
            lastName: 'Obi',
          }),
        method: 'POST',
        path: '/virtualcards/create',
        body: {
          customerEmail: 'ada@example.com',
          cardBrand: 'visa',
          cardType: 'virtual',
          reference: 'card-ref-1',
          amount: 500,
          firstName: 'Ada',
          lastName: 'Obi',
        },
        expected: {
          id: 'card_1',
          createdStatus: 'pending',
          brand: 'visa',
          cardType: 'virtual',
          cardUserId: 'cu_1',
          customerId: null,
        },
      },
      ...(['freeze', 'unfreeze', 'terminate'] as const).map((action) => ({
        op: `${action}Card`,
        run: (c: ProviderClient) => c[`${action}Card`]('card_1'),
        method: 'POST',
        path: `/virtualcards/${action}`,
        body: { cardId: 'card_1' },
        expected: {
          id: 'card_1',
          status: { freeze: 'frozen', unfreeze: 'active', terminate: 'terminated' }[action],
          last4: '8381',
          brand: 'visa',
          validThru: '09/2027',
          expiresAt: new Date('2027-09-30T00:00:00.000Z'),
          balanceMinor: 2550n,
          currency: 'USD',
        },
      })),
      {
        op: 'topUpCard',
        run: (c) => c.topUpCard({ cardId: 'card_1', amountMinor: 2500n, reference: 'top-ref-1' }),
        method: 'POST',
        path: '/virtualcards/topup',
        body: { amount: 2500, cardId: 'card_1', reference: 'top-ref-1' },
        expected: {
          id: 'ctx_top',
          method: 'topup',
          status: 'pending',
          amountMinor: 2500n,
          currency: 'USD',
          cardId: 'card_1',
        },
      },
      {
        op: 'withdrawFromCard',
        run: (c) => c.withdrawFromCard({ cardId: 'card_1', amountMinor: 1050n, reference: 'wd-ref-1' }),
        method: 'POST',
        path: '/virtualcards/withdraw',
        body: { amount: 1050, cardId: 'card_1', reference: 'wd-ref-1' },
        expected: { id: 'ctx_wd', method: 'withdrawal', status: 'pending', amountMinor: 1050n, currency: 'USD' },
      },
      {
        op: 'listCardTransactions',
        run: (c) => c.listCardTransactions('card_1', { order: 'DESC', page: 1, take: 10 }),
        method: 'GET',
        path: '/virtualcards/cards/card_1/transactions',
        query: { order: 'DESC', page: '1', take: '10' },
        expected: {
          transactions: [
            expect.objectContaining({ id: 'ctx_top', amountMinor: 2500n, method: 'topup', status: 'success' }),
            expect.objectContaining({ id: 'ctx_wd', amountMinor: 1050n, method: 'withdrawal', narrative: 'ATM' }),
          ],
          meta: { page: 1, take: 10, itemCount: 2, pageCount: 1, hasPreviousPage: false, hasNextPage: false },
        },
      },
    ];

    it('covers every documented operation exactly once', () => {
      expect(cases.map((c) => c.op).sort()).toEqual(
        [
          'createCustomer',
          'updateCustomer',
          'getCustomer',
          'initializeCollection',
          'createBeneficiary',
          'getSupportedCountry',
          'initializePayout',
          'finalizePayout',
          'initializeSwap',
          'finalizeSwap',
          'createVirtualAccount',
          'registerCardUser',
          'createCard',
          'freezeCard',
          'unfreezeCard',
          'terminateCard',
          'topUpCard',
          'withdrawFromCard',
          'listCardTransactions',
          'getTransaction',
        ].sort(),
      );
      const methods = Object.getOwnPropertyNames(ProviderClient.prototype).filter(
        (m) =>
          m !== 'constructor' &&
          !['call', 'unwrap', 'toProviderError', 'finish', 'cardAction', 'checked', 'checkAmountFits'].includes(m),
      );
      expect(methods.sort()).toEqual(cases.map((c) => c.op).sort());
    });

    it.each(cases)(
      '$op sends $method $path and normalises the answer',
      async ({ op, run, method, path, body, query, expected }) => {
        const result = (await run(client())) as Record<string, unknown>;
        expect(fake.received).toHaveLength(1);
        const [req] = fake.received;
        expect(req.method).toBe(method);
        expect(req.path).toBe(path);
        expect(req.body).toEqual(body);
        expect(req.query).toEqual(query ?? {});
        expect(result).toMatchObject(expected);
        expect(result.raw).toEqual(expect.any(Object));
        expect(json(result)).not.toContain(CARD_NUMBER);
        expect(json(result)).not.toMatch(/cvv|cardNumber/i);
        expect(calls).toEqual([{ operation: op, outcome: 'ok', seconds: expect.any(Number) }]);
      },
    );

    it('keeps the provider data as raw (minus card secrets)', async () => {
      const collection = await client().initializeCollection({
        country: 'NG',
        currency: 'NGN',
        customerEmail: 'a@b.c',
        amountMinor: 65000n,
        reference: 'r',
        description: 'd',
        bank: 'b',
        accountName: 'n',
      });
      expect(collection.raw).toEqual(SAMPLES['POST /wallets/collections/initialize']);
      const frozen = await client().freezeCard('card_1');
      const { cardNumber: _n, cvv2: _c, ...rest } = SAMPLES['POST /virtualcards/freeze'] as Record<string, unknown>;
      expect(frozen.raw).toEqual(rest);
      expect(Object.keys(frozen)).not.toEqual(expect.arrayContaining(['cardNumber']));
    });

    it('accepts a register-card-user answer without data ("Response body: not shown")', async () => {
      fake.handler = () => ({ envelope: { status: true, message: 'card user registered' } });
      const user = await client().registerCardUser({
        customerEmail: 'a@b.c',
        idNumber: '1',
        idType: 'NIN',
        firstName: 'A',
        lastName: 'B',
        phoneNumber: '1',
        city: 'c',
        state: 's',
        zipCode: 'z',
        line1: 'l',
        houseName: 'h',
        userPhoto: 'p',
      });
      expect(user).toEqual({ id: null, status: null, kycRefused: false, raw: {} });
    });

    it('refuses unsafe inputs before calling the provider', async () => {
      await expect(
        client().initializePayout({
          amountMinor: 2n ** 60n,
          sourceCurrency: 'USD',
          reference: 'r',
          customerEmail: 'e',
          description: 'd',
          beneficiaryId: 'b',
          callbackUrl: 'u',
        }),
      ).rejects.toThrow(ValidationError);
      await expect(
        client().initializeSwap({ sourceCurrency: 'XYZ', targetCurrency: 'NGN', amountMinor: 1n }),
      ).rejects.toThrow(ValidationError);
      expect(fake.received).toHaveLength(0);
    });

    it('encodes path parameters', async () => {
      fake.handler = () => ({ data: customer });
      await client().getCustomer('a/b?c');
      expect(fake.received[0].path).toBe('/customers/a%2Fb%3Fc');
    });
  });

  describe('headers', () => {
    it('sends Bearer auth, accept, content-type and a fresh x-request-id per call', async () => {
      const c = client();
      await c.createCustomer({ firstName: 'A', lastName: 'B', email: 'a@b.c', phone: '1', countryCode: '+1' });
      await c.getCustomer('cus_1');
      const [post, get] = fake.received;
      expect(post.headers.authorization).toBe(`Bearer ${API_KEY}`);
      expect(post.headers.accept).toBe('application/json');
      expect(post.headers['content-type']).toBe('application/json');
      expect(get.headers.authorization).toBe(`Bearer ${API_KEY}`);
      expect(get.headers.accept).toBe('application/json');
      expect(post.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(get.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(get.headers['x-request-id']).not.toBe(post.headers['x-request-id']);
    });

    it('uses the caller’s request id when given', async () => {
      await client().getCustomer('cus_1', { requestId: 'req-123' });
      expect(fake.received[0].headers['x-request-id']).toBe('req-123');
      expect(log.lines.at(-1)?.obj.requestId).toBe('req-123');
    });
  });

  describe('failure mapping (only ProviderError escapes)', () => {
    const create = (c = client()) =>
      c.createCustomer({ firstName: 'A', lastName: 'B', email: 'a@b.c', phone: '1', countryCode: '+1' });

    it('HTTP 4xx with a NestJS body → provider_rejected with the joined messages', async () => {
      fake.handler = () => ({
        status: 400,
        envelope: {
          statusCode: 400,
          message: ['email must be an email', 'phone should not be empty'],
          error: 'Bad Request',
        },
      });
      const error = await failureOf(create());
      expect(error.code).toBe(ErrorCode.ProviderRejected);
      expect(error.status).toBe(422);
      expect(error.message).toBe('email must be an email; phone should not be empty');
      expect(error.providerStatus).toBe(400);
      expect(error.operation).toBe('createCustomer');
      expect(error.extensions).toEqual({ operation: 'createCustomer' });
      expect(calls).toEqual([{ operation: 'createCustomer', outcome: 'rejected', seconds: expect.any(Number) }]);
    });

    it('HTTP 4xx with {status:false, message} → provider_rejected with the message', async () => {
      fake.handler = () => ({ status: 404, envelope: { status: false, message: 'Customer not found' } });
      const error = await failureOf(client().getCustomer('nope'));
      expect(error).toMatchObject({
        code: ErrorCode.ProviderRejected,
        message: 'Customer not found',
        providerStatus: 404,
      });
      expect(fake.received).toHaveLength(1);
    });

    it('HTTP 4xx with a string message and with only an error field', async () => {
      fake.handler = (_r, n) =>
        n === 1
          ? { status: 409, envelope: { statusCode: 409, message: 'Customer exists', error: 'Conflict' } }
          : { status: 403, envelope: { error: 'Forbidden' } };
      expect((await failureOf(create())).message).toBe('Customer exists');
      expect((await failureOf(create())).message).toBe('Forbidden');
    });

    it('HTTP 200 with status:false → provider_rejected', async () => {
      fake.handler = () => ({ envelope: { status: false, message: 'Insufficient balance' } });
      const error = await failureOf(create());
      expect(error).toMatchObject({
        code: ErrorCode.ProviderRejected,
        message: 'Insufficient balance',
        providerStatus: 200,
      });
    });

    it('non-JSON 4xx → provider_rejected with a generic message', async () => {
      fake.handler = () => ({ status: 422, raw: '<html>Unprocessable</html>', contentType: 'text/html' });
      const error = await failureOf(create());
      expect(error).toMatchObject({
        code: ErrorCode.ProviderRejected,
        message: 'The provider refused the request (HTTP 422).',
        providerStatus: 422,
      });
    });

    it('masks card numbers the provider echoes in a message', async () => {
      fake.handler = () => ({ status: 400, envelope: { statusCode: 400, message: `card ${CARD_NUMBER} is invalid` } });
      const error = await failureOf(client().freezeCard('card_1'));
      expect(error.message).toBe('card [REDACTED] is invalid');
    });

    it.each([
      ['HTTP 500', { status: 500, envelope: { statusCode: 500, message: 'Internal server error' } }, /HTTP 500/],
      ['HTTP 502 with HTML', { status: 502, raw: '<html>Bad gateway</html>', contentType: 'text/html' }, /HTTP 502/],
      ['a redirect', { status: 302, raw: '', headers: { location: 'http://elsewhere.example/' } }, /HTTP 302/],
      ['a non-JSON 200', { raw: 'OK' }, /not JSON/],
      ['an empty 200', { raw: '' }, /not JSON/],
      ['a 200 without the envelope', { raw: JSON.stringify({ id: 'cus_1' }) }, /envelope/],
      ['a 200 with an array body', { raw: JSON.stringify([customer]) }, /envelope/],
      ['a 200 without data', { envelope: { status: true, message: 'ok' } }, /data/],
      ['a 200 whose data lacks the id', { data: { ...customer, id: undefined } }, /id is missing/],
      [
        'a 200 whose data has a bad timestamp',
        { data: { ...customer, createdAt: 'yesterday' } },
        /createdAt is not a timestamp/,
      ],
    ] as Array<[string, Reply, RegExp]>)('%s → provider_unavailable', async (_name, reply, message) => {
      fake.handler = () => reply;
      const error = await failureOf(create());
      expect(error.code).toBe(ErrorCode.ProviderUnavailable);
      expect(error.status).toBe(502);
      expect(error.message).toMatch(message);
      expect(fake.received).toHaveLength(1);
      expect(calls).toEqual([{ operation: 'createCustomer', outcome: 'unavailable', seconds: expect.any(Number) }]);
    });

    it('a malformed money field → provider_unavailable naming the field', async () => {
      fake.handler = () => ({ data: { ...(SAMPLES['POST /virtualcards/topup'] as object), centAmount: 'lots' } });
      const error = await failureOf(client().topUpCard({ cardId: 'card_1', amountMinor: 2500n, reference: 'r' }));
      expect(error).toMatchObject({ code: ErrorCode.ProviderUnavailable, operation: 'topUpCard' });
      expect(error.message).toMatch(/centAmount is invalid/);
    });

    it('no answer within timeoutMs → provider_timeout', async () => {
      fake.handler = () => ({ hang: true });
      const started = Date.now();
      const error = await failureOf(create(client({ timeoutMs: 100 })));
      expect(error).toMatchObject({
        code: ErrorCode.ProviderTimeout,
        operation: 'createCustomer',
        message: 'The provider did not answer within 100 ms.',
      });
      expect(error.status).toBe(504);
      expect(Date.now() - started).toBeLessThan(1000);
      expect(calls).toEqual([{ operation: 'createCustomer', outcome: 'timeout', seconds: expect.any(Number) }]);
    });

    it('connection reset → provider_unavailable, and a write is not retried', async () => {
      fake.handler = () => ({ reset: true });
      const error = await failureOf(create());
      expect(error.code).toBe(ErrorCode.ProviderUnavailable);
      expect(error.message).toMatch(/could not be reached/);
      expect(fake.received).toHaveLength(1);
    });
  });

  describe('retries', () => {
    const create = (c: ProviderClient) =>
      c.createCustomer({ firstName: 'A', lastName: 'B', email: 'a@b.c', phone: '1', countryCode: '+1' });

    it('retries a GET on 503 and succeeds, with the same request id', async () => {
      fake.handler = (_r, n) => (n <= 2 ? { status: 503, raw: 'busy' } : undefined);
      const result = await client().getCustomer('cus_1');
      expect(result.id).toBe('cus_1');
      expect(fake.received).toHaveLength(3);
      expect(new Set(fake.received.map((r) => r.headers['x-request-id'])).size).toBe(1);
      expect(calls).toEqual([{ operation: 'getCustomer', outcome: 'ok', seconds: expect.any(Number) }]);
      expect(log.lines.filter((l) => l.msg === 'provider call retried')).toHaveLength(2);
      expect(log.lines.at(-1)?.obj).toMatchObject({ attempt: 3, status: 200, outcome: 'ok' });
    });

    it('retries a GET after a timeout', async () => {
      fake.handler = (_r, n) => (n === 1 ? { hang: true } : undefined);
      const result = await client({ timeoutMs: 100 }).getCustomer('cus_1');
      expect(result.id).toBe('cus_1');
      expect(fake.received).toHaveLength(2);
    });

    it('gives up on a GET after the configured retries', async () => {
      fake.handler = () => ({ status: 500, raw: 'down' });
      const error = await failureOf(client({ retry: { retries: 1, baseDelayMs: 5 } }).getCustomer('cus_1'));
      expect(error.code).toBe(ErrorCode.ProviderUnavailable);
      expect(fake.received).toHaveLength(2);
      expect(log.lines.at(-1)?.obj).toMatchObject({ attempt: 2, status: 500, outcome: 'unavailable' });
    });

    it('does not retry a GET on a 4xx', async () => {
      fake.handler = () => ({ status: 404, envelope: { statusCode: 404, message: 'Not found' } });
      await failureOf(client().getCustomer('cus_1'));
      expect(fake.received).toHaveLength(1);
    });

    it('never retries a POST on 503', async () => {
      fake.handler = () => ({ status: 503, raw: 'busy' });
      const error = await failureOf(create(client()));
      expect(error.code).toBe(ErrorCode.ProviderUnavailable);
      await new Promise((r) => setTimeout(r, 100));
      expect(fake.received).toHaveLength(1);
    });

    it('never retries a PUT or POST on timeout', async () => {
      fake.handler = () => ({ hang: true });
      const c = client({ timeoutMs: 100 });
      expect((await failureOf(create(c))).code).toBe(ErrorCode.ProviderTimeout);
      expect((await failureOf(c.updateCustomer('cus_1', { firstName: 'A', email: 'a@b.c' }))).code).toBe(
        ErrorCode.ProviderTimeout,
      );
      await new Promise((r) => setTimeout(r, 150));
      expect(fake.received.map((r) => r.method)).toEqual(['POST', 'PUT']);
    });

    it('retries a POST refused before it was sent (ECONNREFUSED), which then reaches the provider once', async () => {
      const port = await freePort();
      const late = new FakeProvider();
      try {
        const lateLog = capture((line) => {
          if (line.msg === 'provider call retried') late.listenSoon(port);
        });
        const c = new ProviderClient({
          baseUrl: `http://127.0.0.1:${port}/api/v1`,
          apiKey: API_KEY,
          timeoutMs: 1000,
          retry: { retries: 2, baseDelayMs: 100 },
          logger: lateLog.logger,
        });
        const result = await create(c);
        expect(result.id).toBe('cus_1');
        expect(late.received).toHaveLength(1);
        expect(lateLog.lines.find((l) => l.msg === 'provider call retried')?.obj).toMatchObject({
          reason: 'ECONNREFUSED',
          attempt: 2,
          method: 'POST',
        });
        expect(lateLog.lines.at(-1)?.obj).toMatchObject({ attempt: 2, outcome: 'ok' });
      } finally {
        await late.close();
      }
    });

    it('reports provider_unavailable when every attempt is refused', async () => {
      const port = await freePort();
      const c = client({ baseUrl: `http://127.0.0.1:${port}/api/v1`, retry: { retries: 2, baseDelayMs: 5 } });
      const error = await failureOf(create(c));
      expect(error).toMatchObject({
        code: ErrorCode.ProviderUnavailable,
        message: 'The provider could not be reached (ECONNREFUSED).',
      });
      expect(log.lines.at(-1)?.obj).toMatchObject({ attempt: 3, status: null, outcome: 'unavailable' });
    });
  });

  describe('logging and metrics', () => {
    it('writes one line per call with operation, method, path, status, durationMs, requestId and attempt', async () => {
      const c = client();
      await c.getCustomer('cus_1', { requestId: 'r-1' });
      fake.handler = () => ({ status: 400, envelope: { statusCode: 400, message: 'bad' } });
      await failureOf(c.topUpCard({ cardId: 'card_1', amountMinor: 1n, reference: 'r' }, { requestId: 'r-2' }));
      expect(log.lines).toHaveLength(2);
      expect(log.lines[0]).toEqual({
        level: 'info',
        msg: 'provider getCustomer ok',
        obj: {
          operation: 'getCustomer',
          method: 'GET',
          path: '/customers/cus_1',
          status: 200,
          durationMs: expect.any(Number),
          requestId: 'r-1',
          attempt: 1,
          outcome: 'ok',
        },
      });
      expect(log.lines[1]).toEqual({
        level: 'warn',
        msg: 'provider topUpCard rejected',
        obj: {
          operation: 'topUpCard',
          method: 'POST',
          path: '/virtualcards/topup',
          status: 400,
          durationMs: expect.any(Number),
          requestId: 'r-2',
          attempt: 1,
          outcome: 'rejected',
          error: 'bad',
        },
      });
      expect(calls.map((c) => [c.operation, c.outcome])).toEqual([
        ['getCustomer', 'ok'],
        ['topUpCard', 'rejected'],
      ]);
      expect(calls.every((c) => c.seconds > 0 && c.seconds < 5)).toBe(true);
    });

    it('never logs the API key, the Authorization header, bodies or card data', async () => {
      const c = client();
      await c.freezeCard('card_1');
      await c.createCustomer({
        firstName: 'Ada',
        lastName: 'Obi',
        email: 'ada@example.com',
        phone: '8012345678',
        countryCode: '+234',
      });
      fake.handler = () => ({ status: 503, raw: 'busy' });
      await failureOf(c.getCustomer('cus_1'));
      const text = JSON.stringify(log.lines);
      expect(log.lines.length).toBeGreaterThanOrEqual(5);
      for (const secret of [
        API_KEY,
        'secretpart',
        'Bearer',
        'authorization',
        CARD_NUMBER,
        'ada@example.com',
        '8012345678',
      ]) {
        expect(text).not.toContain(secret);
      }
      // The CVV is three digits, which a random request id or a duration can contain by chance:
      // look for it as a value, and for any cvv key.
      expect(text).not.toContain(`"${CVV}"`);
      expect(text).not.toMatch(/cvv/i);
    });

    it('a failing onCall hook does not fail the call', async () => {
      const result = await client({
        onCall: () => {
          throw new Error('metrics down');
        },
      }).getCustomer('cus_1');
      expect(result.id).toBe('cus_1');
      expect(log.lines.at(-1)?.msg).toBe('provider onCall hook failed');
    });
  });
});
