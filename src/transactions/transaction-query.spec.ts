import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { Prisma } from '../generated/prisma/client';
import type { LedgerRow } from './ledger-row';
import {
  exportStatement,
  GET_WITH_HISTORY,
  getWithHistoryStatement,
  listStatement,
  netStatement,
  summaryStatement,
} from './transaction-query';
import { CSV_COLUMNS, csvRecord, majorOrEmpty, neutraliseFormula } from './transactions-csv';

describe('finance SQL', () => {
  const at = new Date('2026-11-01T00:00:00.000Z');

  it('binds every value as a parameter; the text depends only on which filters are present', () => {
    const a = listStatement(
      { status: 'success', customerId: '7f0c1a52-8d57-4c41-9d0e-3c2b1f7b1a11' },
      'desc',
      undefined,
      50,
    );
    const b = listStatement(
      { status: 'failed', customerId: '00000000-0000-4000-8000-000000000000' },
      'desc',
      undefined,
      10,
    );
    expect(a.text).toBe(b.text);
    expect(a.name).toBe(b.name);
    expect(a.values).toEqual(['success', '7f0c1a52-8d57-4c41-9d0e-3c2b1f7b1a11', 51]);
    expect(a.text).not.toContain('success');
    expect(a.text).toContain('t.status = $1::"TransactionStatus" AND t.customer_id = $2::uuid');
    expect(a.text).toMatch(/ORDER BY t.created_at DESC, t.id DESC LIMIT \$3$/);
    expect(a.text).not.toMatch(/OFFSET/i);
  });

  it('keyset: strictly after the position, in the direction of the order', () => {
    const desc = listStatement({}, 'desc', { createdAt: at, id: 'x' }, 5);
    expect(desc.text).toContain('(t.created_at, t.id) < ($1::timestamptz, $2::uuid)');
    expect(desc.values).toEqual([at, 'x', 6]);
    const asc = listStatement({}, 'asc', { createdAt: at, id: 'x' }, 5);
    expect(asc.text).toContain('(t.created_at, t.id) > ($1::timestamptz, $2::uuid)');
    expect(asc.text).toContain('ORDER BY t.created_at ASC, t.id ASC');
    expect(asc.name).not.toBe(desc.name);
  });

  it('ranges: from inclusive, to exclusive, amounts inclusive as exact bigint text', () => {
    const s = summaryStatement({ from: at, to: at, amountMin: 1n, amountMax: 9_007_199_254_740_993n });
    expect(s.text).toContain('t.created_at >= $1::timestamptz AND t.created_at < $2::timestamptz');
    expect(s.text).toContain('t.amount >= $3::bigint AND t.amount <= $4::bigint');
    expect(s.values).toEqual([at, at, '1', '9007199254740993']);
    expect(s.text).toContain('GROUP BY t.currency, t.kind, t.status');
    expect(exportStatement({ kind: 'payout' }, 'asc').text).not.toContain('LIMIT');
  });
});

describe('net per currency SQL', () => {
  it("binds every value; the swap's target leg filters its target currency and counts as a credit", () => {
    const a = netStatement({ currency: 'NGN', direction: 'credit', kind: 'swap' });
    const b = netStatement({ currency: 'USD', direction: 'debit', kind: 'payout' });
    expect(a.text).toBe(b.text);
    expect(a.name).toBe(b.name);
    expect(a.text).not.toMatch(/NGN|USD/);
    // The rows: their own currency and direction. The target leg: kind, then currency as the target, direction as credit.
    expect(a.values).toEqual(['swap', 'credit', 'NGN', 'swap', 'NGN', 'credit']);
    expect(a.text).toContain('t.counter_currency = $5');
    expect(a.text).toContain(`$6::"TransactionDirection" = 'credit'`);
    expect(a.text.match(/t\.status = 'success'/g)).toHaveLength(2);
    expect(netStatement({}).values).toEqual([]);
  });
});

