import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ErrorCode, ProviderError, ValidationError } from '../common/errors';
import { toProblem } from '../common/problem-details.filter';
import { ProviderAmountMismatchError, differsByUnitFactor } from './answer-checks';
import { callbackAmountMismatch } from './ledger-events.mapper';
import {
  AMOUNT_UNITS,
  type AmountUnit,
  type AmountUnitRow,
  type AmountUnitSettings,
  int32AmountMaxMinor,
  ProviderUnits,
  toWireAmount,
  unitOf,
} from './provider-units';
import { ProviderClient, type ProviderClientOptions, type ProviderLogger } from './provider.client';

// A local HTTP server standing in for the provider: answers `data` per "METHOD /path", records bodies.
class Fake {
  readonly bodies: Array<{ path: string; body: any }> = [];
  answers: Record<string, unknown> = {};
  private readonly server: Server = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://x').pathname.replace(/^\/api\/v1/, '');
      this.bodies.push({ path, body: text ? JSON.parse(text) : undefined });
      const data = this.answers[`${req.method} ${path}`];
      res.writeHead(data === undefined ? 404 : 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(data === undefined ? { statusCode: 404 } : { status: true, message: 'ok', data }));
    });
  });

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/api/v1`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const T = '2024-05-01T10:00:00.000Z';
const key = (row: { operation: string; side: string; field: string }) => `${row.operation} ${row.side} ${row.field}`;

/**
 * Per operation: how to call it (asking `askedMinor`), the route, the answer without amounts, and
 * how to read each amount back from the normalised result. USD/NGN have 2 digits, so 25 read as
 * major is 2500n and as minor 25n: the two readings never agree.
 */
interface OperationCase {
  route: string;
  currency: string;
  base: Record<string, unknown>;
  /** Fields the base needs so that the one under test is not the preferred one, etc. */
  run: (client: ProviderClient, askedMinor: bigint) => Promise<any>;
  read: Record<string, (result: any) => bigint | null>;
  /** The amount field the answer check compares with the request, if any. */
  echoed?: string;
}

const ledgerBase = { id: 'tx_1', reference: 'r', type: 'debit', action: 'ng_account_payout' };
const cardTx = { id: 'ct_1', reference: 'r', cardId: 'card_1', status: 'pending', type: 'credit' };

const OPERATIONS: Record<string, OperationCase> = {
  initializeCollection: {
    route: 'POST /wallets/collections/initialize',
    currency: 'NGN',
    base: { id: 'c1', reference: 'r', status: 'processing', currency: 'ngn', accountNumber: '1', expiryDate: T },
    run: (c, amountMinor) =>
      c.initializeCollection({
        country: 'NG',
        currency: 'NGN',
        customerEmail: 'a@b.c',
        amountMinor,
        reference: 'r',
        description: 'd',
        bank: 'b',
        accountName: 'n',
      }),
    read: { amount: (r) => r.amountMinor, fees: (r) => r.feeMinor },
    echoed: 'amount',
  },
  initializePayout: {
    route: 'POST /wallets/payout/initialize',
    currency: 'USD',
    base: { ...ledgerBase, status: 'initiated' },
    run: (c, amountMinor) =>
      c.initializePayout({
        amountMinor,
        sourceCurrency: 'USD',
        reference: 'r',
        customerEmail: 'a@b.c',
        description: 'd',
        beneficiaryId: 'b',
        callbackUrl: 'http://gw/webhooks/provider',
      }),
    read: {
      amount: (r) => r.amountMinor,
      centAmount: (r) => r.amountMinor,
      fees: (r) => r.feeMinor,
      centFees: (r) => r.feeMinor,
    },
    echoed: 'amount',
  },
  finalizePayout: {
    route: 'POST /wallets/payout/finalize',
    currency: 'USD',
    base: { ...ledgerBase, status: 'pending', payoutCurrency: 'usd' },
    run: (c, amountMinor) => c.finalizePayout({ transactionId: 'tx_1', sourceCurrency: 'USD', amountMinor }),
    read: {
      amount: (r) => r.amountMinor,
      centAmount: (r) => r.amountMinor,
      fees: (r) => r.feeMinor,
      centFees: (r) => r.feeMinor,
      payoutAmount: (r) => r.payoutAmountMinor,
    },
    echoed: 'amount',
  },
  getTransaction: {
    route: 'GET /transactions/tx_1',
    currency: 'USD',
    base: { ...ledgerBase, status: 'SUCCESS', currency: 'USD', payoutCurrency: 'USD' },
    run: (c) => c.getTransaction('tx_1'),
    read: {
      amount: (r) => r.amountMinor,
      centAmount: (r) => r.amountMinor,
      fees: (r) => r.feeMinor,
      centFees: (r) => r.feeMinor,
      payoutAmount: (r) => r.payoutAmountMinor,
      balanceBefore: (r) => r.balanceBeforeMinor,
      balanceAfter: (r) => r.balanceAfterMinor,
    },
  },
  initializeSwap: {
    route: 'POST /wallets/initialize-swap',
    currency: 'USD',
    base: {
      id: 'q1',
      sourceCurrency: 'usd',
      targetCurrency: 'ngn',
      expiration: T,
      conversionRate: { amount: '1500', currency: 'ngn' },
    },
    run: (c, amountMinor) => c.initializeSwap({ sourceCurrency: 'USD', targetCurrency: 'NGN', amountMinor }),
    read: {
      sourceAmount: (r) => r.sourceAmountMinor,
      targetAmount: (r) => r.targetAmountMinor,
      fee: (r) => r.feeMinor,
    },
    echoed: 'sourceAmount',
  },
  finalizeSwap: {
    route: 'POST /wallets/finalize-swap',
    currency: 'USD',
    base: { ...ledgerBase, status: 'success', action: 'swap_usd_ngn' },
    run: (c, amountMinor) => c.finalizeSwap({ quoteId: 'q1', sourceCurrency: 'USD', amountMinor }),
    read: {
      amount: (r) => r.amountMinor,
      centAmount: (r) => r.amountMinor,
      fees: (r) => r.feeMinor,
      centFees: (r) => r.feeMinor,
      balanceAfter: (r) => r.balanceAfterMinor,
    },
    echoed: 'amount',
  },
  createCard: {
    route: 'POST /virtualcards/create',
    currency: 'USD',
    base: { id: 'card_1', reference: 'r', createdStatus: 'pending' },
    run: (c, amountMinor) => c.createCard({ customerEmail: 'a@b.c', cardType: 'virtual', reference: 'r', amountMinor }),
    read: { amount: (r) => r.amountMinor, centAmount: (r) => r.amountMinor },
    echoed: 'amount',
  },
  ...Object.fromEntries(
    (['freezeCard', 'unfreezeCard', 'terminateCard'] as const).map((op) => [
      op,
      {
        route: `POST /virtualcards/${op.replace('Card', '')}`,
        currency: 'USD',
        base: { id: 'card_1', status: 'active', last4: '1234' },
        run: (c: ProviderClient) => c[op]('card_1'),
        read: { balance: (r: any) => r.balanceMinor },
      } satisfies OperationCase,
    ]),
  ),
  topUpCard: {
    route: 'POST /virtualcards/topup',
    currency: 'USD',
    base: { ...cardTx, method: 'topup' },
    run: (c, amountMinor) => c.topUpCard({ cardId: 'card_1', amountMinor, reference: 'r' }),
    read: { amount: (r) => r.amountMinor, centAmount: (r) => r.amountMinor },
    echoed: 'amount',
  },
  withdrawFromCard: {
    route: 'POST /virtualcards/withdraw',
    currency: 'USD',
    base: { ...cardTx, method: 'withdrawal' },
    run: (c, amountMinor) => c.withdrawFromCard({ cardId: 'card_1', amountMinor, reference: 'r' }),
    read: { amount: (r) => r.amountMinor, centAmount: (r) => r.amountMinor },
    echoed: 'amount',
  },
  listCardTransactions: {
    route: 'GET /virtualcards/cards/card_1/transactions',
    currency: 'USD',
    base: {},
    run: (c) => c.listCardTransactions('card_1'),
    read: { amount: (r) => r.transactions[0].amountMinor, centAmount: (r) => r.transactions[0].amountMinor },
  },
};

/** The answer for `operation` with `field` = `value` (and what else the mapper needs around it). */
function answerWith(operation: string, field: string, value: unknown, echoedMinor: bigint): Record<string, unknown> {
  const op = OPERATIONS[operation];
  const around: Record<string, unknown> = {};
  // An amount the record must carry when the row under test is not it (a fee, a balance, the target):
  if (operation === 'initializeCollection' && field !== 'amount') around.amount = Number(echoedMinor) / 100;
  if (operation === 'initializeSwap' && field !== 'sourceAmount') {
    around.sourceAmount = String(Number(echoedMinor) / 100);
    around.targetAmount = '15000';
  }
  if (operation === 'initializeSwap' && field === 'sourceAmount') around.targetAmount = '15000';
  if (['initializePayout', 'finalizePayout', 'getTransaction', 'finalizeSwap'].includes(operation)) {
    if (!['amount', 'centAmount'].includes(field)) around.centAmount = Number(echoedMinor);
  }
  if (operation === 'topUpCard' || operation === 'withdrawFromCard') {
    if (!['amount', 'centAmount'].includes(field)) around.centAmount = Number(echoedMinor);
  }
  const data = { ...op.base, ...around, [field]: value };
  if (operation === 'listCardTransactions') {
    return {
      cardTransactions: [{ ...cardTx, status: 'success', method: 'topup', [field]: value }],
      meta: { page: 1, take: 10, itemCount: 1, pageCount: 1 },
    };
  }
  return data;
}

/**
 * What the documentation says, written here independently of the table (each row's evidence quotes
 * the source): a change to a row of the table fails its test. `SWAP_AMOUNT_UNIT` and
 * `CARD_EVENT_AMOUNT_UNIT` rows are settings (undocumented units).
 */
const DOCUMENTED: Record<string, AmountUnit | keyof AmountUnitSettings> = {
  'initializeCollection request amount': 'minor',
  'initializeCollection answer amount': 'major',
  'initializeCollection answer fees': 'major',
  'initializePayout request amount': 'minor',
  'initializePayout answer centAmount': 'minor',
  'initializePayout answer amount': 'major',
  'initializePayout answer centFees': 'minor',
  'initializePayout answer fees': 'major',
  'finalizePayout answer centAmount': 'minor',
  'finalizePayout answer amount': 'major',
  'finalizePayout answer centFees': 'minor',
  'finalizePayout answer fees': 'major',
  'finalizePayout answer payoutAmount': 'major',
  'getTransaction answer centAmount': 'minor',
  'getTransaction answer amount': 'major',
  'getTransaction answer centFees': 'minor',
  'getTransaction answer fees': 'major',
  'getTransaction answer payoutAmount': 'major',
  'getTransaction answer balanceBefore': 'major',
  'getTransaction answer balanceAfter': 'major',
  'initializeSwap request amount': 'SWAP_AMOUNT_UNIT',
  'initializeSwap answer sourceAmount': 'major',
  'initializeSwap answer targetAmount': 'major',
  'initializeSwap answer fee': 'major',
  'finalizeSwap answer centAmount': 'minor',
  'finalizeSwap answer amount': 'major',
  'finalizeSwap answer centFees': 'minor',
  'finalizeSwap answer fees': 'major',
  'finalizeSwap answer balanceAfter': 'major',
  'createCard request amount': 'minor',
  'createCard answer centAmount': 'minor',
  'createCard answer amount': 'major',
  'freezeCard answer balance': 'major',
  'unfreezeCard answer balance': 'major',
  'terminateCard answer balance': 'major',
  'topUpCard request amount': 'minor',
  'topUpCard answer centAmount': 'minor',
  'topUpCard answer amount': 'major',
  'withdrawFromCard request amount': 'minor',
  'withdrawFromCard answer centAmount': 'minor',
  'withdrawFromCard answer amount': 'major',
  'listCardTransactions answer centAmount': 'minor',
  'listCardTransactions answer amount': 'major',
  'virtualcard.topup.* event amount': 'CARD_EVENT_AMOUNT_UNIT',
  'virtualcard.withdrawal.* event amount': 'CARD_EVENT_AMOUNT_UNIT',
  'virtualcard.transaction.* event amount': 'CARD_EVENT_AMOUNT_UNIT',
  'payout.transfer.* event amount': 'major',
  'transaction.deposit.success event amount': 'major',
};

const other = (unit: AmountUnit): AmountUnit => (unit === 'major' ? 'minor' : 'major');

/** Runs `check` with `row`'s unit in the table temporarily set to `unit` (proof the code reads the table). */
async function withRowUnit(row: AmountUnitRow, unit: AmountUnit, check: () => Promise<void>): Promise<void> {
  const saved = row.unit;
  (row as { unit: AmountUnitRow['unit'] }).unit = unit;
  try {
    await check();
  } finally {
    (row as { unit: AmountUnitRow['unit'] }).unit = saved;
  }
}

const read = (unit: AmountUnit, value: number, currency: string) =>
  unit === 'minor' ? BigInt(value) : BigInt(value) * 10n ** BigInt(currency === 'USD' || currency === 'NGN' ? 2 : 0);

describe('the provider unit table (provider-units.ts)', () => {
  let fake: Fake;
  let baseUrl: string;
  const client = (units?: Partial<AmountUnitSettings>, over: Partial<ProviderClientOptions> = {}) =>
    new ProviderClient({
      baseUrl,
      apiKey: 'sk.test',
      timeoutMs: 1000,
      retry: { retries: 0, baseDelayMs: 1 },
      units,
      ...over,
    });

  beforeEach(async () => {
    fake = new Fake();
    baseUrl = await fake.listen();
  });
  afterEach(() => fake.close());

  const rows = AMOUNT_UNITS as readonly AmountUnitRow[];

  it('has one row per operation, side and field, each with its doc evidence, and says what the doc says', () => {
    expect(new Set(rows.map(key)).size).toBe(rows.length);
    expect(Object.fromEntries(rows.map((row) => [key(row), row.unit]))).toEqual(DOCUMENTED);
    for (const row of rows) expect(row.evidence).toMatch(/^(PA|PW) "/);
    expect(() => unitOf('initializeSwap', 'request', 'amount')).toThrow(/needs the setting SWAP_AMOUNT_UNIT/);
    expect(() => unitOf('initializeSwap', 'answer', 'usdAmount' as 'fee')).toThrow(/no unit row/);
  });

  it('every operation sending or reading money has a test case here, and every case a row', () => {
    const operations = new Set(rows.filter((r) => r.side !== 'event').map((r) => r.operation));
    expect([...operations].sort()).toEqual(Object.keys(OPERATIONS).sort());
    for (const row of rows.filter((r) => r.side === 'answer')) {
      expect(OPERATIONS[row.operation].read[row.field]).toEqual(expect.any(Function));
    }
  });

  /** An answer field and value that agree with a request of 2500 minor units, per operation sending money. */
  const AGREEING: Record<string, [field: string, value: unknown]> = {
    initializeCollection: ['amount', 25],
    initializePayout: ['centAmount', 2500],
    initializeSwap: ['sourceAmount', '25'],
    createCard: ['centAmount', 2500],
    topUpCard: ['centAmount', 2500],
    withdrawFromCard: ['centAmount', 2500],
  };
  type RequestCase = [name: string, row: AmountUnitRow, setting: AmountUnit | undefined];
  const requestCases: RequestCase[] = rows
    .filter((r) => r.side === 'request')
    .flatMap((row): RequestCase[] =>
      row.unit === 'major' || row.unit === 'minor'
        ? [[key(row), row, undefined]]
        : (['major', 'minor'] as const).map((setting): RequestCase => [
            `${key(row)} (${row.unit}=${setting})`,
            row,
            setting,
          ]),
    );
  it.each(requestCases)('request row %s: the client sends the amount in that unit', async (_name, row, setting) => {
    const op = OPERATIONS[row.operation];
    const documented = DOCUMENTED[key(row)];
    const unit = setting ?? (documented as AmountUnit);
    const [field, value] = AGREEING[row.operation];
    const send = async () => {
      fake.bodies.length = 0;
      fake.answers[op.route] = answerWith(row.operation, field, value, 2500n);
      await op.run(client(setting ? { [documented]: setting } : undefined), 2500n);
      return fake.bodies[0].body[row.field];
    };
    expect(await send()).toBe(unit === 'major' ? 25 : 2500);
    if (!setting)
      await withRowUnit(row, other(unit), async () => expect(await send()).toBe(unit === 'major' ? 2500 : 25));
  });

  const answerRows = rows.filter((r) => r.side === 'answer');
  it.each(answerRows.map((row) => [key(row), row] as const))(
    'answer row %s: the mapper reads the field in that unit',
    async (_name, row) => {
      const op = OPERATIONS[row.operation];
      const currency = row.operation === 'initializeCollection' ? 'NGN' : 'USD';
      const echoed = row.field === op.echoed || (op.echoed === 'amount' && row.field === 'centAmount');
      const readAs = async (unit: AmountUnit) => {
        const expected = read(unit, 25, currency);
        const askedMinor = echoed ? expected : 2500n;
        fake.answers[op.route] = answerWith(row.operation, row.field, 25, askedMinor);
        expect(op.read[row.field](await op.run(client(), askedMinor))).toBe(expected);
      };
      const unit = DOCUMENTED[key(row)] as AmountUnit;
      await readAs(unit);
      await withRowUnit(row, other(unit), () => readAs(other(unit)));
    },
  );

  const cardEventRows = rows.filter((r) => r.side === 'event' && r.operation.startsWith('virtualcard.'));
  it.each(cardEventRows.map((row) => [key(row), row] as const))(
    'event row %s: the card-event amount follows CARD_EVENT_AMOUNT_UNIT',
    (_name, row) => {
      const event = row.operation.replace('*', 'success');
      expect(new ProviderUnits().cardEventAmountToMinor(event, 25)).toBe(2500n);
      expect(new ProviderUnits({ CARD_EVENT_AMOUNT_UNIT: 'minor' }).cardEventAmountToMinor(event, 25)).toBe(25n);
    },
  );

  const ledgerEventRows = rows.filter((r) => r.side === 'event' && !r.operation.startsWith('virtualcard.'));
  it.each(ledgerEventRows.map((row) => [key(row), row] as const))(
    'event row %s: the callback check reads the amount in that unit',
    async (_name, row) => {
      const event = row.operation === 'payout.transfer.*' ? 'payout.transfer.success' : 'transaction.deposit.success';
      const held = { amountMinor: 2500n, currency: 'USD' };
      // "25" major is the row's 2500 minor; read as minor it would be 25 (a mismatch).
      const agrees = () => callbackAmountMismatch(event, { amount: '25' }, held) === null;
      expect(agrees()).toBe(true);
      await withRowUnit(row, 'minor', () => Promise.resolve(expect(agrees()).toBe(false)));
    },
  );

  it('writes a major amount exactly (a number when a double holds it, else a string)', () => {
    expect(toWireAmount(10000n, 'USD', 'major')).toBe(100);
    expect(toWireAmount(10050n, 'USD', 'major')).toBe(100.5);
    expect(toWireAmount(1n, 'BTC', 'major')).toBe('0.00000001');
    expect(toWireAmount(5n, 'UGX', 'major')).toBe(5);
    expect(toWireAmount(10000n, 'USD', 'minor')).toBe(10000);
  });

  describe('int32 amounts (payout initialize, card withdraw: docs/provider.md#units)', () => {
    it('the largest amount is 2^31 − 1 of the wire unit, in minor units of the currency', () => {
      expect(int32AmountMaxMinor('USD', 'minor')).toBe(2_147_483_647n);
      expect(int32AmountMaxMinor('ngn', 'major')).toBe(214_748_364_700n);
      expect(() => int32AmountMaxMinor('XYZ', 'minor')).toThrow(ValidationError);
    });

    it('checkAmountFits refuses one minor unit more with a 400 on amount', () => {
      const c = client();
      expect(() => c.checkAmountFits('initializePayout', 2_147_483_647n, 'USD')).not.toThrow();
      for (const operation of ['initializePayout', 'withdrawFromCard'] as const) {
        const refusal = (() => {
          try {
            c.checkAmountFits(operation, 2_147_483_648n, 'USD');
          } catch (error) {
            return error;
          }
        })();
        expect(refusal).toBeInstanceOf(ValidationError);
        expect((refusal as ValidationError).errors).toEqual([
          { field: 'amount', message: expect.stringContaining('at most 2147483647 minor units of USD') },
        ]);
      }
    });
  });

  describe('answers checked against requests (answer-checks.ts)', () => {
    function capture(): { logger: ProviderLogger; warns: Array<{ obj: any; msg: string }> } {
      const warns: Array<{ obj: any; msg: string }> = [];
      const none = () => undefined;
      return { logger: { debug: none, info: none, error: none, warn: (obj, msg) => warns.push({ obj, msg }) }, warns };
    }

    it('refuses a quote ×100 the request: typed error with both values, warn line with the hint, one metric call', async () => {
      // A provider reading "100" (major, our default) as cents would quote 1.00; one reading 10000 (minor) as dollars 10000.00.
      fake.answers['POST /wallets/initialize-swap'] = answerWith('initializeSwap', 'sourceAmount', '10000.00', 0n);
      const log = capture();
      const mismatches: string[] = [];
      const outcomes: string[] = [];
      const error = await client(
        { SWAP_AMOUNT_UNIT: 'major' },
        {
          logger: log.logger,
          onAmountMismatch: (op) => mismatches.push(op),
          onCall: (_op, outcome) => outcomes.push(outcome),
        },
      )
        .initializeSwap({ sourceCurrency: 'USD', targetCurrency: 'NGN', amountMinor: 10000n })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ProviderAmountMismatchError);
      const mismatch = error as ProviderAmountMismatchError;
      expect(mismatch).toMatchObject({
        code: ErrorCode.ProviderAmountMismatch,
        status: 502,
        operation: 'initializeSwap',
        asked: { amountMinor: 10000n, currency: 'USD' },
        answered: { amountMinor: 1000000n, currency: 'USD' },
        providerId: 'q1',
        unitHint: true,
      });
      expect(mismatch.message).toContain('unit misconfigured?');
      expect(toProblem(mismatch)).toMatchObject({
        status: 502,
        code: 'provider_amount_mismatch',
        operation: 'initializeSwap',
        asked: { amount: 10000, currency: 'USD' },
        answered: { amount: 1000000, currency: 'USD' },
        hint: 'unit misconfigured?',
        detail: expect.stringContaining('unit misconfigured?'),
      });
      expect(log.warns).toEqual([
        {
          obj: expect.objectContaining({
            operation: 'initializeSwap',
            asked: { amountMinor: '10000', currency: 'USD' },
            answered: { amountMinor: '1000000', currency: 'USD' },
            hint: 'unit misconfigured?',
          }),
          msg: 'provider initializeSwap answered another amount than was asked (unit misconfigured?)',
        },
      ]);
      expect(mismatches).toEqual(['initializeSwap']);
      expect(outcomes).toEqual(['ok']); // the call itself answered; the answer is what is refused
    });

    it('refuses another currency, and another amount without the hint when not ×100', async () => {
      fake.answers['POST /virtualcards/topup'] = { ...cardTx, method: 'topup', centAmount: 2500, currency: 'ngn' };
      const other = await client()
        .topUpCard({ cardId: 'card_1', amountMinor: 2500n, reference: 'r' })
        .catch((e: unknown) => e);
      expect(other).toMatchObject({ answered: { amountMinor: 2500n, currency: 'NGN' }, unitHint: false });
      expect(toProblem(other)).not.toHaveProperty('hint');
      fake.answers['POST /virtualcards/topup'] = { ...cardTx, method: 'topup', centAmount: 2600 };
      const amount = await client()
        .topUpCard({ cardId: 'card_1', amountMinor: 2500n, reference: 'r' })
        .catch((e: unknown) => e);
      expect(amount).toMatchObject({ answered: { amountMinor: 2600n, currency: 'USD' }, unitHint: false });
    });

    it('checks a card funding only when the creation answer states one (the documented answer does not)', async () => {
      fake.answers['POST /virtualcards/create'] = OPERATIONS.createCard.base;
      const created = await client().createCard({
        customerEmail: 'a',
        cardType: 'virtual',
        reference: 'r',
        amountMinor: 500n,
      });
      expect(created.amountMinor).toBeNull();
      fake.answers['POST /virtualcards/create'] = { ...OPERATIONS.createCard.base, centAmount: 50000 };
      await expect(
        client().createCard({ customerEmail: 'a', cardType: 'virtual', reference: 'r', amountMinor: 500n }),
      ).rejects.toMatchObject({ code: 'provider_amount_mismatch', unitHint: true });
    });

    it('checks finalize answers when told the amount: swap and payout', async () => {
      fake.answers['POST /wallets/finalize-swap'] = { ...ledgerBase, status: 'success', centAmount: 100_000 };
      expect(
        (await client().finalizeSwap({ quoteId: 'q1', sourceCurrency: 'USD' })).amountMinor, // not told: not checked
      ).toBe(100_000n);
      await expect(
        client().finalizeSwap({ quoteId: 'q1', sourceCurrency: 'USD', amountMinor: 1000n }),
      ).rejects.toMatchObject({
        code: 'provider_amount_mismatch',
        operation: 'finalizeSwap',
        providerId: 'tx_1',
        unitHint: true,
      });
      fake.answers['POST /wallets/payout/finalize'] = { ...ledgerBase, status: 'pending', amount: '25.01' };
      await expect(
        client().finalizePayout({ transactionId: 'tx_1', sourceCurrency: 'USD', amountMinor: 2500n }),
      ).rejects.toMatchObject({ operation: 'finalizePayout', answered: { amountMinor: 2501n }, unitHint: false });
    });

    it('a malformed amount stays provider_unavailable, not a mismatch', async () => {
      fake.answers['POST /wallets/payout/initialize'] = { ...ledgerBase, status: 'initiated', centAmount: 'ten' };
      const error = await client()
        .initializePayout({
          amountMinor: 1000n,
          sourceCurrency: 'USD',
          reference: 'r',
          customerEmail: 'a',
          description: 'd',
          beneficiaryId: 'b',
          callbackUrl: 'http://gw',
        })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ProviderError);
      expect((error as ProviderError).code).toBe(ErrorCode.ProviderUnavailable);
    });

    it('hints only at exactly the minor-unit factor of the currency', () => {
      const usd = (amountMinor: bigint) => ({ amountMinor, currency: 'USD' });
      expect(differsByUnitFactor(usd(100n), usd(10000n))).toBe(true);
      expect(differsByUnitFactor(usd(10000n), usd(100n))).toBe(true);
      expect(differsByUnitFactor(usd(100n), usd(1000n))).toBe(false);
      expect(differsByUnitFactor({ amountMinor: 5n, currency: 'UGX' }, { amountMinor: 500n, currency: 'UGX' })).toBe(
        false,
      );
      expect(
        differsByUnitFactor({ amountMinor: 1n, currency: 'BTC' }, { amountMinor: 100_000_000n, currency: 'BTC' }),
      ).toBe(true);
      expect(differsByUnitFactor(usd(100n), { amountMinor: 10000n, currency: 'NGN' })).toBe(false);
    });
  });
});
