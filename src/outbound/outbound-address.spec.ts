import { createServer as createHttpServer, type Server } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { guardedLookup, hostProblem, isAllowedAddress } from './outbound-address';
import { failureClass } from './outbox-delivery.service';

describe('outbound address policy', () => {
  it('allows only global unicast addresses', () => {
    for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111']) {
      expect([address, isAllowedAddress(address, false)]).toEqual([address, true]);
    }
    const inside = [
      '127.0.0.1',
      '127.255.0.9',
      '10.0.0.1',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.0.1',
      '169.254.169.254',
      '100.64.0.1',
      '100.100.100.200',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '::',
      '::1',
      'fe80::1',
      'fc00::1',
      'fd00:ec2::254',
      'ff02::1',
      '::ffff:127.0.0.1',
      '::ffff:169.254.169.254',
      '64:ff9b::7f00:1',
      '2002:7f00:1::',
      'not an address',
    ];
    for (const address of inside) expect([address, isAllowedAddress(address, false)]).toEqual([address, false]);
  });

  it('lets loopback and private through with allowPrivate, never link-local, metadata or unspecified', () => {
    for (const address of ['127.0.0.1', '::1', '10.1.2.3', '192.168.1.1', 'fd12::1', '::ffff:127.0.0.1']) {
      expect([address, isAllowedAddress(address, true)]).toEqual([address, true]);
    }
    for (const address of ['169.254.169.254', '0.0.0.0', '::', 'fe80::1', '100.100.100.200']) {
      expect([address, isAllowedAddress(address, true)]).toEqual([address, false]);
    }
  });

  it('judges names by what they resolve to, and refuses names public DNS never answers', async () => {
    const zone: Record<string, string[]> = { 'in.example.com': ['127.0.0.1'], 'out.example.com': ['93.184.216.34'] };
    const resolve = async (host: string) => {
      await Promise.resolve();
      if (!zone[host]) throw Object.assign(new Error('nope'), { code: 'ENOTFOUND' });
      return zone[host].map((address) => ({ address, family: 4 }));
    };
    expect(await hostProblem('out.example.com', false, resolve)).toBeNull();
    expect(await hostProblem('in.example.com', false, resolve)).toMatch(/public address/);
    expect(await hostProblem('metadata.google.internal', false, resolve)).toMatch(/public address/);
    expect(await hostProblem('receiver', false, resolve)).toMatch(/public address/);
    expect(await hostProblem('gone.example.com', false, resolve)).toBe('url host does not resolve');
    expect(await hostProblem('[::1]', false, resolve)).toMatch(/public address/);
    expect(await hostProblem('[::1]', true, resolve)).toBeNull();
  });

  it('the guarded lookup refuses a name resolving inside, in both the one-address and `all` forms', async () => {
    const lookup = guardedLookup(() => Promise.resolve([{ address: '127.0.0.1', family: 4 }]), false);
    const one = await new Promise<unknown>((done) => lookup('in.example.com', {}, (error) => done(error)));
    expect(one).toMatchObject({ code: 'EBLOCKEDADDRESS' });
    const all = await new Promise<unknown>((done) => lookup('in.example.com', { all: true }, (error) => done(error)));
    expect(all).toMatchObject({ code: 'EBLOCKEDADDRESS' });
    const allowed = guardedLookup(() => Promise.resolve([{ address: '93.184.216.34', family: 4 }]), false);
    const found = await new Promise<unknown>((done) =>
      allowed('out.example.com', {}, (error, address, family) => done({ error, address, family })),
    );
    expect(found).toEqual({ error: null, address: '93.184.216.34', family: 4 });
  });

  describe('failure classes', () => {
    let server: Server;
    let port: number;
    beforeAll(async () => {
      server = createHttpServer((_req, res) => res.end('plain http'));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });
    afterAll(async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });

    const failureOf = (url: string, timeoutMs = 2000) =>
      new Promise<string>((resolve) => {
        const req = httpsRequest(url, { method: 'POST', signal: AbortSignal.timeout(timeoutMs) }, () =>
          resolve('answered'),
        );
        req.on('error', (error) => resolve(failureClass(error)));
        req.end();
      });

    it('names refused, tls, timeout and dns without the socket code', async () => {
      const closed = createHttpServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const closedPort = (closed.address() as AddressInfo).port;
      await new Promise((resolve) => closed.close(resolve));
      expect(await failureOf(`https://127.0.0.1:${closedPort}/`)).toBe('refused');
      expect(await failureOf(`https://127.0.0.1:${port}/`)).toBe('tls');
      expect(failureClass(Object.assign(new Error('x'), { name: 'AbortError', code: 'ABORT_ERR' }))).toBe('timeout');
      expect(failureClass(Object.assign(new Error('x'), { code: 'ENOTFOUND' }))).toBe('dns');
      expect(failureClass(Object.assign(new Error('x'), { code: 'ECONNRESET' }))).toBe('network');
      expect(failureClass(Object.assign(new Error('x'), { code: 'EBLOCKEDADDRESS' }))).toBe('blocked_address');
    });
  });
});
