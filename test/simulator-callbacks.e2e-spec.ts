import { randomUUID } from 'node:crypto';
import { WebhooksService } from '../src/webhooks/webhooks.service';
import { customerWithBeneficiary } from './support/fixtures';
import { type Harness, startHarness } from './support/harness';

/**
 * The simulator's own callbacks, misbehaving as the provider may (its callback fault switches),
 * against a listening gateway: forged signatures, duplicate deliveries, delayed delivery, payouts
 * completed by the provider on its own, and beneficiary status callbacks.
 */
describe('simulator callbacks with fault switches (e2e)', () => {
  let h: Harness;
  let auth: Record<string, string>;
  let to: { customerId: string; beneficiaryId: string };

  const inbox = (event: string) =>
    h.db.query<{ outcome: string; provider_id: string }>(
      'SELECT outcome, provider_id FROM webhook_events WHERE event = $1 ORDER BY received_at',
      [event],
    );
  const deliveries = async (event: string) =>
    (await h.sim.admin('GET', `/callbacks?event=${encodeURIComponent(event)}`)).body.callbacks as Array<{
      data: { id: string };
      attempts: number[];
    }>;
  const status = async (id: string) =>
    (await h.db.query<{ status: string }>('SELECT status FROM transactions WHERE id = $1', [id]))[0].status;
  /** Runs the simulator's scheduled moves now and waits until it has delivered (or given up on) every callback. */
  const settle = async () => {
    await h.sim.admin('POST', '/flush');
    const idle = await h.sim.admin('GET', '/callbacks/idle?timeoutMs=10000');
    if (!idle.body.idle) throw new Error(`simulator callbacks still pending: ${JSON.stringify(idle.body)}`);
  };
  const payout = async (amount: number) => {
    const created = await h
      .http()
      .post('/v1/payouts')
      .set(auth)
      .set('Idempotency-Key', randomUUID())
      .send({ ...to, amount, description: 'simulator callbacks' });
    expect(created.status).toBe(201);
    const confirmed = await h
      .http()
      .post(`/v1/payouts/${created.body.id}/confirm`)
      .set(auth)
      .set('Idempotency-Key', randomUUID());
    expect(confirmed.status).toBe(201);
    return created.body as { id: string; providerId: string };
  };

  beforeAll(async () => {
    h = await startHarness({
      listen: true,
      simulator: { beneficiaryCallbackDelayMs: 0, payoutCompleteDelayMs: 50, callbackRetryDelayMs: 10 },
    });
    auth = { Authorization: `Bearer ${await h.key()}` };
    to = await customerWithBeneficiary(h, auth, 'simcallbacks@example.com');
    await settle();
  });
  afterAll(() => h.close());

  it("receives the simulator's beneficiary status callback, signed and matched", async () => {
    let [event] = await inbox('beneficiary.status.success');
    if (event.outcome === 'unmatched') {
      // The simulator sends it at once (delay 0), so on a busy machine it can overtake the gateway's
      // own write of the beneficiary: kept `unmatched`, it is retried (the inbox's due pass), then matches.
      await h.app.get(WebhooksService).retryDue({ now: new Date(Date.now() + 3_600_000) });
      [event] = await inbox('beneficiary.status.success');
    }
    const [beneficiary] = await h.db.query<{ provider_id: string; status: string }>(
      'SELECT provider_id, status FROM beneficiaries WHERE id = $1',
      [to.beneficiaryId],
    );
    expect(event.provider_id).toBe(beneficiary.provider_id);
    // The provider already answered `success` at creation: the callback confirms it, changing nothing.
    expect(event.outcome).toBe('unchanged');
    expect(beneficiary.status).toBe('success');
  });

  it('refuses callbacks with a forged signature (every retry), stores nothing, and applies the honest one later', async () => {
    await h.sim.admin('PUT', '/callback-faults', { badSignature: true, times: 1 });
    const p = await payout(41_000);
    await settle();
    const [forged] = (await deliveries('payout.transfer.success')).filter((d) => d.data.id === p.providerId);
    expect(forged.attempts).toEqual([401, 401, 401, 401]);
    expect((await inbox('payout.transfer.success')).filter((e) => e.provider_id === p.providerId)).toEqual([]);
    expect(await status(p.id)).toBe('pending');
    const metrics = await h.http().get('/metrics');
    expect(metrics.text).toMatch(/webhook_signature_failures_total [4-9]/);

    // The provider sends it again, correctly signed this time: applied once.
    const resent = await h.sim.admin('POST', '/callbacks/send', {
      event: 'payout.transfer.success',
      data: { id: p.providerId, status: 'success' },
    });
    expect(resent.status).toBeLessThan(300);
    await settle();
    expect(await status(p.id)).toBe('success');
  });

  it('applies a payout completed by the provider on its own once, however many copies arrive', async () => {
    await h.sim.admin('PUT', '/callback-faults', { duplicate: 2, times: 1 });
    const p = await payout(42_000);
    await settle();
    const [delivered] = (await deliveries('payout.transfer.success')).filter((d) => d.data.id === p.providerId);
    expect(delivered.attempts).toEqual([200, 200, 200]);
    expect(await status(p.id)).toBe('success');
    expect(
      await h.db.query(`SELECT "to" FROM transaction_status_changes WHERE transaction_id = $1 AND source = 'webhook'`, [
        p.id,
      ]),
    ).toEqual([{ to: 'success' }]);
  });

  it('fails a payout the provider refuses (amount ending in 13) through its delayed callback', async () => {
    await h.sim.admin('PUT', '/callback-faults', { delayMs: 200, times: 1 });
    const p = await payout(11_300);
    expect(await status(p.id)).toBe('pending');
    await settle();
    expect(await status(p.id)).toBe('failed');
  });
});
