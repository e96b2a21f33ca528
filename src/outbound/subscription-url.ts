/**
 * Rules for a subscription's delivery URL. `https` always; plain `http` only outside production
 * and only to a host that cannot be on the public internet: loopback (localhost, 127.0.0.0/8,
 * ::1), a private address (10/8, 172.16/12, 192.168/16, fc00::/7), or a name that public DNS
 * never resolves (a single label such as `receiver`, or *.localhost, *.local, *.internal).
 * Never credentials in the URL (the signature authenticates the gateway), never a fragment.
 */
import { isIP } from 'node:net';

/** Longest URL accepted. */
export const MAX_URL_LENGTH = 2048;

/**
 * The shape of a delivery URL, as the request body states it (`@Matches`, hence the API
 * description's `pattern`): `https://` or `http://`, a host (with an optional port) without
 * credentials, then an optional path or query, never a fragment or whitespace. The rest of
 * `subscriptionUrlProblem` (http only outside production, only to loopback or private hosts) and
 * the address checks (outbound-address.ts) run after it.
 */
export const SUBSCRIPTION_URL_PATTERN = /^https?:\/\/[^\s/?#@\\]+(?:[/?][^\s#]*)?$/;

function isPrivateIPv4(host: string): boolean {
  const [a, b] = host.split('.').map(Number);
  return a === 127 || a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168);
}

function isPrivateIPv6(host: string): boolean {
  const h = host.toLowerCase();
  if (h === '::1') return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(h);
  if (mapped) return isPrivateIPv4(mapped[1]);
  return /^f[cd][0-9a-f]{0,2}:/.test(h); // fc00::/7 unique local
}

/** Whether `hostname` (as URL parses it: IPv6 in brackets) is loopback, private or never publicly resolvable. */
export function isPrivateHost(hostname: string): boolean {
  const host = hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
  switch (isIP(host)) {
    case 4:
      return isPrivateIPv4(host);
    case 6:
      return isPrivateIPv6(host);
    default:
      return (
        host === 'localhost' ||
        !host.includes('.') ||
        host.endsWith('.localhost') ||
        host.endsWith('.local') ||
        host.endsWith('.internal')
      );
  }
}

/**
 * Checks a delivery URL. Returns why it is refused, or null when it is acceptable.
 * @param production NODE_ENV is `production`: only https.
 */
export function subscriptionUrlProblem(raw: string, production: boolean): string | null {
  if (typeof raw !== 'string' || raw.length === 0) return 'url must be an absolute https URL';
  if (raw.length > MAX_URL_LENGTH) return `url must be at most ${MAX_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'url must be an absolute https URL';
  }
  if (url.username || url.password) return 'url must not contain credentials';
  if (url.hash) return 'url must not contain a fragment';
  if (url.protocol === 'https:') return url.hostname ? null : 'url must name a host';
  if (url.protocol !== 'http:') return 'url must use https';
  if (production) return 'url must use https';
  if (!isPrivateHost(url.hostname)) return 'url must use https (http is allowed only for loopback or private hosts)';
  return null;
}
