import { Logger } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { ShutdownService } from './shutdown.service';

/** How often a closing server ends the kept-alive connections that have become idle, ms. */
const IDLE_SWEEP_MS = 100;

/** Signals that stop the gateway in order (a container runtime sends SIGTERM; Ctrl-C is SIGINT). */
export const STOP_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

/**
 * Stops `app` in order on SIGTERM, SIGINT or SIGHUP (issue 13, "Rolling deploys"), then exits 0
 * (1 when closing failed):
 *  1. `draining`: /health/ready answers 503 at once, every other route keeps serving for
 *     `delayMs` (SHUTDOWN_DELAY_MS), long enough for the load balancer's health checks to notice;
 *  2. `closing`: the HTTP server stops accepting and finishes its in-flight requests (a provider
 *     call may take PROVIDER_TIMEOUT_MS), each connection ended as soon as it is idle; a request
 *     still arriving on an open connection gets 503 `shutting_down` with Retry-After (app.ts);
 *  3. ShutdownService's stages: webhook apply queue, outbox pass and audit sealer, pg-boss, then the pools.
 * A second signal during the delay cuts the delay short; the order stays the same.
 * Used by main.ts only (tests close their apps directly).
 */
export function stopOnSignals(app: NestFastifyApplication, delayMs: number): void {
  const logger = new Logger('Shutdown');
  const shutdown = app.get(ShutdownService);
  let skipDelay: (() => void) | undefined;
  let started = false;
  const stop = async (signal: string): Promise<void> => {
    shutdown.enter('draining', { signal, delayMs });
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, delayMs);
      skipDelay = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    shutdown.enter('closing');
    // Node's close() ends the connections idle at that moment; one busy with a request that was
    // running before the stop signal (so answered without `Connection: close`) would then stay
    // open, kept alive by the load balancer, and hold the close for as long (30 s and more seen in
    // bench:cluster). Ended as soon as it is idle instead.
    const server = app.getHttpServer();
    const sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
    try {
      await app.close();
    } finally {
      clearInterval(sweep);
    }
    logger.log({ shutdown: 'complete' }, 'shutdown: complete');
  };
  for (const signal of STOP_SIGNALS) {
    process.on(signal, () => {
      if (started) {
        skipDelay?.();
        return;
      }
      started = true;
      stop(signal).then(
        () => process.exit(0),
        (error: unknown) => {
          logger.error({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
    });
  }
}
