/**
 * The finance page's operations sections (web/finance/operations.js) in headless Chromium: a key
 * holding payouts:approve sees the payout another client created waiting for approval and approves
 * it (initialized upstream); reconciliation reports are started and listed with their totals.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';
import { createApiClient } from '../src/auth/api-clients.repository';
import { PrismaService } from '../src/database/prisma.service';
import { customerWithBeneficiary } from './support/fixtures';
import { type Harness, startHarness } from './support/harness';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

describe('finance page operations (e2e, Chromium)', () => {
  let h: Harness;
  let browser: Browser;
  let page: Page;
  let payoutId: string;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    if (!fs.existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM} (apt-get install -y chromium).`);
    h = await startHarness({ listen: true, env: { PAYOUT_APPROVAL_THRESHOLDS: 'USD:500000' } });
    const maker = { Authorization: `Bearer ${await h.key()}` };
    const parties = await customerWithBeneficiary(h, maker, 'ops-page@example.com');
    const held = await h
      .http()
      .post('/v1/payouts')
      .set(maker)
      .set('Idempotency-Key', randomUUID())
      .send({ ...parties, amount: 600000, description: 'Held for approval' });
    expect(held.body.status).toBe('awaiting_approval');
    payoutId = held.body.id;
    const checker = await createApiClient(h.app.get(PrismaService), 'checker', [
      'transactions:read',
      'payouts:approve',
      'reconciliation:read',
      'reconciliation:write',
    ]);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'], headless: true });
    page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
    page.setDefaultTimeout(10_000);
    page.on('pageerror', (error) => pageErrors.push(error.message));
    const port = (h.app.getHttpServer().address() as { port: number }).port;
    await page.goto(`http://127.0.0.1:${port}/finance`);
    await page.fill('#api-key', checker.key);
    await page.click('button[type=submit]');
    await page.getByTestId('transactions').waitFor();
    // Approvals and reports have their own view (tab) of the page.
    await page.getByTestId('tab-operations').click();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  it('lists the payout awaiting approval and approves it (initialized upstream)', async () => {
    const row = page.getByTestId('approval-row');
    await row.first().waitFor();
    expect(await row.count()).toBe(1);
    expect(await row.first().textContent()).toContain('6,000.00 USD');
    await row.first().getByRole('button', { name: 'Approve' }).click();
    await page.getByTestId('approval-notice').filter({ hasText: 'initiated' }).waitFor();
    const [ledger] = await h.db.query<{ status: string }>('SELECT status FROM transactions WHERE id = $1', [payoutId]);
    expect(ledger.status).toBe('initiated');
    expect(await page.getByTestId('approval-row').count()).toBe(0);
  });

  it('starts a reconciliation report and lists it', async () => {
    const section = page.getByTestId('reconciliation-runs');
    await section.getByRole('button', { name: 'Start a report' }).click();
    await page.getByTestId('reconciliation-notice').filter({ hasText: 'queued' }).waitFor();
    await section.getByTestId('reconciliation-run').first().waitFor();
    expect(await section.getByTestId('reconciliation-run').first().textContent()).toContain('queued');
    expect(pageErrors).toEqual([]);
  });
});
