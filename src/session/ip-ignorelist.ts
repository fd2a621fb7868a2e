import { AddressList } from '../http/index.js';

/**
 * `sessions.ip_ignorelist` (docs/sessions.md#the-contract): client addresses that are not counted. IPv4-mapped IPv6
 * addresses (`::ffff:127.0.0.1`) match IPv4 ranges. The CIDRs were validated by the config.
 * Given as a function, it answers the running list: a reload replaces the array, and the list is
 * built again at its next use.
 */
export class IpIgnoreList {
  private readonly cidrs: () => readonly string[];
  private source: readonly string[];
  private list: AddressList;

  constructor(cidrs: readonly string[] | (() => readonly string[])) {
    this.cidrs = typeof cidrs === 'function' ? cidrs : () => cidrs;
    this.source = this.cidrs();
    this.list = new AddressList(this.source);
  }

  ignores(address: string): boolean {
    const current = this.cidrs();
    if (current !== this.source) {
      this.source = current;
      this.list = new AddressList(current);
    }
    return this.list.includes(address);
  }
}
