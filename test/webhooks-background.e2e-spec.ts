import { WebhooksService } from '../src/webhooks/webhooks.service';
import { confirmedPayout, customerWithBeneficiary, postCallback } from './support/fixtures';
import { type Harness, startHarness } from './support/harness';

/**
 * Production mode (WEBHOOK_APPLY=background): a callback is answered as soon as it is stored, then
 * applied on the instance's queue. Concurrent deliveries and duplicates still apply each effect once.
 */
describe('provider callbacks applied in the background (e2e)', () => {
  let h: Harness;

  beforeAll(async () => {
    // A queue of 3 overflows with the 8 events sent at once: the rest wait in the inbox and are pumped in.
    h = await startHarness({
      env: { WEBHOOK_APPLY: 'background', WEBHOOK_APPLY_CONCURRENCY: '2', WEBHOOK_APPLY_QUEUE_LIMIT: '3' },
    });
  });
  afterAll(() => h.close());

  it('acknowledges at once and applies every event exactly once, duplicates included', async () => {
    const auth = { Authorization: `Bearer ${await h.key()}` };
    const to = await customerWithBeneficiary(h, auth, 'background@example.com');
    const payouts = [];
    for (const amount of [11_000, 12_000, 13_000, 14_000, 15_000, 16_000, 17_000, 18_000]) {
      payouts.push(await confirmedPayout(h, auth, to, amount));
    }
    const events = payouts.map((p) => ({
      event: 'payout.transfer.success',
      data: { id: p.providerId, reference: p.reference, status: 'success' },
    }));
    // Every event three times, all at once.
    const answers = await Promise.all([...events, ...events, ...events].map((event) => postCallback(h, event)));
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    expect(answers.filter((a) => !a.body.duplicate)).toHaveLength(payouts.length);
    expect(answers.every((a) => a.body.outcome === 'pending')).toBe(true);

    await h.app.get(WebhooksService).drain();
    const inbox = await h.db.query<{ outcome: string; attempts: number }>(
      'SELECT outcome, attempts FROM webhook_events',
    );
    expect(inbox).toEqual(payouts.map(() => ({ outcome: 'applied', attempts: 1 })));
    for (const p of payouts) {
      const moves = await h.db.query(
        `SELECT "from", "to" FROM transaction_status_changes WHERE transaction_id = $1 AND source = 'webhook'`,
        [p.id],
      );
      expect(moves).toEqual([{ from: 'pending', to: 'success' }]);
    }
  });
});
