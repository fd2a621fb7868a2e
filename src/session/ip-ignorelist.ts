import { BlockList, isIP } from 'node:net';

/**
 * `sessions.ip_ignorelist` (SPEC §9): client addresses that are not counted. IPv4-mapped IPv6
 * addresses (`::ffff:127.0.0.1`) match IPv4 ranges. The CIDRs were validated by the config.
 */
export class IpIgnoreList {
  private readonly list = new BlockList();
  private readonly empty: boolean;

  constructor(cidrs: readonly string[]) {
    this.empty = cidrs.length === 0;
    for (const cidr of cidrs) {
      const [address = '', prefix] = cidr.split('/');
      const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
      const bits = prefix === undefined ? (family === 'ipv6' ? 128 : 32) : Number(prefix);
      this.list.addSubnet(address, bits, family);
    }
  }

  ignores(address: string): boolean {
    if (this.empty) return false;
    const family = isIP(address);
    if (family === 0) return false;
    return this.list.check(address, family === 6 ? 'ipv6' : 'ipv4');
  }
}
