import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Client } from 'pg';
import type { Env } from '../config/env';
import { ShutdownService } from '../lifecycle/shutdown.service';

/** Longest wait for the probe's connection to open or its query to answer, ms (the readiness check gives up at 2 s). */
const CONNECT_TIMEOUT_MS = 2000;

/**
 * The readiness probe's one query: whether the database answers. It runs on a connection of its
 * own (one more per instance in the connection budget, docs/operations.md), not on Prisma's pool:
 * under load every pool connection is busy and a probe queued behind them timed out, so every
 * instance failed its check at once and the load balancer was left with no backend (bench:cluster).
 * The connection opens on the first ping, is dropped after any failure (the next ping opens a new
 * one), and closes in the `pools` shutdown stage.
 */
@Injectable()
export class HealthRepository {
  private client?: Promise<Client>;

  constructor(
    private readonly config: ConfigService<Env, true>,
    shutdown: ShutdownService,
  ) {
    shutdown.register('pools', 'health probe connection', () => this.drop());
  }

  /**
   * Runs `SELECT 1` on the probe's connection (opening it when needed); resolves when the database
   * answers. @throws the driver's error when it cannot connect or the query fails (the connection
   * is then dropped).
   */
  async ping(): Promise<void> {
    try {
      const client = await this.connection();
      await client.query('SELECT 1');
    } catch (error) {
      await this.drop();
      throw error;
    }
  }

  private connection(): Promise<Client> {
    if (!this.client) {
      const url = new URL(this.config.get('DATABASE_URL', { infer: true }));
      url.searchParams.delete('schema'); // Prisma's option, not the driver's; `SELECT 1` needs no schema.
      const client = new Client({
        connectionString: url.toString(),
        connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
        // A hung query fails (and drops the connection) instead of holding every later ping behind it.
        query_timeout: CONNECT_TIMEOUT_MS,
        application_name: 'wallet-gateway health',
      });
      // A connection lost between pings: dropped, the next ping opens another.
      client.on('error', () => void this.drop());
      this.client = client.connect().then(() => client);
    }
    return this.client;
  }

  /** Closes the probe's connection, if any; never throws. */
  private async drop(): Promise<void> {
    const pending = this.client;
    this.client = undefined;
    if (!pending) return;
    await pending.then((c) => c.end()).catch(() => undefined);
  }
}
