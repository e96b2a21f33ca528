import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Env } from '../config/env';
import { ShutdownService } from '../lifecycle/shutdown.service';
import { AuditRepository, type SealReport } from './audit.repository';

/**
 * Seals the audit trail (issue 14 item 3, issue 16): changes write their events unchained in their
 * own transactions (no lock); this service chains the committed ones (`seq`, `prev_hash`, `hash`)
 * in insertion order, under an advisory lock that only sealers take (audit.repository.ts
 * `sealPendingEvents`, which also describes the window before an event is sealed).
 *
 * With JOBS_ENABLED each instance runs a pass every AUDIT_SEAL_MS (default 1 s); a pass that finds
 * another instance sealing skips (safe with many instances). `sealNow` seals on demand, waiting for
 * the lock: GET /v1/audit-events calls it before listing, so a client reading right after its
 * change finds the change's event chained. On shutdown (stage `drain`) the timer stops, the pass in
 * flight is awaited and one last pass seals what this instance's last requests wrote.
 */
@Injectable()
export class AuditSealerService implements OnApplicationBootstrap {
  private readonly logger = new Logger('AuditSealer');
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;
  private stopped = false;
  private readonly periodic: boolean;

  constructor(
    private readonly repository: AuditRepository,
    private readonly config: ConfigService<Env, true>,
    shutdown: ShutdownService,
  ) {
    this.periodic = config.get('JOBS_ENABLED', { infer: true });
    shutdown.register('drain', 'audit sealer', () => this.stop());
  }

  onApplicationBootstrap(): void {
    if (this.periodic) this.schedule();
  }

  /**
   * Seals every event committed before the call (waits for another sealer to finish first).
   * Resolves to how many events this call sealed.
   * @throws whatever the database throws.
   */
  async sealNow(): Promise<number> {
    return (await this.repository.seal({ wait: true })).sealed;
  }

  /** One periodic pass: seals what is pending unless another sealer holds the lock. Never throws. */
  async pass(): Promise<SealReport | null> {
    try {
      const report = await this.repository.seal({ wait: false });
      if (report.sealed > 0) this.logger.debug({ sealed: report.sealed }, 'audit events sealed');
      return report;
    } catch (error) {
      this.logger.error({ err: error }, 'audit sealing pass failed');
      return null;
    }
  }

  /** Shutdown stage `drain`: stops the timer, waits for the pass in flight, then seals once more. */
  private async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
    if (this.periodic) await this.pass();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(
      () => {
        this.running = this.pass().then(() => {
          this.running = undefined;
          this.schedule();
        });
      },
      this.config.get('AUDIT_SEAL_MS', { infer: true }),
    );
    this.timer.unref();
  }
}
