/**
 * The finance page's operations sections (web/finance/operations.js) in headless Chromium: a key
 * holding payouts:approve sees the payouts another client created waiting for approval and approves
 * one (initialized upstream); reconciliation reports are started and listed with their totals.
 * Every refused action (approve, reject, start a report, export one) is shown to the person and
 * stays shown after the list reloads; the amounts and buttons stay in view at every width.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { createApiClient } from '../src/auth/api-clients.repository';
import { PrismaService } from '../src/database/prisma.service';
import { customerWithBeneficiary } from './support/fixtures';
import { type Harness, startHarness } from './support/harness';
import { AMOUNT_TEXT, amountsAndButtons, PAGE_WIDTHS } from './support/page-layout';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

describe('finance page operations (e2e, Chromium)', () => {
  let h: Harness;
  let browser: Browser;
  let page: Page;
  let origin: string;
  let makerKey: string;
  let checkerKey: string;
  const held: Array<{ id: string; reference: string }> = [];
  const pageErrors: string[] = [];
  // Screenshots go to FINANCE_PAGE_SHOTS when set (to look at the page), else to a folder removed at the end.
  const keep = process.env.FINANCE_PAGE_SHOTS;
  const shots = keep
    ? (fs.mkdirSync(keep, { recursive: true }), keep)
    : fs.mkdtempSync(path.join(os.tmpdir(), 'finance-ops-'));

  const signIn = async (key: string) => {
    await page.goto(`${origin}/finance`);
    await page.evaluate('sessionStorage.clear()');
    await page.reload();
    await page.fill('#api-key', key);
    await page.click('button[type=submit]');
    await page.getByTestId('transactions').waitFor();
    // Approvals and reports have their own view (tab) of the page, shown once the key's scopes are known.
    await page.getByTestId('tab-operations').click();
    await page.getByTestId('approval-row').first().waitFor();
  };

  /** Clicks `button` and waits for the decision's answer and for the list read after it. */
  const decideAndReload = async (click: () => Promise<void>, decision: 'approve' | 'reject') => {
    const answered = page.waitForResponse((res) => res.url().includes(`/${decision}`));
    const reloaded = page.waitForResponse(
      (res) => res.url().includes('/v1/transactions?') && res.url().includes('awaiting_approval'),
    );
    await click();
    const answer = await answered;
    await reloaded;
    return answer;
  };

  beforeAll(async () => {
    if (!fs.existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM} (apt-get install -y chromium).`);
    h = await startHarness({ listen: true, env: { PAYOUT_APPROVAL_THRESHOLDS: 'USD:500000' } });
    // The maker holds every scope, payouts:approve too: it still may not decide its own payouts.
    makerKey = await h.key();
    const maker = { Authorization: `Bearer ${makerKey}` };
    const parties = await customerWithBeneficiary(h, maker, 'ops-page@example.com');
    for (const amount of [600000, 750050]) {
      const res = await h
        .http()
        .post('/v1/payouts')
        .set(maker)
        .set('Idempotency-Key', randomUUID())
        .send({ ...parties, amount, description: 'Held for approval' });
      expect(res.body.status).toBe('awaiting_approval');
      held.push({ id: res.body.id, reference: res.body.reference });
    }
    const checker = await createApiClient(h.app.get(PrismaService), 'checker', [
      'transactions:read',
      'payouts:approve',
      'reconciliation:read',
      'reconciliation:write',
    ]);
    checkerKey = checker.key;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'], headless: true });
    page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
    page.setDefaultTimeout(10_000);
    page.on('pageerror', (error) => pageErrors.push(error.message));
    origin = `http://127.0.0.1:${(h.app.getHttpServer().address() as { port: number }).port}`;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await h?.close();
    if (!keep) fs.rmSync(shots, { recursive: true, force: true });
  });

  it("shows the refusal of an approval of one's own payout, and keeps it after the list reloads", async () => {
    await signIn(makerKey);
    const row = page.getByTestId('approval-row').filter({ hasText: held[0].reference });
    const answer = await decideAndReload(() => row.getByRole('button', { name: 'Approve' }).click(), 'approve');
    expect(answer.status()).toBe(403);
    expect((await answer.json()).code).toBe('approver_is_creator');
    const error = page.getByTestId('approval-error');
    await error.waitFor();
    expect(await error.textContent()).toContain(`Payout ${held[0].reference} was not approved`);
    expect(await error.textContent()).toContain('This key created the payout: another key must decide it.');
    // Nothing moved, and the row is still offered.
    const [ledger] = await h.db.query<{ status: string }>('SELECT status FROM transactions WHERE id = $1', [
      held[0].id,
    ]);
    expect(ledger.status).toBe('awaiting_approval');
    expect(await page.getByTestId('approval-row').count()).toBe(2);
  });

  it("shows the refusal of a rejection of one's own payout", async () => {
    page.once('dialog', (dialog) => void dialog.accept('not needed'));
    const row = page.getByTestId('approval-row').filter({ hasText: held[1].reference });
    const answer = await decideAndReload(() => row.getByRole('button', { name: 'Reject' }).click(), 'reject');
    expect(answer.status()).toBe(403);
    const error = page.getByTestId('approval-error');
    await error.filter({ hasText: `Payout ${held[1].reference} was not rejected` }).waitFor();
    expect(await error.textContent()).toContain('another key must decide it');
    expect(await error.getAttribute('role')).toBe('alert');
  });

  it('keeps every amount and button in view at 390, 768, 1366 and 1920 px', async () => {
    await signIn(checkerKey);
    // A report to list, so that its Export button is looked at too.
    await page.getByRole('button', { name: 'Start a report' }).click();
    await page.getByTestId('reconciliation-run').first().waitFor();
    for (const width of PAGE_WIDTHS) {
      await page.setViewportSize({ width, height: 900 });
      await page
        .waitForFunction((w) => (globalThis as any).document.documentElement.scrollWidth <= w, width, {
          timeout: 5_000,
        })
        .catch(() => undefined);
      const report = await amountsAndButtons(page);
      expect([width, report.problems]).toEqual([width, []]);
      expect(report.amounts).toEqual(['6,000.00 USD', '7,500.50 USD']);
      expect(report.amounts.every((a) => AMOUNT_TEXT.test(a))).toBe(true);
      for (const label of ['Approve', 'Reject']) expect(report.buttons.filter((b) => b === label)).toHaveLength(2);
      expect(report.buttons).toContain('Export');
      expect(report.buttons).toContain('Start a report');
      await page.screenshot({ path: path.join(shots, `finance-operations-${width}.png`), fullPage: true });
    }
    await page.setViewportSize({ width: 1366, height: 900 });
  });

  it('lists the payouts awaiting approval and approves one (initialized upstream)', async () => {
    const row = page.getByTestId('approval-row').filter({ hasText: held[0].reference });
    expect(await row.textContent()).toContain('6,000.00 USD');
    await row.getByRole('button', { name: 'Approve' }).click();
    await page.getByTestId('approval-notice').filter({ hasText: 'initiated' }).waitFor();
    const [ledger] = await h.db.query<{ status: string }>('SELECT status FROM transactions WHERE id = $1', [
      held[0].id,
    ]);
    expect(ledger.status).toBe('initiated');
    await page.waitForFunction(
      () => (globalThis as any).document.querySelectorAll('[data-testid=approval-row]').length === 1,
    );
    expect(await page.getByTestId('approval-error').count()).toBe(0);
  });

  it('rejects a payout with a reason, which its status history on the ledger shows', async () => {
    page.once('dialog', (dialog) => void dialog.accept('duplicate of invoice 4411'));
    const row = page.getByTestId('approval-row').filter({ hasText: held[1].reference });
    await row.getByRole('button', { name: 'Reject' }).click();
    await page.getByTestId('approval-notice').filter({ hasText: 'rejected' }).waitFor();
    await page.getByTestId('tab-ledger').click();
    await page.locator(`[data-testid=transaction-row][data-id="${held[1].id}"] [data-testid=open-history]`).click();
    const notes = page.getByTestId('transaction-detail').getByTestId('status-note');
    await notes.last().waitFor();
    expect(await notes.last().textContent()).toBe('rejected: duplicate of invoice 4411');
    await page.getByTestId('close-detail').click();
    await page.getByTestId('tab-operations').click();
  });

  it('lists the report started, and shows a refused start of a report for the same period', async () => {
    const section = page.getByTestId('reconciliation-runs');
    expect(await section.getByTestId('reconciliation-run').first().textContent()).toContain('queued');
    const answered = page.waitForResponse((res) => res.request().method() === 'POST');
    await section.getByRole('button', { name: 'Start a report' }).click();
    expect((await answered).status()).toBe(409);
    await page
      .getByTestId('reconciliation-refusal')
      .filter({ hasText: 'The report was not started: a report for this period is already running.' })
      .waitFor();
  });

  it('shows a refused start of a report for a period that ends before it begins', async () => {
    const section = page.getByTestId('reconciliation-runs');
    await section.locator('input[type=date]').first().fill('2026-11-20');
    await section.locator('input[type=date]').last().fill('2026-11-10');
    const answered = page.waitForResponse((res) => res.request().method() === 'POST');
    await section.getByRole('button', { name: 'Start a report' }).click();
    expect((await answered).status()).toBe(400);
    const refusal = page.getByTestId('reconciliation-refusal');
    await refusal.filter({ hasText: 'to must be after from' }).waitFor();
    expect(await refusal.textContent()).toContain('The report was not started');
    expect(await page.getByTestId('reconciliation-notice').count()).toBe(0);
  });

  it('shows a refused export of a report that is gone', async () => {
    const section = page.getByTestId('reconciliation-runs');
    const [run] = await h.db.query<{ id: string }>(
      'SELECT id FROM reconciliation_runs ORDER BY created_at DESC LIMIT 1',
    );
    await h.db.query('DELETE FROM reconciliation_items WHERE run_id = $1', [run.id]);
    await h.db.query('DELETE FROM reconciliation_runs WHERE id = $1', [run.id]);
    const answered = page.waitForResponse((res) => res.url().includes(`/v1/reconciliation-runs/${run.id}/export`));
    await section.getByTestId('reconciliation-run').first().getByRole('button', { name: 'Export' }).click();
    expect((await answered).status()).toBe(404);
    await page
      .getByTestId('reconciliation-refusal')
      .filter({ hasText: "The report's CSV could not be downloaded" })
      .waitFor();
    expect(pageErrors).toEqual([]);
  });

  it('offers a key only the sections its scopes allow', async () => {
    // Reports without approvals: no approval queue, and no way to start a report without reconciliation:write.
    const reader = await h.key(['transactions:read', 'reconciliation:read']);
    await page.evaluate(`sessionStorage.setItem('wallet-gateway.finance.key', '${reader}')`);
    const refused: string[] = [];
    page.on('response', (res) => res.status() === 403 && refused.push(res.url()));
    await page.reload();
    await page.getByTestId('tab-operations').click();
    await page.getByTestId('reconciliation-runs').waitFor();
    expect(await page.getByTestId('approval-queue').count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Start a report' }).count()).toBe(0);
    expect(await page.getByTestId('tab-audit').count()).toBe(0);
    expect(refused).toEqual([]);
  });
});
