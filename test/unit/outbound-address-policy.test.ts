import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { isPublicAddress } from '../../src/outbound/address-policy.ts';

describe('isPublicAddress', () => {
  const publicAddresses = [
    '8.8.8.8',
    '1.1.1.1',
    '93.184.215.14',
    // just outside the neighbouring blocked ranges
    '9.255.255.255',
    '11.0.0.0',
    '100.63.255.255',
    '100.128.0.0',
    '126.255.255.255',
    '128.0.0.0',
    '169.253.255.255',
    '169.255.0.0',
    '172.15.255.255',
    '172.32.0.0',
    '192.167.255.255',
    '192.169.0.0',
    '198.17.255.255',
    '198.20.0.0',
    '223.255.255.255',
    // IPv6 global unicast
    '2606:4700:4700::1111',
    '2a00:1450:4001:80b::200e',
    '[2606:4700::1]',
    // IPv6 forms that carry a public IPv4
    '::ffff:8.8.8.8',
    '::ffff:808:808',
    '64:ff9b::8.8.8.8',
    '2002:808:808::1',
    '2001:0:808:808:8000:63bf:f7f7:f7f7',
  ];
  for (const address of publicAddresses) {
    test(`${address} is public`, () => assert.equal(isPublicAddress(address), true));
  }

  const nonPublic: Array<[string, string]> = [
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', '"this network"'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.255', 'loopback'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.0.1', 'private'],
    ['169.254.169.254', 'cloud metadata'],
    ['169.254.0.1', 'link-local'],
    ['100.64.0.1', 'CGNAT'],
    ['100.127.255.255', 'CGNAT'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    ['192.0.0.8', 'IETF assignments'],
    ['192.0.2.1', 'TEST-NET-1'],
    ['198.18.0.1', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['198.51.100.1', 'TEST-NET-2'],
    ['203.0.113.1', 'TEST-NET-3'],
    ['192.88.99.1', '6to4 relay anycast'],
    ['::', 'IPv6 unspecified'],
    ['::1', 'IPv6 loopback'],
    ['0:0:0:0:0:0:0:1', 'IPv6 loopback, long form'],
    ['[::1]', 'bracketed loopback'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local with a zone'],
    ['febf::1', 'link-local, top of fe80::/10'],
    ['fc00::1', 'unique-local'],
    ['fd00::1', 'unique-local'],
    ['fec0::1', 'deprecated site-local'],
    ['ff02::1', 'multicast'],
    ['ff0e::1', 'global multicast'],
    ['100::1', 'discard-only'],
    ['2001:db8::1', 'documentation'],
    ['3fff::1', 'documentation'],
    ['2001:2::1', 'benchmarking'],
    ['2001:10::1', 'ORCHID'],
    ['64:ff9b:1::1', 'local-use NAT64'],
    ['5f00::1', 'SRv6, outside 2000::/3'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:7f00:1', 'IPv4-mapped loopback, hex'],
    ['0:0:0:0:0:ffff:7f00:1', 'IPv4-mapped loopback, long form'],
    ['::ffff:169.254.169.254', 'IPv4-mapped metadata'],
    ['::ffff:10.0.0.1', 'IPv4-mapped private'],
    ['::ffff:0.0.0.0', 'IPv4-mapped unspecified'],
    ['::ffff:0:7f00:1', 'IPv4-translated loopback'],
    ['::127.0.0.1', 'IPv4-compatible loopback'],
    ['::7f00:1', 'IPv4-compatible loopback, hex'],
    ['::8.8.8.8', 'IPv4-compatible (deprecated, always refused)'],
    ['64:ff9b::127.0.0.1', 'NAT64 of loopback'],
    ['64:ff9b::a9fe:a9fe', 'NAT64 of metadata'],
    ['2002:7f00:1::1', '6to4 of loopback'],
    ['2002:c0a8:101::1', '6to4 of 192.168.1.1'],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'Teredo with a loopback client'],
    ['2001:0:a00:1:8000:63bf:f7f7:f7f7', 'Teredo with a private server'],
  ];
  for (const [address, why] of nonPublic) {
    test(`${address} is not public (${why})`, () => assert.equal(isPublicAddress(address), false));
  }

  for (const garbage of ['', 'localhost', 'example.com', '127.1', '2130706433', '0x7f000001', '1.2.3', '::g', '1:2:3:4:5:6:7:8:9']) {
    test(`"${garbage}" is not an IP address, so not public`, () => assert.equal(isPublicAddress(garbage), false));
  }
});
