/**
 * The finance page (/finance) end to end in headless Chromium: Debian's `chromium` driven by
 * playwright-core (no browser download). The gateway listens on a real port with ledger rows in
 * its own database (one payout made through the API and completed by the simulator's signed
 * callback, the rest inserted with SQL); the page signs in with a key holding only
 * `transactions:read`, filters, pages, opens a status history, draws the summary charts,
 * downloads the CSV, and a screenshot is checked.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { PNG } from 'pngjs';
import { confirmedPayout, customerWithBeneficiary } from './support/fixtures';
import { type Harness, startHarness } from './support/harness';
import { AMOUNT_TEXT, amountsAndButtons, PAGE_WIDTHS } from './support/page-layout';

/** The page's `document`, inside functions run in the browser (no DOM library in this project). */
declare const document: any;

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const VIEWPORT = { width: 1400, height: 1000 };

/** Fails (never skips) when the browser is missing, saying how to get it. */
function requireChromium(): string {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium not found at ${CHROMIUM}. The finance page test needs Debian's chromium: ` +
        'apt-get install -y chromium (.ci/run installs it), or set CHROMIUM_PATH.',
    );
  }
  return CHROMIUM;
}

/** Polls `check` until it returns a value (not undefined) or the deadline passes. */
async function eventually<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

interface SeedRow {
  kind: string;
  direction: 'credit' | 'debit';
  status: string;
  amount: bigint;
  fee: bigint;
  currency: string;
  minutesAgo: number;
  /** A swap's target amount and currency. */
  counter?: { amount: bigint; currency: string };
}

/** Ledger rows inserted directly, each with the status history that led to its status. */
async function seedLedger(h: Harness, rows: SeedRow[]): Promise<string[]> {
  const references: string[] = [];
  for (const [i, row] of rows.entries()) {
    const id = randomUUID();
    const reference = `fin-page-${String(i).padStart(3, '0')}`;
    const createdAt = new Date(Date.now() - row.minutesAgo * 60_000);
    const final = ['success', 'failed', 'expired', 'reversed'].includes(row.status);
    await h.db.query(
      `INSERT INTO transactions (id, kind, direction, status, amount, fee, currency, reference, description,
         created_at, updated_at, completed_at, counter_amount, counter_currency)
       VALUES ($1, $2::"TransactionKind", $3::"TransactionDirection", $4::"TransactionStatus", $5, $6, $7, $8, $9,
         $10, $10, $11, $12, $13)`,
      [
        id,
        row.kind,
        row.direction,
        row.status,
        row.amount.toString(),
        row.fee.toString(),
        row.currency,
        reference,
        `Seeded ${row.kind} ${i}`,
        createdAt,
        final ? createdAt : null,
        row.counter?.amount.toString() ?? null,
        row.counter?.currency ?? null,
      ],
    );
    const path = row.status === 'pending' ? ['created', 'pending'] : ['created', 'pending', row.status];
    for (const [step, to] of path.entries()) {
      await h.db.query(
        `INSERT INTO transaction_status_changes (transaction_id, "from", "to", source, at)
         VALUES ($1, $2::"TransactionStatus", $3::"TransactionStatus", $4::"StatusChangeSource", $5)`,
        [id, step === 0 ? null : path[step - 1], to, step === 2 ? 'webhook' : 'api', createdAt],
      );
    }
    references.push(reference);
  }
  return references;
}

/** Pixels of `png` within `tolerance` (per channel) of the colour `hex`. */
function countColour(png: PNG, hex: string, tolerance = 12): number {
  const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
  let count = 0;
  for (let i = 0; i < png.data.length; i += 4) {
    if (
      Math.abs(png.data[i] - r) <= tolerance &&
      Math.abs(png.data[i + 1] - g) <= tolerance &&
      Math.abs(png.data[i + 2] - b) <= tolerance
    )
      count++;
  }
  return count;
}

