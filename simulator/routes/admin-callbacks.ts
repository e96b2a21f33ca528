import type { FastifyInstance } from 'fastify';
import { parseCallbackFaults } from '../callbacks';
import { badRequest, bodyOf, optString, str } from '../http';
import type { RouteContext } from './context';

/**
 * The callback log and fault switches, under /__admin:
 * - GET /callbacks[?event=NAME] → `{callbacks: [{seq, event, data, url, at, faults, status, attempts, deliveries}]}`;
 * - DELETE /callbacks clears the log;
 * - GET|PUT|DELETE /callback-faults: the switches (`{duplicate, outOfOrder, badSignature, unsigned,
 *   delayMs, drop, times}`, see callbacks.ts), answered as `{faults}`;
 * - POST /callbacks/send `{event, data, url?}`: signs and sends any callback (to the account webhook
 *   URL unless `url` is given), faults applied → `{callback}`;
 * - GET /callbacks/idle[?timeoutMs=N] waits (default at most 10 s) until no callback is waiting for
 *   a delay or being sent → `{idle, pending}` (held ones count as pending; POST /flush sends them).
 */
export function adminCallbackRoutes(app: FastifyInstance, { callbacks }: RouteContext): void {
  app.get('/__admin/callbacks', async (request) => {
    const { event } = request.query as { event?: string };
    return { callbacks: event ? callbacks.log.filter((c) => c.event === event) : callbacks.log };
  });
  app.delete('/__admin/callbacks', async () => {
    callbacks.clearLog();
    return { ok: true };
  });

  app.get('/__admin/callback-faults', async () => ({ faults: callbacks.listFaults() }));
  app.put('/__admin/callback-faults', async (request) => {
    callbacks.setFaults(parseCallbackFaults(request.body));
    return { faults: callbacks.listFaults() };
  });
  app.delete('/__admin/callback-faults', async () => {
    callbacks.clearFaults();
    return { ok: true };
  });

  app.post('/__admin/callbacks/send', async (request) => {
    const body = bodyOf(request);
    const event = str(body, 'event');
    const data = body.data ?? {};
    if (typeof data !== 'object' || data === null || Array.isArray(data)) throw badRequest('data must be an object');
    const url = optString(body, 'url');
    if (!url && !callbacks.webhookUrl) throw badRequest('No webhook URL is configured; pass url');
    return { callback: await callbacks.send(event, data as Record<string, unknown>, { url }) };
  });

  app.get('/__admin/callbacks/idle', async (request) => {
    const { timeoutMs } = request.query as { timeoutMs?: string };
    const limit = timeoutMs === undefined ? 10_000 : Number(timeoutMs);
    if (!Number.isInteger(limit) || limit < 0) throw badRequest('timeoutMs must be a non-negative integer');
    let timer: NodeJS.Timeout | undefined;
    const idle = await Promise.race([
      callbacks.idle().then(() => true),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), limit))),
    ]);
    clearTimeout(timer);
    return { idle, pending: callbacks.pending() };
  });
}
