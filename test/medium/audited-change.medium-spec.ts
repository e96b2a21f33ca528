import { randomUUID } from 'node:crypto';
import { recordAuditedChange } from '../../src/audit/audit-chain';
import { type RequestContext, runWithRequestContext } from '../../src/common/request-context';
import { mediumWorld, type MediumWorld } from '../support/medium';

/**
 * The request's audit event written in the change's own transaction (recordAuditedChange): the
 * request counts it as recorded only once that transaction has committed, so a transaction that
 * rolls back leaves it to be written again by the request's next try.
 */
describe('recordAuditedChange and the transaction that writes it (real database)', () => {
  let world: MediumWorld;

  beforeAll(async () => {
    world = await mediumWorld([]);
  });
  afterAll(() => world.close());

  const request = (): RequestContext => ({
    requestId: `req-${randomUUID()}`,
    action: 'payout.approve',
    targetType: 'payout',
    recorded: false,
  });
  const eventsOf = (context: RequestContext) =>
    world.db.query<{ target_id: string; outcome: string }>(
      'SELECT target_id, outcome FROM audit_events WHERE request_id = $1 ORDER BY id',
      [context.requestId],
    );

  it('a rolled-back transaction leaves the event unrecorded; the retry in the same request writes it', async () => {
    const context = request();
    const target = randomUUID();
    await runWithRequestContext(context, async () => {
      await expect(
        world.prisma.$transaction(async (tx) => {
          await recordAuditedChange(tx, target);
          expect(context.recorded).toBe(false); // not before the commit
          throw new Error('the change failed after its event');
        }),
      ).rejects.toThrow('the change failed');
      expect(context.recorded).toBe(false);
      await world.prisma.$transaction((tx) => recordAuditedChange(tx, target));
      expect(context.recorded).toBe(true);
    });
    expect(await eventsOf(context)).toEqual([{ target_id: target, outcome: 'succeeded' }]);
  });

  it('writes one event per request: a second call in the same transaction or after its commit writes none', async () => {
    const context = request();
    const [first, second, third] = [randomUUID(), randomUUID(), randomUUID()];
    await runWithRequestContext(context, async () => {
      await world.prisma.$transaction(async (tx) => {
        await recordAuditedChange(tx, first);
        await recordAuditedChange(tx, second);
      });
      await world.prisma.$transaction((tx) => recordAuditedChange(tx, third));
    });
    expect(context.recorded).toBe(true);
    expect(await eventsOf(context)).toEqual([{ target_id: first, outcome: 'succeeded' }]);
  });

  it('a transaction whose commit is the caller’s own (no PrismaService transaction) counts it at once, as before', async () => {
    const context = request();
    const target = randomUUID();
    await runWithRequestContext(context, () => recordAuditedChange(world.prisma, target));
    expect(context.recorded).toBe(true);
    expect(await eventsOf(context)).toEqual([{ target_id: target, outcome: 'succeeded' }]);
  });
});
