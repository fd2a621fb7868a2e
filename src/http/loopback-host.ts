import { isIPv4 } from 'node:net';

/** `host[:port]` with a name, a dotted or numeric IPv4 form, or a bracketed IPv6 address. */
const HOST_SYNTAX = /^(?:\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::\d{1,5})?$/i;
/** An IPv4-mapped loopback address as the URL parser prints it (`[::ffff:127.0.0.1]`). */
const MAPPED_LOOPBACK = /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/;
/** Host values remembered; the cache starts over when full (an attacker may send many). */
const CACHE_ENTRIES = 256;

/**
 * Whether a `Host` header names this machine's loopback and nothing else, so a browser that sent it
 * was not pointed here by a DNS name an attacker controls (DNS rebinding): `localhost` and its
 * subdomains (RFC 6761 keeps them on loopback), `127.0.0.0/8` in every spelling the URL parser
 * reads (`127.1`, `0x7f.1`, `2130706433`), `[::1]` and IPv4-mapped loopback; each with or without
 * a port. A missing or malformed header is not loopback.
 */
export class LoopbackHosts {
  private readonly cache = new Map<string, boolean>();

  includes(host: string | undefined): boolean {
    if (host === undefined) return false;
    let answer = this.cache.get(host);
    if (answer === undefined) {
      answer = isLoopbackHost(host);
      if (this.cache.size >= CACHE_ENTRIES) this.cache.clear();
      this.cache.set(host, answer);
    }
    return answer;
  }
}

function isLoopbackHost(host: string): boolean {
  if (!HOST_SYNTAX.test(host)) return false;
  let name: string;
  try {
    // The URL parser folds case and reads the numeric IPv4 forms the way a resolver would.
    name = new URL(`http://${host}`).hostname;
  } catch {
    return false;
  }
  const bare = name.endsWith('.') ? name.slice(0, -1) : name;
  if (bare === 'localhost' || bare.endsWith('.localhost')) return true;
  if (isIPv4(bare)) return bare.startsWith('127.');
  return name === '[::1]' || MAPPED_LOOPBACK.test(name);
}
