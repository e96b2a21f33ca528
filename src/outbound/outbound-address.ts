/**
 * Where outbound webhooks may connect (issue 14, item 2): only to global unicast addresses, decided
 * on the RESOLVED address, not on the URL's text. Refused: loopback (127/8, ::1), private (10/8,
 * 172.16/12, 192.168/16), link-local (169.254/16 with the cloud metadata address 169.254.169.254,
 * fe80::/10), unique-local (fc00::/7, e.g. fd00:ec2::254), carrier-grade NAT (100.64/10, e.g.
 * 100.100.100.200), multicast, broadcast, unspecified (0.0.0.0, ::), reserved and documentation
 * ranges, and the IPv6 forms that carry an IPv4 address (IPv4-mapped ::ffff:a.b.c.d, NAT64,
 * 6to4, Teredo): everything ipaddr.js does not classify as `unicast`. The URL parser already turns
 * decimal, hex and octal IPv4 forms (https://2130706433/, https://0x7f000001/, https://017700000001/,
 * https://0/) into dotted quads, so they meet the same rule.
 *
 * The check runs twice: when a subscription is registered (the host's addresses as DNS gives them
 * then) and at every connection, inside the socket's own lookup (`guardedLookup`): the address
 * checked is the address connected to, so a name that resolves inside, or that changes its answer
 * after registration (DNS rebinding), is refused. With OUTBOUND_ALLOW_PRIVATE (never in production)
 * loopback and private receivers are let through, for development and tests.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Injectable } from '@nestjs/common';
import ipaddr from 'ipaddr.js';

/** Resolves a host name to every address it has (dns.lookup with `all: true`, or a test's stand-in). */
export type OutboundResolver = (hostname: string) => Promise<LookupAddress[]>;

/**
 * The resolver used by subscriptions and deliveries: the system's (dns.lookup, every A and AAAA
 * address, as a connection would use them). One injectable, so that a test can stand in for DNS
 * (e.g. a name that resolves to 127.0.0.1) with `jest.spyOn(app.get(OutboundDns), 'resolve')`.
 */
@Injectable()
export class OutboundDns {
  /** Every address of `hostname`. @throws the resolver's error (ENOTFOUND, EAI_AGAIN, …). */
  resolve(hostname: string): Promise<LookupAddress[]> {
    return new Promise((resolve, reject) =>
      dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) =>
        error ? reject(error) : resolve(addresses),
      ),
    );
  }
}

/** Names that public DNS never answers, refused without asking (e.g. metadata.google.internal). */
const INTERNAL_NAME = /(^|\.)(localhost|local|internal|localdomain|home\.arpa)$/;

/**
 * Thrown (as a lookup or connection error) when an address is refused; its `code` lets the delivery
 * report `blocked_address` without saying more.
 */
export class BlockedAddressError extends Error {
  readonly code = 'EBLOCKEDADDRESS';
  constructor(readonly host: string) {
    super('the receiver address is not a public address');
    this.name = 'BlockedAddressError';
  }
}

/** The ipaddr.js range of an address: `unicast` for a global one; IPv4-mapped IPv6 read as its IPv4. */
export function addressRange(address: string): string {
  return ipaddr.process(address).range();
}

/** Whether an outbound connection may go to IP `address` (`allowPrivate`: loopback and private too). */
export function isAllowedAddress(address: string, allowPrivate: boolean): boolean {
  if (!ipaddr.isValid(address)) return false;
  const range = addressRange(address);
  if (range === 'unicast') return true;
  return allowPrivate && ['loopback', 'private', 'uniqueLocal'].includes(range);
}

/** `hostname` as the URL parser gives it, without IPv6 brackets or a trailing dot, lower case. */
function bareHost(hostname: string): string {
  return hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
}

/**
 * Why a delivery URL's host is refused, or null when every address it resolves to is allowed.
 * IP literals are judged as they are; names are resolved with `resolve` (a name that does not
 * resolve is refused too).
 */
export async function hostProblem(
  hostname: string,
  allowPrivate: boolean,
  resolve: OutboundResolver,
): Promise<string | null> {
  const host = bareHost(hostname);
  const refused = 'url must point to a public address (not loopback, private, link-local or metadata)';
  if (isIP(host)) return isAllowedAddress(host, allowPrivate) ? null : refused;
  if (!allowPrivate && (INTERNAL_NAME.test(host) || !host.includes('.'))) return refused;
  let addresses: LookupAddress[];
  try {
    addresses = await resolve(host);
  } catch {
    return 'url host does not resolve';
  }
  if (addresses.length === 0) return 'url host does not resolve';
  return addresses.every((a) => isAllowedAddress(a.address, allowPrivate)) ? null : refused;
}

/**
 * A `lookup` for net/tls connections (an http(s).Agent's option) that resolves with `resolve` and
 * refuses (BlockedAddressError) when any address is not allowed: the socket then connects only to
 * addresses checked here. Answers both forms Node asks for (one address, or `all`).
 */
export function guardedLookup(resolve: OutboundResolver, allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    const host = bareHost(hostname);
    const refuse = () => callback(new BlockedAddressError(host), '', 0);
    if (!allowPrivate && INTERNAL_NAME.test(host)) return refuse();
    resolve(host).then(
      (found) => {
        const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
        const addresses = family ? found.filter((a) => a.family === family) : found;
        if (addresses.length === 0) {
          const error = Object.assign(new Error('no address'), { code: 'ENOTFOUND' });
          return callback(error, '', 0);
        }
        if (!addresses.every((a) => isAllowedAddress(a.address, allowPrivate))) return refuse();
        if (options.all) {
          (callback as unknown as (e: null, all: LookupAddress[]) => void)(null, addresses);
        } else {
          callback(null, addresses[0].address, addresses[0].family);
        }
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    );
  };
}
