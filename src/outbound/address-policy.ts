/**
 * Which IP addresses the service may connect to. Pure functions, no I/O: the outbound client
 * calls them at connect time and the headless-browser pool reuses them for its own requests.
 *
 * The rule is "public unicast only". IPv6 forms that only carry an IPv4 address (mapped,
 * translated, NAT64, 6to4, Teredo) are judged by the IPv4 address they carry, so
 * `::ffff:127.0.0.1` is as loopback as `127.0.0.1`.
 */
import { BlockList, isIPv4, isIPv6 } from 'node:net';

/** IPv4 ranges that are not reachable public unicast (IANA special-purpose registry). */
const NON_PUBLIC_IPV4: ReadonlyArray<readonly [network: string, prefix: number, why: string]> = [
  ['0.0.0.0', 8, '"this network", includes the unspecified 0.0.0.0'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'carrier-grade NAT shared space'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local, includes the cloud metadata address 169.254.169.254'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'IETF protocol assignments'],
  ['192.0.2.0', 24, 'documentation (TEST-NET-1)'],
  ['192.88.99.0', 24, 'deprecated 6to4 relay anycast'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation (TEST-NET-2)'],
  ['203.0.113.0', 24, 'documentation (TEST-NET-3)'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved, includes the broadcast 255.255.255.255'],
];

/**
 * IPv6 ranges inside global unicast 2000::/3 that are still not public. Everything outside
 * 2000::/3 (::1, ::, fc00::/7, fe80::/10, ff00::/8, 100::/64, the deprecated IPv4-compatible
 * ::/96, ...) is refused by the 2000::/3 test itself.
 */
const NON_PUBLIC_IPV6: ReadonlyArray<readonly [network: string, prefix: number, why: string]> = [
  ['2001::', 23, 'IETF protocol assignments (Teredo is judged by its embedded IPv4 first)'],
  ['2001:db8::', 32, 'documentation'],
  ['3fff::', 20, 'documentation'],
];

function buildBlockList(
  ranges: ReadonlyArray<readonly [string, number, string]>,
  family: 'ipv4' | 'ipv6',
): BlockList {
  const list = new BlockList();
  for (const [network, prefix] of ranges) list.addSubnet(network, prefix, family);
  return list;
}

const blockedIPv4 = buildBlockList(NON_PUBLIC_IPV4, 'ipv4');
const blockedIPv6 = buildBlockList(NON_PUBLIC_IPV6, 'ipv6');

/**
 * True when `ip` is a public unicast address the service may connect to. Anything that is not a
 * valid IP address is answered `false`, so callers fail closed. Brackets (`[::1]`) and an IPv6
 * zone (`fe80::1%eth0`) are tolerated.
 */
export function isPublicAddress(ip: string): boolean {
  const address = stripDecorations(ip);
  if (isIPv4(address)) return !blockedIPv4.check(address, 'ipv4');
  if (!isIPv6(address)) return false;

  const bytes = ipv6ToBytes(address);
  if (bytes === null) return false;

  const carried = embeddedIPv4(bytes);
  if (carried !== null) return carried.every((v4) => !blockedIPv4.check(v4, 'ipv4'));

  const isGlobalUnicast = (bytes[0] & 0xe0) === 0x20; // 2000::/3
  return isGlobalUnicast && !blockedIPv6.check(address, 'ipv6');
}

function stripDecorations(ip: string): string {
  let address = ip.trim();
  if (address.startsWith('[') && address.endsWith(']')) address = address.slice(1, -1);
  const zone = address.indexOf('%');
  return zone === -1 ? address : address.slice(0, zone);
}

/**
 * The IPv4 addresses an IPv6 address stands for, or null when it is a native IPv6 address.
 * Each form below is routed to (or designed to reach) the IPv4 host it embeds.
 */
function embeddedIPv4(b: Uint8Array): string[] | null {
  const zeroUpTo = (end: number) => b.subarray(0, end).every((x) => x === 0);

  // ::ffff:a.b.c.d, IPv4-mapped (RFC 4291)
  if (zeroUpTo(10) && b[10] === 0xff && b[11] === 0xff) return [ipv4At(b, 12)];
  // ::ffff:0:a.b.c.d, IPv4-translated (RFC 2765)
  if (zeroUpTo(8) && b[8] === 0xff && b[9] === 0xff && b[10] === 0 && b[11] === 0) {
    return [ipv4At(b, 12)];
  }
  // 64:ff9b::a.b.c.d, well-known NAT64 prefix (RFC 6052)
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && b.subarray(4, 12).every((x) => x === 0)) {
    return [ipv4At(b, 12)];
  }
  // 2002:AABB:CCDD::/48, 6to4 (RFC 3056)
  if (b[0] === 0x20 && b[1] === 0x02) return [ipv4At(b, 2)];
  // 2001:0000::/32, Teredo (RFC 4380): server IPv4, then the client IPv4 stored inverted
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0x00 && b[3] === 0x00) {
    const client = b.subarray(12, 16).map((x) => x ^ 0xff);
    return [ipv4At(b, 4), ipv4At(client, 0)];
  }
  return null;
}

function ipv4At(bytes: Uint8Array, offset: number): string {
  return Array.from(bytes.subarray(offset, offset + 4)).join('.');
}

/** Expands a valid IPv6 text form (compressed, or with a dotted IPv4 tail) into 16 bytes. */
function ipv6ToBytes(address: string): Uint8Array | null {
  if (!isIPv6(address)) return null;
  let text = address;

  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (isIPv4(tail)) {
    const [a, b, c, d] = tail.split('.').map(Number);
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }

  const halves = text.split('::');
  if (halves.length > 2) return null;
  const head = halves[0] === '' ? [] : halves[0].split(':');
  const rest = halves.length === 2 && halves[1] !== '' ? halves[1].split(':') : [];
  const missing = 8 - head.length - rest.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const groups = [...head, ...Array<string>(missing).fill('0'), ...rest];

  const bytes = new Uint8Array(16);
  groups.forEach((group, i) => {
    const value = Number.parseInt(group, 16);
    bytes[i * 2] = value >> 8;
    bytes[i * 2 + 1] = value & 0xff;
  });
  return bytes;
}
