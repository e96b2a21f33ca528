import { randomUUID } from 'node:crypto';
import { noteProviderCall } from '../../src/common/idempotency/idempotency-context';
import { IdempotencyRepository } from '../../src/common/idempotency/idempotency.repository';
import { IdempotencyService } from '../../src/common/idempotency/idempotency.service';
import { PendingWrites } from '../../src/database/pending-writes';
import { OutboxRepository } from '../../src/outbound/outbox.repository';
import { OutboxService } from '../../src/outbound/outbox.service';
import { LedgerRepository } from '../../src/transactions/ledger.repository';
import { LedgerService } from '../../src/transactions/ledger.service';
import { mediumWorld, type MediumWorld } from '../support/medium';

/** The error node-postgres throws when the server ends the session (a restart's fast shutdown). */
function sessionEnded(): Error {
  return Object.assign(new Error('terminating connection due to administrator command'), {
    code: '57P01',
    severity: 'FATAL',
  });
}

/**
 * What an Idempotency-Key's request cut by a database outage leaves, once the database is back
 * (IdempotencyService's recovery through PendingWrites): a row written ahead of a provider call
 * never made is released and the key runs anew; after a provider call the key is answered from
 * the row at once, not after IDEMPOTENCY_LEASE_MS. (test/database-outage.e2e-spec.ts does it with
 * a real restart; here the outage is the driver's error thrown after the write-ahead committed,
 * as when the commit's acknowledgement is lost.)
 */
describe('recovery of a request cut by a database outage, on a real database', () => {
  let world: MediumWorld;
  let service: IdempotencyService;
  let repo: IdempotencyRepository;
  let ledger: LedgerService;
  let pending: PendingWrites;
  let clientId: string;
  const released: string[] = [];

  beforeAll(async () => {
    world = await mediumWorld(
      [LedgerService, LedgerRepository, OutboxService, OutboxRepository, IdempotencyRepository, IdempotencyService],
      { IDEMPOTENCY_LEASE_MS: 600_000, SETTLEMENT_DEADLINE: 10 },
    );
    service = world.moduleRef.get(IdempotencyService);
    repo = world.moduleRef.get(IdempotencyRepository);
    ledger = world.moduleRef.get(LedgerService);
    pending = world.moduleRef.get(PendingWrites);
    service.registerResource('payout', (id) => ledger.get(id));
    service.registerRelease('payout', async (id) => {
      released.push(id);
      await ledger.transition(id, 'failed', 'api', { patch: { failureReason: 'released' } });
    });
    [{ id: clientId }] = await world.db.query<{ id: string }>(
      `INSERT INTO api_clients (id, name, key_hash, key_prefix, scopes) VALUES (gen_random_uuid(), 'c', $1, 'wg_', '{}') RETURNING id`,
      [randomUUID()],
    );
  });
  afterAll(() => world.close());

  /** A request's work: writes a payout row ahead (noted on the key), optionally "calls the provider", then loses the database. */
  const cutWork = (written: { id?: string }, providerCalled: boolean) => async () => {
    const row = await ledger.record({
      kind: 'payout',
      direction: 'debit',
      amount: 1000n,
      currency: 'USD',
      reference: `ref-${randomUUID()}`,
    });
    written.id = row.id;
    if (providerCalled) noteProviderCall();
    throw sessionEnded();
  };
  const status = async (id: string) =>
    (await world.db.query<{ status: string }>('SELECT status FROM transactions WHERE id = $1', [id]))[0].status;

  it('releases a row the provider never saw and lets the retry run the request anew', async () => {
    const key = randomUUID();
    const written: { id?: string } = {};
    await expect(service.run(clientId, key, 'fp', cutWork(written, false))).rejects.toMatchObject({ code: '57P01' });
    await pending.settled();
    expect(released).toContain(written.id);
    expect(await status(written.id as string)).toBe('failed');
    expect(await repo.find(clientId, key)).toMatchObject({ state: 'in_progress', resourceId: null });
    // The retry (same key, same request) runs the work anew, without waiting for the 10-minute lease.
    const retried = await service.run(clientId, key, 'fp', () =>
      Promise.resolve({ status: 201, body: { anew: true } }),
    );
    expect(retried).toEqual({ status: 201, body: { anew: true }, replayed: false });
  });

  it('after a provider call, never releases: the retry is answered from the row at once', async () => {
    const key = randomUUID();
    const written: { id?: string } = {};
    await expect(service.run(clientId, key, 'fp', cutWork(written, true))).rejects.toMatchObject({ code: '57P01' });
    await pending.settled();
    expect(released).not.toContain(written.id);
    expect(await status(written.id as string)).toBe('created');
    const work = jest.fn(() => Promise.resolve({ status: 201, body: { anew: true } }));
    const retried = await service.run(clientId, key, 'fp', work);
    expect(work).not.toHaveBeenCalled();
    expect(retried).toMatchObject({ status: 201, replayed: true, body: { id: written.id, status: 'created' } });
  });
});
