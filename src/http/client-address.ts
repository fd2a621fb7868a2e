import { isIPv4, isIPv6 } from 'node:net';

/**
 * The key under which a client address is counted: its login failures (docs/auth.md#login-methods) and its open
 * connections (`api.connections.max_per_address`). IPv4 addresses
 * (also when IPv4-mapped, `::ffff:a.b.c.d`) count one by one; IPv6 addresses count per /64 network,
 * because one host usually holds a whole /64 and could otherwise rotate through it at will.
 */
export function throttleKeyOfAddress(address: string): string {
  const plain = withoutMappedPrefix(address);
  if (isIPv4(plain) || !isIPv6(plain)) return plain;
  const groups = expandIPv6(plain);
  return groups === undefined ? plain : `${groups.slice(0, 4).join(':')}::/64`;
}

/** `::ffff:1.2.3.4` → `1.2.3.4`; other addresses unchanged. */
export function withoutMappedPrefix(address: string): string {
  const lower = address.toLowerCase();
  return lower.startsWith('::ffff:') && isIPv4(lower.slice(7)) ? lower.slice(7) : address;
}

/** The eight 16-bit groups of an IPv6 address, lower-case hex without leading zeros. */
function expandIPv6(address: string): string[] | undefined {
  const zone = address.indexOf('%');
  const bare = (zone === -1 ? address : address.slice(0, zone)).toLowerCase();
  const halves = bare.split('::');
  if (halves.length > 2) return undefined;
  const parse = (part: string | undefined): string[] =>
    part === undefined || part === '' ? [] : part.split(':');
  const head = parse(halves[0]);
  const tail = parse(halves[1]);
  // An embedded IPv4 tail (e.g. `64:ff9b::1.2.3.4`) is two groups.
  const last = tail.length > 0 ? tail[tail.length - 1] : head[head.length - 1];
  if (last !== undefined && isIPv4(last)) {
    const octets = last.split('.').map(Number);
    const groups = [((octets[0] ?? 0) << 8) | (octets[1] ?? 0), ((octets[2] ?? 0) << 8) | (octets[3] ?? 0)];
    const target = tail.length > 0 ? tail : head;
    target.splice(target.length - 1, 1, ...groups.map((group) => group.toString(16)));
  }
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const groups = [...head, ...Array<string>(halves.length === 1 ? 0 : missing).fill('0'), ...tail];
  return groups.map((group) => parseInt(group, 16).toString(16));
}
