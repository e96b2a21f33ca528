import type { LookupAddress } from 'node:dns';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { validateEnv } from '../src/config/env';
import { OutboundDns } from '../src/outbound/outbound-address';
import { OutboxDeliveryService } from '../src/outbound/outbox-delivery.service';
import { OutboxService } from '../src/outbound/outbox.service';
import { type Harness, startHarness } from './support/harness';

/** Socket error codes that would turn lastError into a port scanner. */
const SOCKET_CODES = /E[A-Z]{4,}|ERR_|SSL|answer|127\.0\.0\.1|::1/;

describe('outbound webhooks cannot reach inside (e2e, issue 14 item 2)', () => {
  let h: Harness;
  let auth: Record<string, string>;
  let receiver: Server;
  let port: number;
  /** The test resolver: names the test makes up, resolved as an attacker's DNS would answer. */
  const zone = new Map<string, LookupAddress[]>();

  const subscribe = (url: string) => h.http().post('/v1/webhook-subscriptions').set(auth).send({ url });

  beforeAll(async () => {
    receiver = createServer((_req, res) => res.writeHead(500).end('internal secret body ECONNRESET'));
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    port = (receiver.address() as AddressInfo).port;
    h = await startHarness({ env: { OUTBOUND_ALLOW_PRIVATE: 'false', OUTBOX_TIMEOUT_MS: '1000' } });
    auth = { Authorization: `Bearer ${await h.key()}` };
    jest.spyOn(h.app.get(OutboundDns), 'resolve').mockImplementation(async (hostname: string) => {
      const found = zone.get(hostname);
      if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
      return found;
    });
  });

  afterAll(async () => {
    await h?.close();
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
  });

  it('refuses every internal address form at subscription time', async () => {
    zone.set('inside.example.com', [{ address: '127.0.0.1', family: 4 }]);
    zone.set('mixed.example.com', [
      { address: '93.184.216.34', family: 4 },
      { address: '10.1.2.3', family: 4 },
    ]);
    zone.set('mapped.example.com', [{ address: '::ffff:169.254.169.254', family: 6 }]);
    const refused = [
      'https://169.254.169.254/latest/meta-data/',
      'https://127.0.0.1:5432/',
      'https://10.0.0.1/admin',
      'https://172.16.5.4/',
      'https://192.168.1.1/',
      'https://100.64.0.1/',
      'https://100.100.100.200/latest/meta-data/',
      'https://[::1]/',
      'https://[fe80::1]/',
      'https://[fd00:ec2::254]/',
      'https://[::ffff:127.0.0.1]/',
      'https://[::ffff:7f00:1]/',
      'https://[::]/',
      'https://224.0.0.1/',
      'https://255.255.255.255/',
      'https://2130706433/',
      'https://0x7f000001/',
      'https://017700000001/',
      'https://0/',
      'https://0.0.0.0/',
      'https://127.1/',
      'https://metadata.google.internal/computeMetadata/v1/',
      'https://localhost/',
      'https://inside.example.com/hooks',
      'https://mixed.example.com/hooks',
      'https://mapped.example.com/hooks',
      'https://nowhere.example.com/hooks',
      `http://127.0.0.1:${port}/hooks`,
    ];
    for (const url of refused) {
      const res = await subscribe(url);
      // Well formed (the body's schema accepts it); refused for where it leads: 422, not 400.
      expect([url, res.status, res.body.code]).toEqual([url, 422, 'business_rule_failed']);
      expect(res.body.errors[0].field).toBe('url');
    }
    expect(await h.db.query('SELECT id FROM webhook_subscriptions')).toEqual([]);
  });

  it('accepts a name that resolves to public addresses', async () => {
    zone.set('hooks.example.com', [{ address: '93.184.216.34', family: 4 }]);
    const res = await subscribe('https://hooks.example.com/wallet');
    expect(res.status).toBe(201);
    await h.http().delete(`/v1/webhook-subscriptions/${res.body.id}`).set(auth);
  });

  it('refuses at connect time a name that rebinds to loopback after subscribing; lastError is only the class', async () => {
    zone.set('rebind.example.com', [{ address: '93.184.216.34', family: 4 }]);
    const res = await subscribe(`http://rebind.example.com:${port}/hooks`);
    // Plain http to a public host is refused outside loopback: use https for the subscription, then rebind.
    expect(res.status).toBe(400);
    const sub = await subscribe(`https://rebind.example.com:${port}/hooks`);
    expect(sub.status).toBe(201);
    zone.set('rebind.example.com', [{ address: '127.0.0.1', family: 4 }]);
    await h.app.get(OutboxService).publish('card.created', { id: 'card-ssrf', last4: '4242' });
    const report = await h.app.get(OutboxDeliveryService).deliverDue();
    expect(report).toMatchObject({ attempted: 1, retrying: 1 });
    const messages = await h.http().get(`/v1/webhook-subscriptions/${sub.body.id}/messages`).set(auth);
    expect(messages.body.data[0]).toMatchObject({
      status: 'pending',
      lastStatusCode: null,
      lastError: 'blocked_address',
    });
    await h.http().delete(`/v1/webhook-subscriptions/${sub.body.id}`).set(auth);
  });

  it('refuses at connect time a stored literal internal address (written around the API)', async () => {
    zone.set('literal.example.com', [{ address: '93.184.216.34', family: 4 }]);
    const sub = await subscribe(`https://literal.example.com:${port}/hooks`);
    expect(sub.status).toBe(201);
    for (const url of [
      `http://2130706433:${port}/hooks`,
      `https://[::ffff:7f00:1]:${port}/`,
      `https://0x7f.1:${port}/`,
    ]) {
      await h.db.query('UPDATE webhook_subscriptions SET url = $1 WHERE id = $2', [url, sub.body.id]);
      await h.app.get(OutboxService).publish('card.created', { id: 'card-ssrf-2', last4: '4242' });
      await h.app.get(OutboxDeliveryService).deliverDue();
      const messages = await h.http().get(`/v1/webhook-subscriptions/${sub.body.id}/messages`).set(auth);
      expect([url, messages.body.data[0].lastError]).toEqual([url, 'blocked_address']);
      expect(messages.body.data[0].lastError).not.toMatch(SOCKET_CODES);
    }
    await h.http().delete(`/v1/webhook-subscriptions/${sub.body.id}`).set(auth);
  });

  it('production refuses OUTBOUND_ALLOW_PRIVATE', () => {
    const base = {
      DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/x',
      PROVIDER_BASE_URL: 'http://127.0.0.1:1/api/v1',
      PROVIDER_API_KEY: 'k',
      PROVIDER_WEBHOOK_SECRET: 's',
      PUBLIC_BASE_URL: 'https://gateway.example.com',
      // Production also needs a personal-data key (issue 14 item 1): given, so the refusal is this setting's.
      PII_ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 7).toString('base64')}`,
    };
    expect(() => validateEnv({ ...base, NODE_ENV: 'production', OUTBOUND_ALLOW_PRIVATE: 'true' })).toThrow(
      /OUTBOUND_ALLOW_PRIVATE/,
    );
    expect(validateEnv({ ...base, NODE_ENV: 'test', OUTBOUND_ALLOW_PRIVATE: 'true' }).OUTBOUND_ALLOW_PRIVATE).toBe(
      true,
    );
  });
});
