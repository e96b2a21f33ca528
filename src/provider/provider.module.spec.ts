import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Global, LoggerService, Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { Test, TestingModule } from '@nestjs/testing';
import { MetricsService } from '../metrics/metrics.service';
import { ProviderClient, ProviderModule } from './index';

/** Stands in for the app's global metrics registration (the lead registers MetricsService globally). */
@Global()
@Module({ providers: [MetricsService], exports: [MetricsService] })
class GlobalMetrics {}

describe('ProviderModule', () => {
  let server: Server;
  let seen: { auth?: string; timeoutHit: boolean };
  let moduleRef: TestingModule;
  const logged: Array<{ level: string; message: unknown; params: unknown[] }> = [];
  const capture: LoggerService = {
    log: (message, ...params) => logged.push({ level: 'log', message, params }),
    warn: (message, ...params) => logged.push({ level: 'warn', message, params }),
    error: (message, ...params) => logged.push({ level: 'error', message, params }),
    debug: (message, ...params) => logged.push({ level: 'debug', message, params }),
  };

  beforeAll(async () => {
    seen = { timeoutHit: false };
    server = createServer((req, res) => {
      seen.auth = req.headers.authorization;
      if (req.url?.includes('slow')) {
        seen.timeoutHit = true;
        return; // never answers
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: true, message: 'ok', data: { id: 'cus_9', email: 'x@y.z', blacklist: false } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    moduleRef = await Test.createTestingModule({
      imports: [
        ConfigModule.forRoot({
          isGlobal: true,
          ignoreEnvFile: true,
          load: [
            () => ({
              PROVIDER_BASE_URL: `http://127.0.0.1:${port}/api/v1`,
              PROVIDER_API_KEY: 'sk.module.test',
              PROVIDER_TIMEOUT_MS: '150',
            }),
          ],
        }),
        GlobalMetrics,
        ProviderModule,
      ],
    })
      .setLogger(capture)
      .compile();
  });

  afterAll(async () => {
    await moduleRef?.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('provides a configured ProviderClient that records metrics and logs through Nest', async () => {
    const client = moduleRef.get(ProviderClient);
    const customer = await client.getCustomer('cus_9');
    expect(customer).toMatchObject({ id: 'cus_9', blacklisted: false });
    expect(seen.auth).toBe('Bearer sk.module.test');

    const error = await client.getCustomer('slow').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'provider_timeout', message: 'The provider did not answer within 150 ms.' });

    const metrics = await moduleRef.get(MetricsService).render();
    expect(metrics.body).toMatch(/provider_call_duration_seconds_count\{operation="getCustomer",outcome="ok"\} 1/);
    expect(metrics.body).toMatch(/provider_call_duration_seconds_count\{operation="getCustomer",outcome="timeout"\} 1/);

    const line = logged.find(
      (l) => l.level === 'log' && (l.message as { operation?: string }).operation === 'getCustomer',
    );
    expect(line?.message).toMatchObject({ operation: 'getCustomer', method: 'GET', status: 200, outcome: 'ok' });
    expect(line?.params).toEqual(['provider getCustomer ok', 'ProviderClient']);
    expect(JSON.stringify(logged)).not.toContain('sk.module.test');
  });
});
