import { describe, expect, it } from 'vitest';
import { isPublicAddress } from '../../src/auth/authorization-server/client-metadata-fetch.js';

/** Where a client metadata document may be fetched from: only public unicast addresses. */
describe('isPublicAddress', () => {
  it.each([
    // IPv4: unspecified, private, CGNAT, loopback, link-local, protocol assignments, documentation, 6to4 relay,
    // benchmarking, multicast, reserved, broadcast.
    '0.0.0.0', '10.1.2.3', '100.64.0.1', '100.127.255.254', '127.0.0.1', '127.255.255.254', '169.254.169.254', '172.16.0.1', '172.31.255.255',
    '192.0.0.8', '192.0.2.1', '192.88.99.1', '192.168.1.1', '198.18.0.1', '198.19.255.254', '198.51.100.7', '203.0.113.9',
    '224.0.0.251', '239.255.255.250', '240.0.0.1', '255.255.255.255',
    // IPv6: unspecified, loopback, unique local, link-local (with a zone), site-local, multicast, discard.
    '::', '::1', 'fc00::1', 'fd12:3456::1', 'fe80::1', 'fe80::1%eth0', 'fec0::1', 'ff02::1', 'ff0e::1', '100::1',
    // IPv4 inside IPv6, whatever the IPv4 address: mapped, compatible, translated (RFC 6145), NAT64 (both
    // prefixes), 6to4, Teredo.
    '::ffff:127.0.0.1', '::ffff:10.0.0.1', '::ffff:a9fe:a9fe', '::ffff:8.8.8.8', '::127.0.0.1', '::7f00:1', '::8.8.8.8',
    '::ffff:0:7f00:1', '64:ff9b::a00:1', '64:ff9b::808:808', '64:ff9b:1::a9fe:a9fe', '2002:7f00:1::1', '2002:808:808::1',
    '2001:0:4136:e378:8000:63bf:3fff:fdd2',
    // IPv6 reserved, documentation, benchmarking, ORCHID, segment routing.
    '2001:db8::1', '3fff::1', '2001:2::1', '2001:10::1', '2001:20::1', '5f00::1',
    // Not addresses, and spellings only lenient parsers read as one.
    'not an address', '', '127.1', '0x7f000001', '2130706433', '010.0.0.1',
  ])('refuses %s', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(['1.1.1.1', '8.8.8.8', '172.15.255.255', '172.32.0.1', '100.63.255.255', '100.128.0.1', '192.169.0.1', '198.20.0.1', '223.255.255.254', '2606:4700:4700::1111', '2001:4860:4860::8888', '2a00:1450:4001::200e'])(
    'accepts %s',
    (address) => {
      expect(isPublicAddress(address)).toBe(true);
    },
  );
});
