/**
 * The parts of bench:cluster that test/deploy.spec.ts checks: deploy/haproxy.cfg turned into the
 * bench's loopback configuration, HAProxy's server states from its admin socket, and what the
 * per-key fixed-window limit lets through.
 */
import net from 'node:net';

/**
 * deploy/haproxy.cfg with loopback addresses: the bind on `listen`, the three servers on `ports`,
 * no Docker resolver, plus an admin socket (to read the servers' state). Throws when the file no
 * longer has the shape this expects (so the bench never silently runs another configuration).
 */
export function haproxyConfig(source: string, listen: number, ports: number[], socket: string): string {
  let servers = 0;
  const cfg = source
    .replace(/^resolvers docker\n(?:[ \t]+\S.*\n)*/m, '')
    .replace(/ resolvers docker init-addr \S+/g, '')
    .replace(/^(\s*)bind \*:8080$/m, `$1bind 127.0.0.1:${listen}`)
    .replace(/^(\s*)server gateway(\d) gateway\d:3000 (.+)$/gm, (_line, indent: string, n: string, rest: string) => {
      servers++;
      return `${indent}server gateway${n} 127.0.0.1:${ports[Number(n) - 1]} ${rest}`;
    })
    .replace(/^global\n/m, `global\n    stats socket ${socket} mode 600 level admin\n`);
  if (servers !== 6 || !cfg.includes(`bind 127.0.0.1:${listen}`) || /resolvers|gateway\d:3000/.test(cfg))
    throw new Error('deploy/haproxy.cfg changed shape: update haproxyConfig() in bench/cluster.bench.ts');
  return cfg;
}

/** HAProxy's state of each server of backend `gateways` (`UP`, `DOWN`, `UP 1/2` going down, `DOWN 1/2` coming up). */
export async function lbStates(socket: string): Promise<Map<string, string>> {
  const text = await new Promise<string>((resolve, reject) => {
    const conn = net.createConnection(socket);
    let out = '';
    conn.on('data', (d) => (out += String(d)));
    conn.on('end', () => resolve(out));
    conn.on('error', reject);
    conn.write('show stat\n');
  });
  const [header, ...rows] = text.trim().split('\n');
  const columns = header.replace(/^# /, '').split(',');
  const status = columns.indexOf('status');
  const states = new Map<string, string>();
  for (const row of rows) {
    const cells = row.split(',');
    if (cells[0] === 'gateways' && cells[1].startsWith('gateway')) states.set(cells[1], cells[status]);
  }
  return states;
}

/**
 * What the fixed-window store (common/rate-limit) lets through of `hits` (in send order): a window
 * opens at the first hit and lasts `windowMs`; the hit over `limit` blocks the key for `windowMs`
 * from then (refused hits are not counted). Returns how many it accepts.
 */
export function expectedAccepted(times: number[], limit: number, windowMs = 60_000): number {
  let windowEnd = -Infinity;
  let count = 0;
  let blockedUntil = -Infinity;
  let accepted = 0;
  for (const t of times) {
    if (t < blockedUntil) continue;
    if (t >= windowEnd) {
      windowEnd = t + windowMs;
      count = 0;
    }
    count++;
    if (count > limit) blockedUntil = t + windowMs;
    else accepted++;
  }
  return accepted;
}
