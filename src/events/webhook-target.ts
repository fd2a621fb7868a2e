import { lookup as dnsLookup } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';

/** Why an address a webhook's host resolved to must not be reached, or undefined when it may. */
export function addressRefusal(address: string, allowLoopback: boolean): string | undefined {
  const ip = unmapped(address.toLowerCase());
  if (isIP(ip) === 4) {
    const [a = 0, b = 0] = ip.split('.').map(Number);
    if (a === 127)
      return allowLoopback ? undefined : 'a loopback address (events.allow_loopback_webhooks is off)';
    if (a === 0) return 'an unspecified address';
    if (a === 169 && b === 254) return 'a link-local address (cloud metadata services answer there)';
    if (a >= 224) return 'a multicast or reserved address';
    return undefined;
  }
  if (ip === '::1')
    return allowLoopback ? undefined : 'a loopback address (events.allow_loopback_webhooks is off)';
  if (ip === '::') return 'an unspecified address';
  if (/^fe[89ab]/.test(ip)) return 'a link-local address (cloud metadata services answer there)';
  if (ip.startsWith('ff')) return 'a multicast address';
  return undefined;
}

/** `::ffff:127.0.0.1` or `::ffff:7f00:1` (as URLs write it) → `127.0.0.1`: the IPv4 address a mapped one reaches. */
function unmapped(ip: string): string {
  const dotted = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(ip);
  if (dotted !== null) return dotted[1] ?? ip;
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(ip);
  if (hex === null) return ip;
  const [high, low] = [parseInt(hex[1] ?? '0', 16), parseInt(hex[2] ?? '0', 16)];
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}

/**
 * A `lookup` for `http.request` that refuses forbidden addresses: the check is on the address the
 * connection is made to, so a host name that resolves (or rebinds) to loopback or link-local is
 * refused like the literal address. Redirects are never followed (node's client does not).
 */
export function guardedLookup(allowLoopback: boolean, resolve: LookupFunction = dnsLookup): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, options, (error, address, family) => {
      if (error !== null) return callback(error, address, family);
      const addresses = typeof address === 'string' ? [address] : address.map((entry) => entry.address);
      for (const candidate of addresses) {
        const refusal = addressRefusal(candidate, allowLoopback);
        if (refusal !== undefined) {
          const refused: NodeJS.ErrnoException = new Error(
            `${hostname} resolves to ${candidate}: ${refusal}`,
          );
          refused.code = 'EWEBHOOKTARGET';
          return callback(refused, address, family);
        }
      }
      callback(null, address, family);
    });
  };
}
