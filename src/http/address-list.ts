import { BlockList, isIP } from 'node:net';

/** Addresses whose answer is remembered; the cache starts over when full. */
const CACHE_ENTRIES = 4096;

/**
 * A set of IP ranges given as CIDRs (validated by the config). IPv4-mapped IPv6 addresses
 * (`::ffff:127.0.0.1`) match IPv4 ranges.
 */
export class AddressList {
  private readonly list = new BlockList();
  private readonly empty: boolean;
  private readonly cache = new Map<string, boolean>();

  constructor(cidrs: readonly string[]) {
    this.empty = cidrs.length === 0;
    for (const cidr of cidrs) {
      const [address = '', prefix] = cidr.split('/');
      const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
      const bits = prefix === undefined ? (family === 'ipv6' ? 128 : 32) : Number(prefix);
      this.list.addSubnet(address, bits, family);
    }
  }

  includes(address: string): boolean {
    if (this.empty) return false;
    // A BlockList check costs microseconds and runs on every request: remember recent answers.
    let answer = this.cache.get(address);
    if (answer === undefined) {
      const family = isIP(address);
      answer = family !== 0 && this.list.check(address, family === 6 ? 'ipv6' : 'ipv4');
      if (this.cache.size >= CACHE_ENTRIES) this.cache.clear();
      this.cache.set(address, answer);
    }
    return answer;
  }
}
