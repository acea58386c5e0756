import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * True for an address on the public internet: IPv4 or IPv6 unicast outside every special range
 * (private, loopback, link-local, carrier-grade NAT, unique-local, multicast, reserved...), as
 * ipaddr.js classifies them; an IPv4-mapped IPv6 address is judged as its IPv4 address.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  return parsed.range() === 'unicast';
}

/**
 * Why a webhook target may not be used, or null when it may: an https URL whose host resolves only to
 * public addresses. With `allowPrivate` (WEBHOOK_ALLOW_PRIVATE_TARGETS) plain http and private or
 * loopback hosts are allowed too (a receiver on the operator's own network, or a test's).
 */
export async function targetRefusal(url: string, allowPrivate: boolean): Promise<string | null> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'not a URL';
  }
  if (parsed.username || parsed.password) return 'credentials in the URL are not allowed (they would be logged and listed)';
  if (parsed.protocol !== 'https:' && !(allowPrivate && parsed.protocol === 'http:')) {
    return allowPrivate ? 'must be an http or https URL' : 'must be an https URL (plain http only with WEBHOOK_ALLOW_PRIVATE_TARGETS=true)';
  }
  if (allowPrivate) return null;
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  try {
    addresses = isIP(host)
      ? [host]
      : (
          await new Promise<LookupAddress[]>((resolve, reject) => dnsLookup(host, { all: true }, (e, a) => (e ? reject(e) : resolve(a))))
        ).map((a) => a.address);
  } catch (error) {
    return `its host does not resolve (${(error as Error).message})`;
  }
  const internal = addresses.filter((a) => !isPublicAddress(a));
  return internal.length
    ? `its host resolves to a private, loopback or reserved address (${internal.join(', ')}); set WEBHOOK_ALLOW_PRIVATE_TARGETS=true to allow`
    : null;
}

/**
 * A `lookup` for outgoing connections that refuses private addresses when they are not allowed: a
 * host checked as public when the subscription was added may resolve elsewhere later (DNS rebinding).
 */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const list = addresses as LookupAddress[];
      const usable = allowPrivate ? list : list.filter((a) => isPublicAddress(a.address));
      if (!usable.length)
        return callback(
          Object.assign(new Error(`refused: ${hostname} resolves to a private or reserved address`), { code: 'EPRIVATE' }),
          '',
          0,
        );
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, usable);
      callback(null, usable[0].address, usable[0].family);
    });
  };
}
