import { BadRequestException } from '@nestjs/common';
import { BlockList, isIP } from 'node:net';

/**
 * Addresses a destination must not point at unless DELIVERY_ALLOW_PRIVATE_NETWORKS=true: loopback,
 * private, link-local (cloud metadata 169.254.169.254), CGNAT, unique-local, multicast, unspecified,
 * documentation and reserved ranges (IANA special-purpose registries for IPv4 and IPv6).
 * IPv4 inside IPv6 (IPv4-mapped `::ffff:a.b.c.d`, NAT64 `64:ff9b::a.b.c.d`) is judged by its IPv4 part.
 */
const IPV4_BLOCKED: [string, number][] = [
  ['0.0.0.0', 8], // "this network", includes 0.0.0.0
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, includes 255.255.255.255
];

const IPV6_BLOCKED: [string, number][] = [
  ['::', 96], // unspecified, loopback and the deprecated IPv4-compatible form
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard-only
  ['2001::', 23], // IETF protocol assignments (Teredo, ORCHID, ...)
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4 (deprecated, RFC 7526): an IPv4 address inside, reached through a relay
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
];

const blocked = new BlockList();
for (const [network, prefix] of IPV4_BLOCKED) blocked.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of IPV6_BLOCKED) blocked.addSubnet(network, prefix, 'ipv6');

/** The eight 16-bit groups of an IPv6 address (`::` expanded, a trailing dotted IPv4 part converted). */
function ipv6Groups(address: string): number[] {
  let text = address;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1].split('.').map(Number);
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const parse = (part: string | undefined) =>
    part ? part.split(':').map((group) => parseInt(group, 16)) : [];
  const start = parse(head);
  const end = parse(tail);
  const zeros = tail === undefined ? [] : new Array<number>(8 - start.length - end.length).fill(0);
  return [...start, ...zeros, ...end];
}

/** The IPv4 address carried in an IPv4-mapped (`::ffff:0:0/96`) or NAT64 (`64:ff9b::/96`) IPv6 address. */
function embeddedIpv4(address: string): string | null {
  const groups = ipv6Groups(address);
  const mapped = groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff;
  const nat64 =
    groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((group) => group === 0);
  if (!mapped && !nat64) return null;
  return [groups[6] >> 8, groups[6] & 0xff, groups[7] >> 8, groups[7] & 0xff].join('.');
}

/** True for an IP address (v4 or v6, without brackets or zone) in a range a destination must not reach. */
export function isPrivateAddress(address: string): boolean {
  const withoutZone = address.split('%')[0];
  const family = isIP(withoutZone);
  if (family === 4) return blocked.check(withoutZone, 'ipv4');
  if (family !== 6) return false;
  const ipv4 = embeddedIpv4(withoutZone);
  if (ipv4 !== null) return blocked.check(ipv4, 'ipv4');
  return blocked.check(withoutZone, 'ipv6');
}

/**
 * True when a URL's hostname (as WHATWG `new URL()` gives it: IPv6 in brackets, IPv4 in any spelling
 * already normalised to dotted decimal) is a literal private address or a `localhost` name.
 * Other names are not resolved here: the delivery engine checks the address it actually dials.
 */
export function isPrivateHostname(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  const literal = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return isPrivateAddress(literal);
}

/**
 * Refuses (400 naming `field`) a URL whose host is a literal private address or `localhost`, unless private
 * networks are allowed (DELIVERY_ALLOW_PRIVATE_NETWORKS=true). Names are checked again after DNS, by the
 * sender's agents, when something is sent.
 */
export function assertPublicHost(url: string, field: string, allowPrivateNetworks: boolean): void {
  if (allowPrivateNetworks) return;
  const { hostname } = new URL(url);
  if (isPrivateHostname(hostname))
    throw new BadRequestException(
      `${field} must not point to a loopback, private, link-local or reserved address (host ${hostname})`,
    );
}