/** Minor units of a 2-digit currency → "3,360.00". */
function major(minor: bigint): string {
  const whole = (minor / 100n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${whole}.${(minor % 100n).toString().padStart(2, '0')}`;
}

function distinctColours(png: PNG): number {
  const seen = new Set<number>();
  for (let i = 0; i < png.data.length; i += 4) {
    seen.add((png.data[i] << 16) | (png.data[i + 1] << 8) | png.data[i + 2]);
  }
  return seen.size;
}

describe('finance page (e2e, headless Chromium)', () => {
  let h: Harness;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let origin: string;
  let financeKey: string;
  let payout: { id: string; providerId: string; reference: string };
  // Screenshots and the downloaded CSV go to a temporary folder, removed at the end unless
  // FINANCE_PAGE_SHOTS names a folder to keep them in (to look at the page).
  const keep = process.env.FINANCE_PAGE_SHOTS;
  const shots = keep
    ? (fs.mkdirSync(keep, { recursive: true }), keep)
    : fs.mkdtempSync(path.join(os.tmpdir(), 'finance-page-'));
  const pageErrors: string[] = [];
  // Refusals the page met (HTTP 403 answers) and errors it logged: a finance key must meet none.
  const refused: string[] = [];
  const consoleErrors: string[] = [];

  // 12 USD payouts and 6 NGN collections succeeded, a GBP → NGN swap succeeded (80.00 GBP and a
  // 0.50 GBP fee out, 150,000.00 NGN in), 3 USD payouts failed, 2 KES swaps pending; plus the real
  // payout below (USD, success): 20 successes, over two pages of 10.
  const seeded: SeedRow[] = [
    ...Array.from({ length: 12 }, (_, i) => ({
      kind: 'payout',
      direction: 'debit' as const,
      status: 'success',
      amount: BigInt(10_000 + i * 1_000),
      fee: 100n,
      currency: 'USD',
      minutesAgo: 60 + i,
    })),
    ...Array.from({ length: 6 }, (_, i) => ({
      kind: 'collection',
      direction: 'credit' as const,
      status: 'success',
      amount: 5_000_000n,
      fee: 0n,
      currency: 'NGN',
      minutesAgo: 90 + i,
    })),
    {
      kind: 'swap',
      direction: 'debit' as const,
      status: 'success',
      amount: 8_000n,
      fee: 50n,
      currency: 'GBP',
      minutesAgo: 100,
      counter: { amount: 15_000_000n, currency: 'NGN' },
    },
    ...Array.from({ length: 3 }, (_, i) => ({
      kind: 'payout',
      direction: 'debit' as const,
      status: 'failed',
      amount: 20_000n,
      fee: 0n,
      currency: 'USD',
      minutesAgo: 120 + i,
    })),
    ...Array.from({ length: 2 }, (_, i) => ({
      kind: 'swap',
      direction: 'debit' as const,
      status: 'pending',
      amount: 700_000n,
      fee: 0n,
      currency: 'KES',
      minutesAgo: 130 + i,
    })),
  ];
  const seededSuccesses = seeded.filter((r) => r.status === 'success').length;

  beforeAll(async () => {
    const executablePath = requireChromium();
    h = await startHarness({ listen: true });
    origin = `http://127.0.0.1:${(h.app.getHttpServer().address() as { port: number }).port}`;
    const setup = { Authorization: `Bearer ${await h.key()}` };

    // One payout made through the API and completed by the provider's signed callback.
    const parties = await customerWithBeneficiary(h, setup, 'finance-page@example.com');
    payout = await confirmedPayout(h, setup, parties, 150_000);
    const completed = await h.sim.admin('POST', `/payouts/${payout.providerId}/complete`, { status: 'success' });
    expect(completed.status).toBeLessThan(300);
    await eventually(async () => {
      const [row] = await h.db.query<{ status: string }>('SELECT status FROM transactions WHERE id = $1', [payout.id]);
      return row?.status === 'success' ? true : undefined;
    }, 'the payout callback to mark the payout success');

    await seedLedger(h, seeded);
    financeKey = await h.key(['transactions:read']);

    browser = await chromium.launch({ executablePath, args: ['--no-sandbox'], headless: true });
    context = await browser.newContext({ acceptDownloads: true, viewport: VIEWPORT, timezoneId: 'Europe/Berlin' });
    // Browser-side code is given as text (this project compiles without the DOM library).
    await context.addInitScript(
      `window.__cspViolations = [];
       document.addEventListener('securitypolicyviolation', (e) =>
         window.__cspViolations.push(e.violatedDirective + ' ' + e.blockedURI));`,
    );
    page = await context.newPage();
    page.setDefaultTimeout(10_000);
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('response', (res) => res.status() === 403 && refused.push(`${res.request().method()} ${res.url()}`));
    page.on('console', (msg) => msg.type() === 'error' && consoleErrors.push(msg.text()));
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await h?.close();
    if (!keep) fs.rmSync(shots, { recursive: true, force: true });
  });

  it('serves the page publicly with a strict Content-Security-Policy, outside the API docs', async () => {
    const res = await h.http().get('/finance');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    const csp = res.headers['content-security-policy'];
    expect(csp).toMatch(/default-src 'none'/);
    expect(csp).toMatch(/script-src 'self' 'sha256-[A-Za-z0-9+/=]+'(;|$)/);
    expect(csp).toMatch(/connect-src 'self'/);
    expect(csp).toMatch(/frame-ancestors 'none'/);
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|\*|https?:/);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.text).not.toMatch(/wgk_/); // no key in the page

    const lib = await h.http().get('/finance/vendor/preact.mjs');
    expect(lib.status).toBe(200);
    expect(lib.headers['content-type']).toBe('text/javascript; charset=utf-8');
    const etag = lib.headers['etag'];
    expect((await h.http().get('/finance/vendor/preact.mjs').set('if-none-match', etag)).status).toBe(304);

    for (const missing of [
      '/finance/nothing.js',
      '/finance/vendor/..%2F..%2Fpackage.json',
      '/finance/..%2Fpackage.json',
      '/finance/vendor/chart.umd.min.js.map',
    ]) {
      const notFound = await h.http().get(missing);
      expect(notFound.status).toBe(404);
      expect(notFound.headers['content-type']).toMatch(/problem\+json/);
    }
    const docs = await h.http().get('/docs-json');
    expect(Object.keys(docs.body.paths).filter((p) => p.startsWith('/finance'))).toEqual([]);
  });

  it('refuses a wrong key and a key without transactions:read with a clear message', async () => {
    await page.goto(`${origin}/finance`);
    await page.fill('#api-key', 'wgk_this_is_not_a_key');
    await page.click('button[type=submit]');
    await page.getByTestId('sign-in-error').waitFor();
    expect(await page.getByTestId('sign-in-error').textContent()).toContain('not accepted');

    const customersOnly = await h.key(['customers:read']);
    await page.fill('#api-key', customersOnly);
    await page.click('button[type=submit]');
    await page.getByTestId('sign-in-error').filter({ hasText: 'transactions:read' }).waitFor();
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
  });

  it('signs in with a finance key, kept in this tab only', async () => {
    // The refusals of the sign-in test above are not the finance key's.
    refused.length = 0;
    consoleErrors.length = 0;
    await page.fill('#api-key', financeKey);
    await page.click('button[type=submit]');
    await page.getByTestId('transactions').waitFor();
    expect(await page.evaluate('[localStorage.length, document.cookie, sessionStorage.length]')).toEqual([0, '', 1]);
    // A reload keeps the session (sessionStorage), and the unfiltered list shows the newest first.
    await page.reload();
    await page
      .locator('[data-testid=transactions-section][aria-busy=false] [data-testid=transaction-row]')
      .first()
      .waitFor();
    const first = await page.getByTestId('transaction-row').first().getAttribute('data-id');
    expect(first).toBe(payout.id);
  });

  it('shows a finance key (transactions:read only) the ledger alone: no tab it cannot use, no 403', async () => {
    const asked = page.waitForResponse((res) => res.url().endsWith('/v1/api-keys/me'));
    await page.reload();
    const me = await asked;
    expect(me.status()).toBe(200);
    expect((await me.json()).scopes).toEqual(['transactions:read']);
    await page.locator('[data-testid=summary][aria-busy=false]').waitFor();
    await page.getByTestId('transaction-row').first().waitFor();
    expect(await page.locator('[role=tablist]').count()).toBe(0);
    expect(await page.locator('[data-testid^=tab-]').count()).toBe(0);
    expect(await page.getByTestId('approval-queue').count()).toBe(0);
    expect(refused).toEqual([]);
    expect(consoleErrors).toEqual([]);
    // The route the page asks: any valid key learns its own scopes; no key, no answer.
    expect((await h.http().get('/v1/api-keys/me')).status).toBe(401);
    const mine = await h
      .http()
      .get('/v1/api-keys/me')
      .set({ Authorization: `Bearer ${financeKey}` });
    expect(mine.body).toEqual({ id: expect.any(String), name: 'test', scopes: ['transactions:read'] });
  });

  it('offers the currencies present in the ledger, and takes amounts in their major units', async () => {
    const options = await page
      .locator('select[name=currency] option')
      .evaluateAll((els) => els.map((e) => (e as any).value));
    expect(options).toEqual(['', 'GBP', 'KES', 'NGN', 'USD']);
    // Without a currency the amounts mean nothing: the fields wait for one.
    expect(await page.locator('input[name=amountMin]').isDisabled()).toBe(true);

    await page.selectOption('select[name=currency]', 'USD');
    expect(await page.locator('label:has(input[name=amountMin])').textContent()).toContain('USD, 2 decimals');
    await page.fill('input[name=amountMin]', '1,500');
    const listed = page.waitForRequest((req) => req.url().includes('/v1/transactions?'));
    await page.getByTestId('apply-filters').click();
    const url = new URL((await listed).url());
    expect([url.searchParams.get('currency'), url.searchParams.get('amountMin')]).toEqual(['USD', '150000']);
    await page.waitForFunction(
      (id) =>
        document.querySelector('[data-testid=transactions-section]')?.getAttribute('aria-busy') === 'false' &&
        [...document.querySelectorAll('[data-testid=transaction-row]')].map((r: any) => r.dataset.id).join() === id,
      payout.id,
    );

    // More decimals than the currency has: refused on the page, nothing asked of the gateway.
    await page.fill('input[name=amountMin]', '12.345');
    await page.getByTestId('apply-filters').click();
    expect(await page.getByTestId('filter-error').textContent()).toContain('more than 2 decimals in USD');
    await page.fill('input[name=amountMin]', '');
  });

  it("shows the API's validation errors for a bad filter", async () => {
    // 50.00 and 1.00 USD: 5000 and 100 minor units, which the API refuses as an empty range.
    await page.fill('input[name=amountMin]', '50');
    await page.fill('input[name=amountMax]', '1');
    await page.getByTestId('apply-filters').click();
    const error = page.getByTestId('list-error');
    await error.waitFor();
    expect(await error.textContent()).toContain('Error 400');
    expect(await error.textContent()).toContain('amountMax must not be before amountMin');
    await page.fill('input[name=amountMin]', '');
    await page.fill('input[name=amountMax]', '');
    await page.selectOption('select[name=currency]', '');
  });

  it('filters by status and pages through the result', async () => {
    await page.selectOption('select[name=status]', 'success');
    await page.selectOption('select[name=limit]', '10');
    await page.getByTestId('apply-filters').click();

    const readPage = async (n: number) => {
      // A function, not text: the page's CSP forbids eval, which a text predicate would need.
      await page.waitForFunction(
        (n) =>
          document.querySelector('[data-testid=transactions-section]')?.getAttribute('aria-busy') === 'false' &&
          document.querySelector('[data-testid=page-number]')?.textContent === `Page ${n}` &&
          [...document.querySelectorAll('[data-testid=transaction-row] .badge')].every(
            (b: { textContent: string }) => b.textContent === 'success',
          ),
        n,
      );
      return page.getByTestId('transaction-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-id')!));
    };

    const first = await readPage(1);
    expect(first).toHaveLength(10);
    expect(await page.getByTestId('previous-page').isDisabled()).toBe(true);
    await page.getByTestId('next-page').click();
    const second = await readPage(2);
    expect(second).toHaveLength(seededSuccesses + 1 - 10);
    expect(await page.getByTestId('next-page').isDisabled()).toBe(true);

    const all = new Set([...first, ...second]);
    const expected = await h.db.query<{ id: string }>(`SELECT id FROM transactions WHERE status = 'success'`);
    expect(all).toEqual(new Set(expected.map((r) => r.id)));

    await page.getByTestId('previous-page').click();
    expect(await readPage(1)).toEqual(first);
  });

  it("opens a transaction's status history", async () => {
    await page.locator(`[data-testid=transaction-row][data-id="${payout.id}"] [data-testid=open-history]`).click();
    const detail = page.getByTestId('transaction-detail');
    await detail.getByTestId('status-change').last().waitFor();
    const changes = await detail
      .getByTestId('status-change')
      .evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll('td')].slice(1, 4).map((td) => td.textContent)));
    const history = await h.db.query<{ from: string | null; to: string; source: string }>(
      `SELECT "from", "to", source FROM transaction_status_changes WHERE transaction_id = $1 ORDER BY at, id`,
      [payout.id],
    );
    expect(changes).toEqual(history.map((c) => [c.from ?? '—', c.to, c.source]));
    expect(changes[changes.length - 1]).toEqual(['pending', 'success', 'webhook']);
    expect(await detail.textContent()).toContain('1,500.00 USD');
    expect(await detail.textContent()).toContain(payout.reference);

    // "Check at provider" asks the gateway (GET ?refresh=true); the payout is final, so the gateway
    // answers from its ledger without a provider lookup, and nothing moves.
    const lookups = (await h.sim.calls()).length;
    const refreshed = page.waitForResponse((res) => res.url().includes(`/v1/transactions/${payout.id}?refresh=true`));
    await detail.getByTestId('refresh-transaction').click();
    expect((await refreshed).status()).toBe(200);
    expect((await h.sim.calls()).length).toBe(lookups);
    await page.locator('[data-testid=refresh-transaction]:not([disabled])').waitFor();
    expect(await detail.getByTestId('status-change').count()).toBe(history.length);
    expect(await detail.getByTestId('detail-error').count()).toBe(0);
  });

  it('shows the summary per currency with a chart each', async () => {
    const summary = page.locator('[data-testid=summary][aria-busy=false]');
    await summary.getByTestId('summary-currency').first().waitFor();
    const currencies = await summary
      .getByTestId('summary-currency')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-currency')));
    expect(currencies).toEqual(['GBP', 'NGN', 'USD']); // status=success: no KES (its swaps are pending)

    // USD payouts: the real one (1,500.00) + 12 seeded (100.00 … 210.00) = 3,360.00; fees 12 × 1.00 + the real fee.
    const usd = summary.locator('[data-currency=USD] [data-testid=summary-row]');
    const usdText = await usd.textContent();
    expect(usdText).toContain('13');
    const usdAmount = seeded
      .filter((r) => r.currency === 'USD' && r.status === 'success')
      .reduce((sum, r) => sum + r.amount, 150_000n);
    const [{ fee }] = await h.db.query<{ fee: string }>('SELECT fee::text AS fee FROM transactions WHERE id = $1', [
      payout.id,
    ]);
    expect(usdText).toContain(`${major(usdAmount)} USD`);
    expect(usdText).toContain(`${major(1_200n + BigInt(fee))} USD`);
    expect(await summary.locator('[data-currency=NGN] [data-testid=summary-row]').textContent()).toContain(
      '300,000.00 NGN',
    );

    // Each chart is drawn: the success bars are in the success colour.
    for (const currency of ['USD', 'NGN']) {
      const chart = PNG.sync.read(await page.getByTestId(`chart-${currency}`).screenshot());
      expect(chart.width).toBeGreaterThan(200);
      expect(countColour(chart, '#16a34a')).toBeGreaterThan(500);
      expect(countColour(chart, '#dc2626')).toBe(0); // no failed bars under status=success
    }
  });

  it('downloads the CSV of the filtered transactions', async () => {
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('download-csv').click()]);
    expect(download.suggestedFilename()).toMatch(/^transactions-.+\.csv$/);
    const file = path.join(shots, download.suggestedFilename());
    await download.saveAs(file);
    const records: Record<string, string>[] = parse(fs.readFileSync(file, 'utf8'), { columns: true });
    expect(records).toHaveLength(seededSuccesses + 1);
    expect(records.every((r) => r.status === 'success')).toBe(true);
    const real = records.find((r) => r.id === payout.id)!;
    expect(real).toMatchObject({
      reference: payout.reference,
      currency: 'USD',
      amount: '1500.00',
      amount_minor: '150000',
    });
    await page.getByTestId('download-status').waitFor();
  });

  it('looks right: a screenshot of the whole page', async () => {
    await page.getByTestId('transaction-detail').waitFor();
    expect(await page.locator('body').textContent()).not.toContain('Loading the finance page'); // placeholder replaced
    const file = path.join(shots, 'finance-page.png');
    await page.screenshot({ path: file, fullPage: true });
    const png = PNG.sync.read(fs.readFileSync(file));
    expect(png.width).toBe(VIEWPORT.width);
    expect(png.height).toBeGreaterThanOrEqual(VIEWPORT.height);
    expect(distinctColours(png)).toBeGreaterThan(100); // text, badges, charts: not a blank page
    expect(countColour(png, '#16a34a')).toBeGreaterThan(1_000); // success badges and bars
    expect(countColour(png, '#f1f5f9', 0)).toBeGreaterThan(png.width * 20); // the page background

    expect(await page.evaluate('window.__cspViolations')).toEqual([]);
    expect(pageErrors).toEqual([]);
  });

  /** Horizontal overflow of the page: the document's width, and elements reaching past the viewport outside a table's scroll box. */
  const overflow = () =>
    page.evaluate(() => {
      const width = (globalThis as any).innerWidth as number;
      const offenders: string[] = [];
      for (const el of document.querySelectorAll('body *')) {
        if (el.parentElement?.closest('.table-scroll')) continue; // scrolls inside its table box
        const r = el.getBoundingClientRect();
        if (r.width === 0 && r.height === 0) continue;
        if (r.right > width + 0.5 || r.left < -0.5) {
          offenders.push(`${el.tagName.toLowerCase()}.${el.className} ${Math.round(r.left)}→${Math.round(r.right)}`);
        }
      }
      return { scrollWidth: document.documentElement.scrollWidth, width, offenders: offenders.slice(0, 10) };
    });

  /**
   * Sets the viewport and waits for the layout to follow: Chart.js resizes its canvases from a
   * ResizeObserver on the next animation frame, later than the resize itself on a busy machine. The
   * overflow checks below still fail if the page never fits.
   */
  const resizeTo = async (width: number, height: number) => {
    await page.setViewportSize({ width, height });
    await page
      .waitForFunction((w) => document.documentElement.scrollWidth <= w, width, { timeout: 5_000 })
      .catch(() => undefined);
  };

  it('fits 1366 px: the columns that matter and the History panel in view, nothing past the edge', async () => {
    await resizeTo(1366, 900);
    const detail = page.getByTestId('transaction-detail');
    await detail.waitFor();
    expect(await overflow()).toEqual({ scrollWidth: 1366, width: 1366, offenders: [] });

    const box = (await page.getByTestId('transactions-scroll').boundingBox())!;
    const panel = (await detail.boundingBox())!;
    expect(panel.x + panel.width).toBeLessThanOrEqual(1366);
    expect(panel.x).toBeGreaterThanOrEqual(box.x + box.width); // beside the list, not over it
    for (const heading of ['Created', 'Kind', 'Status', 'Amount']) {
      const cell = (await page.locator('table.transactions th', { hasText: heading }).first().boundingBox())!;
      expect([heading, cell.x >= box.x && cell.x + cell.width <= box.x + box.width]).toEqual([heading, true]);
    }
    const history = (await page.getByTestId('open-history').first().boundingBox())!;
    expect(history.x + history.width).toBeLessThanOrEqual(box.x + box.width);

    await page.screenshot({ path: path.join(shots, 'finance-1366.png'), fullPage: true });
    expect(PNG.sync.read(fs.readFileSync(path.join(shots, 'finance-1366.png'))).width).toBe(1366);
  });

  it('fits 390 px: the History panel overlays the page, the table scrolls in its box', async () => {
    await resizeTo(390, 844);
    const detail = page.getByTestId('transaction-detail');
    expect(await overflow()).toEqual({ scrollWidth: 390, width: 390, offenders: [] });
    const panel = (await detail.boundingBox())!;
    expect(panel).toMatchObject({ x: 0, y: 0, width: 390 });
    // On top: the middle of the screen belongs to the panel.
    expect(
      await page.evaluate(() =>
        Boolean(document.elementFromPoint(195, 422)?.closest('[data-testid=transaction-detail]')),
      ),
    ).toBe(true);
    expect(await detail.textContent()).toContain('1,500.00 USD');
    await page.screenshot({ path: path.join(shots, 'finance-390-detail.png') });

    await detail.getByTestId('close-detail').click();
    await detail.waitFor({ state: 'detached' });
    expect(await overflow()).toEqual({ scrollWidth: 390, width: 390, offenders: [] });
    // Each transaction is a card: nothing to scroll sideways, its amount and History in view.
    const scroller = await page
      .getByTestId('transactions-scroll')
      .evaluate((el) => ({ scrollWidth: el.scrollWidth, clientWidth: el.clientWidth }));
    expect(scroller.scrollWidth).toBeLessThanOrEqual(scroller.clientWidth);
    const row = (await page.getByTestId('transaction-row').first().boundingBox())!;
    const amount = (await page.getByTestId('transaction-row').first().getByTestId('amount').first().boundingBox())!;
    const history = (await page.getByTestId('open-history').first().boundingBox())!;
    for (const box of [row, amount, history]) expect(box.x + box.width).toBeLessThanOrEqual(390);
    await page.screenshot({ path: path.join(shots, 'finance-390.png'), fullPage: true });
    expect(PNG.sync.read(fs.readFileSync(path.join(shots, 'finance-390.png'))).width).toBe(390);
    await page.setViewportSize(VIEWPORT);
  });

  it('charts succeeded money apart from failed and in-flight money, and shows the net in/out', async () => {
    // All statuses: USD has 3,360.00 succeeded and 600.00 failed (3 × 200.00); KES 14,000.00 in flight.
    await page.getByRole('button', { name: 'Reset' }).click();
    const summary = page.locator('[data-testid=summary][aria-busy=false]');
    await summary.locator('[data-currency=KES]').first().waitFor();
    const series = (currency: string) =>
      page.getByTestId(`chart-${currency}`).evaluate((canvas) => {
        const chart = (globalThis as any).Chart.getChart(canvas);
        return {
          stacked: [chart.options.scales.x.stacked, chart.options.scales.y.stacked],
          labels: chart.data.labels,
          series: chart.data.datasets.map((d: any) => [d.label, d.decimals]),
        };
      });
    const usdSucceeded = seeded
      .filter((r) => r.currency === 'USD' && r.status === 'success')
      .reduce((sum, r) => sum + r.amount, 150_000n);
    expect(await series('USD')).toEqual({
      stacked: [false, false],
      labels: ['payout'],
      series: [
        ['Succeeded', [major(usdSucceeded).replace(/,/g, '')]],
        ['Failed', ['600.00']],
      ],
    });
    expect((await series('KES')).series).toEqual([['Pending / in flight', ['14000.00']]]);

    // The bars are drawn in their own colours: green for succeeded, red for failed, side by side.
    const usd = PNG.sync.read(await page.getByTestId('chart-USD').screenshot());
    expect(countColour(usd, '#16a34a')).toBeGreaterThan(500);
    expect(countColour(usd, '#dc2626')).toBeGreaterThan(50);

    const net = async (currency: string) =>
      summary
        .locator(`[data-testid=net-flow][data-currency=${currency}] dd`)
        .evaluateAll((dds) => dds.map((d) => d.textContent));
    await summary.locator('[data-testid=net-flow][data-currency=USD] [data-testid=net-in]').waitFor();
    // Net = in − out − fees of what succeeded: USD pays out 3,360.00 and its fees; NGN takes in its
    // collections and the 150,000.00 NGN the GBP swap brought; GBP pays 80.00 and a 0.50 fee.
    const [{ fee }] = await h.db.query<{ fee: string }>('SELECT fee::text AS fee FROM transactions WHERE id = $1', [
      payout.id,
    ]);
    const usdFees = 1_200n + BigInt(fee);
    expect(await net('USD')).toEqual([
      '0.00 USD',
      `${major(usdSucceeded)} USD`,
      `${major(usdFees)} USD`,
      `-${major(usdSucceeded + usdFees)} USD`,
    ]);
    expect(await net('NGN')).toEqual(['450,000.00 NGN', '0.00 NGN', '0.00 NGN', '450,000.00 NGN']);
    expect(await net('GBP')).toEqual(['0.00 GBP', '80.00 GBP', '0.50 GBP', '-80.50 GBP']);
    expect(await net('KES')).toEqual(['—', '—', '—', '—']); // nothing succeeded: nothing moved
    // The page says what net means.
    const meaning = await page.getByTestId('net-meaning').textContent();
    expect(meaning).toContain('money in − money out − fees');
    expect(meaning).toContain('swap');
  });

  it('keeps every amount (decimals and currency) and every button in view at 390, 768, 1366 and 1920 px', async () => {
    // The ledger without a filter, no History panel open: every amount of the list, the totals and the net.
    await page.locator('[data-testid=summary][aria-busy=false] [data-currency=KES]').first().waitFor();
    for (const width of PAGE_WIDTHS) {
      await resizeTo(width, 900);
      const report = await amountsAndButtons(page);
      expect([width, report.problems]).toEqual([width, []]);
      // What was looked at: the list's amounts and fees, the totals and the net figures, with decimals.
      expect(report.amounts.length).toBeGreaterThanOrEqual(25 * 2 + 4 * 4);
      expect(report.amounts.filter((a) => a !== '—').every((a) => AMOUNT_TEXT.test(a))).toBe(true);
      expect(report.amounts).toContain('450,000.00 NGN');
      expect(report.buttons.filter((b) => b === 'History')).toHaveLength(25);
      expect(await overflow()).toEqual({ scrollWidth: width, width, offenders: [] });
      await page.screenshot({ path: path.join(shots, `finance-ledger-${width}.png`), fullPage: true });
    }
    await page.setViewportSize(VIEWPORT);
  });

  it('shows the audit trail in its own tab to a key with audit:read, with who did what', async () => {
    expect(await page.getByTestId('tab-audit').count()).toBe(0); // the finance key may not read it
    const auditorKey = await h.key(['transactions:read', 'audit:read']);
    await page.evaluate(`sessionStorage.setItem('wallet-gateway.finance.key', '${auditorKey}')`);
    await page.reload();
    await page.getByTestId('tab-audit').click();
    // Ledger and audit trail; no approvals or reports for a key without their scopes.
    expect(await page.locator('[data-testid^=tab-]').evaluateAll((tabs) => tabs.map((t) => t.textContent))).toEqual([
      'Ledger',
      'Audit trail',
    ]);
    await page.locator('[data-testid=audit-events] tr', { hasText: 'payout.confirm' }).first().waitFor();
    const text = await page.getByTestId('audit-events').textContent();
    expect(text).toContain('payout.create');
    expect(text).toContain('succeeded');
    await page.screenshot({ path: path.join(shots, 'finance-audit.png'), fullPage: true });
    expect(pageErrors).toEqual([]);
    expect(refused).toEqual([]);
    await page.evaluate(`sessionStorage.setItem('wallet-gateway.finance.key', '${financeKey}')`);
  });

  it('sends a session whose key stopped working back to sign-in, and signs out', async () => {
    // As if the key had been revoked during the session: the next call answers 401.
    await page.evaluate(`sessionStorage.setItem('wallet-gateway.finance.key', 'wgk_revoked_meanwhile')`);
    await page.reload();
    await page.getByTestId('sign-in-error').filter({ hasText: 'not accepted' }).waitFor();
    expect(await page.evaluate('sessionStorage.length')).toBe(0);

    await page.fill('#api-key', financeKey);
    await page.click('button[type=submit]');
    await page.getByTestId('sign-out').click();
    await page.locator('#api-key').waitFor();
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
  });
});
