import { AddressList } from '../http/index.js';

/**
 * `sessions.ip_ignorelist` (docs/sessions.md#the-contract): client addresses that are not counted. IPv4-mapped IPv6
 * addresses (`::ffff:127.0.0.1`) match IPv4 ranges. The CIDRs were validated by the config.
 */
export class IpIgnoreList extends AddressList {
  ignores(address: string): boolean {
    return this.includes(address);
  }
}
