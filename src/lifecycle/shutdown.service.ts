import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';

/**
 * The steps of a shutdown after the HTTP server has stopped and its in-flight requests have
 * finished, in the order they run: `drain` (the webhook apply queue, the outbox pass, the audit
 * sealer), `jobs` (pg-boss), `pools` (the read pool, then Prisma's: last, so nothing above meets a
 * closed pool).
 */
export const SHUTDOWN_STAGES = ['drain', 'jobs', 'pools'] as const;
export type ShutdownStage = (typeof SHUTDOWN_STAGES)[number];

/**
 * Where this instance stands: `serving`; `draining` (a stop signal arrived: /health/ready answers
 * 503 so the load balancer takes the instance out, while every route still serves for
 * SHUTDOWN_DELAY_MS); `closing` (the HTTP server stops accepting; requests that still arrive on an
 * open connection get 503 `shutting_down` with Retry-After).
 */
export type ShutdownPhase = 'serving' | 'draining' | 'closing';

interface Closer {
  stage: ShutdownStage;
  name: string;
  close: () => Promise<unknown>;
  last: boolean;
}

/**
 * The instance's shutdown order (issue 13, "Rolling deploys"). Services that hold work or
 * connections register a closer for their stage in their constructor; `onApplicationShutdown`
 * (Nest runs it after the HTTP server has closed and its requests have finished) runs the stages
 * in SHUTDOWN_STAGES order, closers of one stage in registration order, each logged. A closer that
 * fails is logged and the next one still runs. `main.ts` drives the phases on SIGTERM/SIGINT.
 */
@Injectable()
export class ShutdownService implements OnApplicationShutdown {
  private readonly logger = new Logger('Shutdown');
  private readonly closers: Closer[] = [];
  private current: ShutdownPhase = 'serving';

  get phase(): ShutdownPhase {
    return this.current;
  }

  /**
   * Registers `close` to run in `stage` (see SHUTDOWN_STAGES); `name` appears in the log. `last`
   * puts it after the stage's other closers (Prisma's pool, which everything else may use).
   */
  register(stage: ShutdownStage, name: string, close: () => Promise<unknown>, opts: { last?: boolean } = {}): void {
    this.closers.push({ stage, name, close, last: opts.last ?? false });
  }

  /** Moves to `phase` (phases only move forward) and logs it. */
  enter(phase: ShutdownPhase, details: Record<string, unknown> = {}): void {
    const order: ShutdownPhase[] = ['serving', 'draining', 'closing'];
    if (order.indexOf(phase) <= order.indexOf(this.current)) return;
    this.current = phase;
    this.logger.log({ shutdown: phase, ...details }, `shutdown: ${phase}`);
  }

  async onApplicationShutdown(): Promise<void> {
    for (const stage of SHUTDOWN_STAGES) {
      const closers = this.closers.filter((c) => c.stage === stage);
      for (const closer of [...closers.filter((c) => !c.last), ...closers.filter((c) => c.last)]) {
        try {
          await closer.close();
          this.logger.log({ shutdown: stage, step: closer.name }, `shutdown: ${stage}: ${closer.name} done`);
        } catch (error) {
          this.logger.error(
            { shutdown: stage, step: closer.name, error: (error as Error).message },
            `shutdown: ${stage}: ${closer.name} failed`,
          );
        }
      }
    }
    this.closers.length = 0;
  }
}