describe('finance SQL under the ownership rule (OWNERSHIP=client)', () => {
  const owner = '7f0c1a52-8d57-4c41-9d0e-3c2b1f7b1a11';

  it('adds a bound created_by condition to every list, export and summary when a restriction applies', () => {
    const list = listStatement({ status: 'success', createdBy: owner }, 'desc', undefined, 50);
    expect(list.text).toContain('t.status = $1::"TransactionStatus" AND t.created_by = $2::uuid');
    expect(list.values).toEqual(['success', owner, 51]);
    expect(list.name).not.toBe(listStatement({ status: 'success' }, 'desc', undefined, 50).name);
    expect(exportStatement({ createdBy: owner }, 'asc')).toMatchObject({
      text: expect.stringContaining('WHERE t.created_by = $1::uuid'),
      values: [owner],
    });
    expect(summaryStatement({ createdBy: owner }).text).toContain('WHERE t.created_by = $1::uuid');
    // The net: both legs (the rows and a swap's target) are the client's own rows only.
    const net = netStatement({ createdBy: owner });
    expect(net.text.match(/t\.created_by = \$\d::uuid/g)).toEqual([
      't.created_by = $1::uuid',
      't.created_by = $2::uuid',
    ]);
    expect(net.values).toEqual([owner, owner]);
    expect(listStatement({}, 'desc', undefined, 5).text).not.toContain('created_by =');
  });

  it('reads one transaction only if that client created it; without a restriction, any', () => {
    expect(getWithHistoryStatement('x')).toEqual({ ...GET_WITH_HISTORY, values: ['x'] });
    const own = getWithHistoryStatement('x', owner);
    expect(own.text).toMatch(/WHERE t\.id = \$1::uuid AND t\.created_by = \$2::uuid$/);
    expect(own.values).toEqual(['x', owner]);
    expect(own.name).not.toBe(GET_WITH_HISTORY.name);
  });
});

describe('finance CSV', () => {
  const row: LedgerRow = {
    id: '7f0c1a52-8d57-4c41-9d0e-3c2b1f7b1a11',
    kind: 'payout',
    direction: 'debit',
    status: 'success',
    amount: 150000n,
    fee: 5n,
    currency: 'USD',
    counterAmount: 19350000n,
    counterCurrency: 'KES',
    exchangeRate: new Prisma.Decimal('129.000000000000'),
    customerId: null,
    beneficiaryId: null,
    cardId: null,
    providerId: 'p-1',
    reference: 'ref-1',
    description: 'Invoice 7, "final"\nsecond line',
    failureReason: '-1 balance',
    confirmRequestedAt: null,
    createdAt: new Date('2026-11-01T10:00:00.123Z'),
    updatedAt: new Date('2026-11-01T10:00:00.123Z'),
    completedAt: null,
    createdBy: null,
    approvedAt: null,
  };

  it('one record per row, amounts in major units beside the exact minor units', () => {
    const record = csvRecord(row);
    expect(record).toHaveLength(CSV_COLUMNS.length);
    const named = Object.fromEntries(CSV_COLUMNS.map((c, i) => [c, record[i]]));
    expect(named).toMatchObject({
      created_at: '2026-11-01T10:00:00.123Z',
      completed_at: '',
      amount: '1500.00',
      amount_minor: '150000',
      fee: '0.05',
      fee_minor: '5',
      counter_amount: '193500.00',
      failure_reason: "'-1 balance",
    });
  });

  it('quotes per RFC 4180 and parses back to the same fields', () => {
    const text = stringify([csvRecord(row)], { record_delimiter: 'windows' });
    expect(text).toContain('"Invoice 7, ""final""\nsecond line"');
    expect(parse(text)).toEqual([csvRecord(row)]);
  });

  it('neutralises spreadsheet formulas in free text only; unknown currencies leave the decimal empty', () => {
    expect(['=1+1', '+1', '-1', '@SUM(A1)', '\tx', 'ok', null].map(neutraliseFormula)).toEqual([
      "'=1+1",
      "'+1",
      "'-1",
      "'@SUM(A1)",
      "'\tx",
      'ok',
      '',
    ]);
    expect(majorOrEmpty(5n, 'XYZ')).toBe('');
    expect(majorOrEmpty(5n, 'UGX')).toBe('5');
    expect(majorOrEmpty(1n, 'BTC')).toBe('0.00000001');
  });
});
