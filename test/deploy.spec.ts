import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expectedAccepted, haproxyConfig } from '../bench/cluster-parts';

const DEPLOY = path.join(__dirname, '..', 'deploy');
const HAPROXY = ['/usr/sbin/haproxy', '/usr/local/sbin/haproxy'].find((p) => fs.existsSync(p));

/**
 * deploy/ (issue 13): the HAProxy configuration is valid (`haproxy -c`, Debian package `haproxy`;
 * .ci/run installs it) and health-checks the three gateways on /health/ready; the compose file's
 * grace period covers SHUTDOWN_DELAY_MS + 3 × PROVIDER_TIMEOUT_MS.
 */
describe('deploy/', () => {
  const cfg = fs.readFileSync(path.join(DEPLOY, 'haproxy.cfg'), 'utf8');
  const compose = fs.readFileSync(path.join(DEPLOY, 'compose.yaml'), 'utf8');

  it('haproxy -c accepts haproxy.cfg', () => {
    if (!HAPROXY) throw new Error('haproxy is not installed: apt-get install haproxy (.ci/run does)');
    const result = spawnSync(HAPROXY, ['-c', '-f', path.join(DEPLOY, 'haproxy.cfg')], { encoding: 'utf8' });
    expect(`${result.stdout}${result.stderr}`).toContain('Configuration file is valid');
    expect(result.status).toBe(0);
  });

  it('checks three gateways on /health/ready and retries a closing instance elsewhere', () => {
    expect(cfg).toMatch(/http-check send meth GET uri \/health\/ready/);
    expect(cfg.match(/^\s*server gateway\d \S+ check$/gm)).toHaveLength(3);
    expect(cfg).toMatch(/retry-on conn-failure 503/);
  });

  it('retries a request cut without an answer only when it is safe to repeat (a read, or a write with an Idempotency-Key)', () => {
    const backend = (name: string) => new RegExp(`^backend ${name}\n((?:[ \t]+.*\n?)*)`, 'm').exec(cfg)?.[1] ?? '';
    expect(backend('gateways')).toMatch(/retry-on conn-failure empty-response 503/);
    expect(cfg).toMatch(
      /use_backend gateways-writes if !\{ method GET HEAD OPTIONS \} !\{ req\.hdr\(idempotency-key\) -m found \}/,
    );
    const writes = backend('gateways-writes');
    expect(writes).not.toMatch(/empty-response/);
    expect(writes.match(/track gateways\/gateway\d/g)).toHaveLength(3);
  });

  it('takes an instance out within SHUTDOWN_DELAY_MS, even when every check answers late, and gives a busy readiness check (2 s database ping) time to answer', () => {
    const ms = (v: string) => (v.endsWith('ms') ? Number(v.slice(0, -2)) : Number(v.slice(0, -1)) * 1000);
    const server = /default-server inter (\S+) fastinter (\S+) fall (\d+) rise (\d+)/.exec(cfg);
    expect(server).not.toBeNull();
    const [, inter, fastinter, fall] = server as RegExpExecArray;
    // A check answering 503 at once: out after one interval and (fall - 1) fast intervals.
    const out = ms(inter) + (Number(fall) - 1) * ms(fastinter);
    const delay = Number(/SHUTDOWN_DELAY_MS: (\d+)/.exec(compose)?.[1]);
    expect(out).toBeLessThanOrEqual(delay / 2);
    const checkTimeout = ms(/timeout check (\S+)/.exec(cfg)?.[1] ?? '0s');
    expect(checkTimeout).toBeGreaterThan(2000);
    // A loaded instance answering each check just inside its timeout (bench:cluster saw one taken
    // out 4.5 s after SIGTERM): the drain must still outlast it, or requests arrive as it closes.
    expect(out + Number(fall) * checkTimeout).toBeLessThan(delay);
  });

  it('bench:cluster runs this configuration on loopback (haproxy -c accepts what it makes of it)', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wg-deploy-spec-'));
    try {
      const bench = haproxyConfig(cfg, 18080, [13001, 13002, 13003], path.join(dir, 'haproxy.sock'));
      expect(bench).toMatch(/bind 127\.0\.0\.1:18080/);
      expect(bench.match(/server gateway2 127\.0\.0\.1:13002 /g)).toHaveLength(2);
      expect(bench).not.toMatch(/resolvers|gateway\d:3000/);
      // Everything else as deploy/haproxy.cfg has it: the checks, retries and timeouts under test.
      for (const line of cfg.split('\n').filter((l) => /check|retry|retries|timeout|track|use_backend/.test(l)))
        expect(bench).toContain(
          line
            .replace(/ resolvers docker init-addr \S+/, '')
            .replace(/gateway(\d):3000/, (_m, n: string) => `127.0.0.1:1300${n}`),
        );
      if (!HAPROXY) throw new Error('haproxy is not installed: apt-get install haproxy (.ci/run does)');
      fs.writeFileSync(path.join(dir, 'haproxy.cfg'), bench);
      const result = spawnSync(HAPROXY, ['-c', '-f', path.join(dir, 'haproxy.cfg')], { encoding: 'utf8' });
      expect(result.status).toBe(0);
      expect(() => haproxyConfig(cfg.replace('bind *:8080', 'bind *:9090'), 1, [2, 3, 4], 's')).toThrow(
        /changed shape/,
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("bench:cluster's expected count of a key's accepted requests follows the fixed window and its block", () => {
    // 20 requests 1 s apart, limit 5 per 10 s: 5 accepted (0-4 s), the 6th (5 s) blocks until 15 s,
    // 5 more accepted (15-19 s; the window opened at 15 s).
    const times = Array.from({ length: 20 }, (_, i) => i * 1000);
    expect(expectedAccepted(times, 5, 10_000)).toBe(10);
    expect(expectedAccepted(times, 100, 10_000)).toBe(20);
  });

  it('gives each gateway a grace period of at least SHUTDOWN_DELAY_MS + 3 × PROVIDER_TIMEOUT_MS', () => {
    const number = (name: string) => Number(new RegExp(`${name}: (\\d+)`).exec(compose)?.[1]);
    const grace = Number(/stop_grace_period: (\d+)s/.exec(compose)?.[1]) * 1000;
    expect(grace).toBeGreaterThanOrEqual(number('SHUTDOWN_DELAY_MS') + 3 * number('PROVIDER_TIMEOUT_MS'));
    expect(compose.match(/^ {2}gateway\d:$/gm)).toHaveLength(3);
  });
});
