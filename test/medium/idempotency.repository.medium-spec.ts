import { randomUUID } from 'node:crypto';
import { ConflictError, ErrorCode } from '../../src/common/errors';
import { noteIdempotentResource, runWithIdempotencyClaim } from '../../src/common/idempotency/idempotency-context';
import { IdempotencyRepository } from '../../src/common/idempotency/idempotency.repository';
import { IdempotencyService } from '../../src/common/idempotency/idempotency.service';
import { mediumWorld, type MediumWorld } from '../support/medium';

/** Idempotency claims on `idempotency_records`: the repository's claims and the service's answers over them. */
describe('IdempotencyRepository (and IdempotencyService over it) on a real database', () => {
  let world: MediumWorld;
  let repo: IdempotencyRepository;
  let service: IdempotencyService;

  beforeAll(async () => {
    world = await mediumWorld([IdempotencyRepository, IdempotencyService], { IDEMPOTENCY_LEASE_MS: 60_000 });
    repo = world.moduleRef.get(IdempotencyRepository);
    service = world.moduleRef.get(IdempotencyService);
  });
  afterAll(() => world.close());

  async function client(): Promise<string> {
    const [row] = await world.db.query<{ id: string }>(
      `INSERT INTO api_clients (id, name, key_hash, key_prefix, scopes) VALUES (gen_random_uuid(), 'c', $1, 'wg_', '{}') RETURNING id`,
      [randomUUID()],
    );
    return row.id;
  }

  const day = () => new Date(Date.now() + 86_400_000);
  const inProgress = (clientId: string, key: string, leaseExpiresAt: Date, fingerprint = 'fp-1') =>
    repo.insertInProgress({ clientId, key, fingerprint, expiresAt: day(), leaseExpiresAt });

  it('claim new: the first insert of (client, key) wins, in progress with its fingerprint and lease', async () => {
    const clientId = await client();
    const lease = new Date(Date.now() + 60_000);
    expect(await inProgress(clientId, 'k-new', lease)).toBe(true);
    expect(await repo.find(clientId, 'k-new')).toMatchObject({
      state: 'in_progress',
      fingerprint: 'fp-1',
      leaseExpiresAt: lease,
      responseBody: null,
    });
  });

  it('in-progress conflict: a second insert of the same (client, key) loses; another client has its own keys', async () => {
    const clientId = await client();
    expect(await inProgress(clientId, 'k-busy', new Date(Date.now() + 60_000))).toBe(true);
    expect(await inProgress(clientId, 'k-busy', new Date(Date.now() + 60_000))).toBe(false);
    expect(await inProgress(await client(), 'k-busy', new Date(Date.now() + 60_000))).toBe(true);
  });

  it('storeResponse and releaseClaim act only under the claim own lease', async () => {
    const clientId = await client();
    const lease = new Date(Date.now() + 60_000);
    await inProgress(clientId, 'k-store', lease);
    await repo.storeResponse({ clientId, key: 'k-store', leaseExpiresAt: new Date(lease.getTime() + 1) }, 201, {});
    await repo.releaseClaim({ clientId, key: 'k-store', leaseExpiresAt: new Date(lease.getTime() + 1) });
    expect(await repo.find(clientId, 'k-store')).toMatchObject({ state: 'in_progress', responseStatus: null });
    await repo.storeResponse({ clientId, key: 'k-store', leaseExpiresAt: lease }, 201, { id: 'x' });
    expect(await repo.find(clientId, 'k-store')).toMatchObject({
      state: 'completed',
      responseStatus: 201,
      responseBody: { id: 'x' },
    });
    await inProgress(clientId, 'k-release', lease);
    await repo.releaseClaim({ clientId, key: 'k-release', leaseExpiresAt: lease });
    expect(await repo.find(clientId, 'k-release')).toBeNull();
  });

  it('insertInProgress replaces an expired record of the key in the same statement; an unexpired one stays', async () => {
    const clientId = await client();
    const past = new Date(Date.now() - 1_000);
    await repo.insertInProgress({
      clientId,
      key: 'k-old',
      fingerprint: 'fp-old',
      expiresAt: past,
      leaseExpiresAt: past,
    });
    await world.db.query(
      `UPDATE idempotency_records SET state = 'completed', response_status = 201, response_body = '{"id":"old"}',
         resource_type = 'payout', resource_id = 'p-old' WHERE client_id = $1 AND key = 'k-old'`,
      [clientId],
    );
    const lease = new Date(Date.now() + 60_000);
    expect(await inProgress(clientId, 'k-old', lease, 'fp-new')).toBe(true);
    expect(await repo.find(clientId, 'k-old')).toMatchObject({
      state: 'in_progress',
      fingerprint: 'fp-new',
      leaseExpiresAt: lease,
      responseStatus: null,
      responseBody: null,
      resourceType: null,
      resourceId: null,
    });
    expect(await inProgress(clientId, 'k-old', new Date(Date.now() + 90_000), 'fp-other')).toBe(false);
    expect(await repo.find(clientId, 'k-old')).toMatchObject({ fingerprint: 'fp-new', leaseExpiresAt: lease });
  });

  it('deleteIfExpired removes the record only once it has expired', async () => {
    const clientId = await client();
    await repo.insertInProgress({
      clientId,
      key: 'k-expired',
      fingerprint: 'fp',
      expiresAt: new Date(Date.now() - 1_000),
      leaseExpiresAt: new Date(Date.now() - 1_000),
    });
    await inProgress(clientId, 'k-kept', new Date(Date.now() + 60_000));
    await repo.deleteIfExpired(clientId, 'k-expired', new Date());
    await repo.deleteIfExpired(clientId, 'k-kept', new Date());
    expect(await repo.find(clientId, 'k-expired')).toBeNull();
    expect(await repo.find(clientId, 'k-kept')).not.toBeNull();
  });

  describe('takeOverLapsed (claim: take a lapsed claim over once)', () => {
    it('taken over: the one caller naming the lapsed lease gets it; the record carries the new lease', async () => {
      const clientId = await client();
      const lapsed = new Date(Date.now() - 1_000);
      await inProgress(clientId, 'k-lapsed', lapsed);
      const row = await repo.find(clientId, 'k-lapsed');
      const takenOver = new Date(Date.now() + 60_000);
      expect(await repo.takeOverLapsed(row!.id, lapsed, takenOver)).toBe(true);
      expect((await repo.find(clientId, 'k-lapsed'))?.leaseExpiresAt).toEqual(takenOver);
    });

    it('lost race: of concurrent take-overs of one lapsed lease exactly one wins; a late one finds it taken', async () => {
      const clientId = await client();
      const lapsed = new Date(Date.now() - 1_000);
      await inProgress(clientId, 'k-race', lapsed);
      const { id } = (await repo.find(clientId, 'k-race'))!;
      const wins = await Promise.all(
        [1, 2, 3, 4].map((i) => repo.takeOverLapsed(id, lapsed, new Date(Date.now() + 60_000 + i))),
      );
      expect(wins.filter(Boolean)).toHaveLength(1);
      expect(await repo.takeOverLapsed(id, lapsed, new Date(Date.now() + 90_000))).toBe(false);
    });

    it('refused: a claim that wrote its resource, or a completed one, is never taken over', async () => {
      const clientId = await client();
      const lapsed = new Date(Date.now() - 1_000);
      await inProgress(clientId, 'k-resource', lapsed);
      await world.db.query(
        `UPDATE idempotency_records SET resource_type = 'payout', resource_id = $2 WHERE client_id = $1 AND key = 'k-resource'`,
        [clientId, randomUUID()],
      );
      const withResource = (await repo.find(clientId, 'k-resource'))!;
      expect(await repo.takeOverLapsed(withResource.id, lapsed, new Date(Date.now() + 60_000))).toBe(false);
      await inProgress(clientId, 'k-done', lapsed);
      await repo.storeResponse({ clientId, key: 'k-done', leaseExpiresAt: lapsed }, 200, {});
      const done = (await repo.find(clientId, 'k-done'))!;
      expect(await repo.takeOverLapsed(done.id, lapsed, new Date(Date.now() + 60_000))).toBe(false);
    });
  });

  describe('noteResource (claim: record the resource written ahead of the provider call)', () => {
    it('owned: sets the resource inside the caller transaction; the first resource wins', async () => {
      const clientId = await client();
      const lease = new Date(Date.now() + 60_000);
      await inProgress(clientId, 'k-note', lease);
      const claim = { clientId, key: 'k-note', leaseExpiresAt: lease };
      expect(
        await world.prisma.$transaction((tx) => IdempotencyRepository.noteResource(tx, claim, 'payout', 'p-1')),
      ).toBe(true);
      expect(await IdempotencyRepository.noteResource(world.prisma, claim, 'card', 'c-1')).toBe(true);
      expect(await repo.find(clientId, 'k-note')).toMatchObject({ resourceType: 'payout', resourceId: 'p-1' });
    });

    it('rolled back with the caller transaction; lost claim (another lease) or no record: false, nothing set', async () => {
      const clientId = await client();
      const lease = new Date(Date.now() + 60_000);
      await inProgress(clientId, 'k-lost', lease);
      const claim = { clientId, key: 'k-lost', leaseExpiresAt: lease };
      await expect(
        world.prisma.$transaction(async (tx) => {
          await IdempotencyRepository.noteResource(tx, claim, 'payout', 'p-1');
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      const stale = { ...claim, leaseExpiresAt: new Date(lease.getTime() + 1) };
      expect(await IdempotencyRepository.noteResource(world.prisma, stale, 'payout', 'p-2')).toBe(false);
      expect(await IdempotencyRepository.noteResource(world.prisma, { ...claim, key: 'k-none' }, 'payout', 'p-3')).toBe(
        false,
      );
      expect(await repo.find(clientId, 'k-lost')).toMatchObject({ resourceType: null, resourceId: null });
    });

    it('noteIdempotentResource: no-op outside a claim; 409 request_in_progress when the claim is lost', async () => {
      const clientId = await client();
      const lease = new Date(Date.now() + 60_000);
      await inProgress(clientId, 'k-ctx', lease);
      await noteIdempotentResource(world.prisma, 'payout', 'p-0');
      expect(await repo.find(clientId, 'k-ctx')).toMatchObject({ resourceId: null });
      const stale = { clientId, key: 'k-ctx', leaseExpiresAt: new Date(lease.getTime() + 1) };
      await expect(
        runWithIdempotencyClaim(stale, () => noteIdempotentResource(world.prisma, 'payout', 'p-1')),
      ).rejects.toMatchObject({ code: ErrorCode.RequestInProgress });
      await runWithIdempotencyClaim({ ...stale, leaseExpiresAt: lease }, () =>
        noteIdempotentResource(world.prisma, 'payout', 'p-2'),
      );
      expect(await repo.find(clientId, 'k-ctx')).toMatchObject({ resourceType: 'payout', resourceId: 'p-2' });
    });
  });

  describe('IdempotencyService.run over the repository', () => {
    it('claim new, then replay: the work runs once and the same request gets the stored answer', async () => {
      const clientId = await client();
      let runs = 0;
      const work = async () => ({ status: 201, body: { run: ++runs } });
      expect(await service.run(clientId, 'k-run', 'fp-run', work)).toEqual({
        status: 201,
        body: { run: 1 },
        replayed: false,
      });
      expect(await service.run(clientId, 'k-run', 'fp-run', work)).toEqual({
        status: 201,
        body: { run: 1 },
        replayed: true,
      });
      expect(runs).toBe(1);
    });

    it('fingerprint mismatch: the same key with another request is 409 idempotency_key_reused, the work not run', async () => {
      const clientId = await client();
      await service.run(clientId, 'k-reuse', 'fp-a', async () => ({ status: 201, body: {} }));
      let ran = false;
      const error = await service
        .run(clientId, 'k-reuse', 'fp-b', async () => {
          ran = true;
          return { status: 201, body: {} };
        })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConflictError);
      expect((error as ConflictError).code).toBe(ErrorCode.IdempotencyKeyReused);
      expect(ran).toBe(false);
    });

    it('lease takeover after expiry: a retry of a claim whose process died (no resource) runs the work', async () => {
      const clientId = await client();
      await inProgress(clientId, 'k-dead', new Date(Date.now() - 1_000), 'fp-dead');
      const answer = await service.run(clientId, 'k-dead', 'fp-dead', async () => ({ status: 201, body: { ok: 1 } }));
      expect(answer).toEqual({ status: 201, body: { ok: 1 }, replayed: false });
      expect(await repo.find(clientId, 'k-dead')).toMatchObject({ state: 'completed', responseBody: { ok: 1 } });
    });
  });
});
