import { describe, expect, it } from 'vitest';
import { addressHash, addressNetwork } from '../../shared/collect/visitors.js';

// The client the collector's rate limit counts (shared/collect/visitors.ts): an IPv6 address by its /64.

describe('addressNetwork', () => {
  it.each([
    ['2001:db8:1:2::1', '2001:db8:1:2::/64'],
    ['2001:DB8:0001:0002:ffff:ffff:ffff:ffff', '2001:db8:1:2::/64'],
    ['2001:db8:1::5', '2001:db8:1:0::/64'],
    ['2001:db8::', '2001:db8:0:0::/64'],
    ['2001:db8:1:2:3:4:1.2.3.4', '2001:db8:1:2::/64'],
    ['64:ff9b::192.0.2.33', '64:ff9b:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['::ffff:1.2.3.4', '1.2.3.4'],
    ['0:0:0:0:0:FFFF:1.2.3.4', '1.2.3.4'],
    ['::ffff:102:304', '1.2.3.4'],
    ['::1.2.3.4', '1.2.3.4'],
    ['1.2.3.4', '1.2.3.4'],
    ['not an address', 'not an address'],
  ])('%s is counted as %s', (address, network) => {
    expect(addressNetwork(address)).toBe(network);
  });

  it('names one /64 alike however its addresses are spelled, and the next /64 otherwise', () => {
    const salt = 'salt';
    expect(addressHash(salt, '2001:db8:1:2::1')).toBe(addressHash(salt, '2001:0DB8:1:2:ffff:0:0:9'));
    expect(addressHash(salt, '2001:db8:1:2::1')).not.toBe(addressHash(salt, '2001:db8:1:3::1'));
    expect(addressHash(salt, '::ffff:1.2.3.4')).toBe(addressHash(salt, '1.2.3.4'));
  });
});
