import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

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
    expect(cfg.match(/^\s*server gateway\d /gm)).toHaveLength(3);
    expect(cfg).toMatch(/retry-on conn-failure 503/);
  });

  it('gives each gateway a grace period of at least SHUTDOWN_DELAY_MS + 3 × PROVIDER_TIMEOUT_MS', () => {
    const number = (name: string) => Number(new RegExp(`${name}: (\\d+)`).exec(compose)?.[1]);
    const grace = Number(/stop_grace_period: (\d+)s/.exec(compose)?.[1]) * 1000;
    expect(grace).toBeGreaterThanOrEqual(number('SHUTDOWN_DELAY_MS') + 3 * number('PROVIDER_TIMEOUT_MS'));
    expect(compose.match(/^ {2}gateway\d:$/gm)).toHaveLength(3);
  });
});
