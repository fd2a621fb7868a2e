import { isIPv4, isIPv6 } from 'node:net';

/** Where this server can be reached by its encoders. */
export interface OwnServer {
  /** The TCP port the HTTP server listens on. */
  port: number;
  /** Path prefix of the memory filesystem (`/memfs`): the one place encoders may reach here. */
  memfsPath: string;
  /** This machine's own addresses (interfaces); loopback ones are always included. */
  localAddresses: readonly string[];
}

const DEFAULT_PORTS: Readonly<Record<string, number>> = {
  http: 80,
  https: 443,
  rtmp: 1935,
  rtmps: 443,
  rtsp: 554,
  rtsps: 322,
  ftp: 21,
  gopher: 70,
  icecast: 8000,
  mmsh: 80,
};

/**
 * Why a network address must not be used, or undefined when it may. Refused: addresses that do
 * not parse, link-local hosts (cloud metadata services answer there with credentials), and this
 * server's own port on any of its own addresses except the memory filesystem (SSRF into its API:
 * with authentication off, an encoder could create processes or read the config through it).
 * Host names are not resolved: a DNS name that points here is not recognised (see docs/security.md).
 */
export function networkRefusal(address: string, scheme: string, own: OwnServer): string | undefined {
  const afterScheme = address.slice(address.indexOf(':') + 1);
  if (!afterScheme.startsWith('//')) return `"${address}" has no //host part`;
  const listener = /^\/\/(?:[^@/?#]*@)?:(\d+)(?:[/?#]|$)/.exec(afterScheme);
  if (listener !== null) {
    // `srt://:9000?mode=listener`: the encoder listens on every interface of this machine.
    return Number(listener[1]) === own.port
      ? `"${address}" listens on this server's own port ${own.port}`
      : undefined;
  }
  let url: URL;
  try {
    // Parsed as http so that numeric IPv4 forms (2130706433, 0x7f.1, 127.1) are normalised the way
    // the resolver would read them.
    url = new URL(`http:${afterScheme}`);
  } catch {
    return `"${address}" is not a valid URL`;
  }
  const host = unbracket(url.hostname);
  if (isLinkLocal(host) || host === 'metadata.google.internal') {
    return `"${address}" names a link-local host (cloud metadata services answer there)`;
  }
  if (!isOwnHost(host, own.localAddresses)) return undefined;
  const port = url.port === '' ? DEFAULT_PORTS[scheme] : Number(url.port);
  if (port !== own.port) return undefined;
  const rawPath = /^\/\/[^/?#]*([^?#]*)/.exec(afterScheme)?.[1] ?? '';
  const memfs = `${own.memfsPath}/`;
  if (
    (scheme === 'http' || scheme === 'https') &&
    rawPath.startsWith(memfs) &&
    url.pathname.startsWith(memfs)
  ) {
    if (!/(^|\/)\.\.?(\/|$)|%2e/i.test(rawPath)) return undefined;
  }
  return `"${address}" reaches this server's own port ${own.port}; encoders may only reach its memory filesystem (${own.memfsPath}/…)`;
}

function unbracket(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** The IPv4 address an IPv4-mapped IPv6 address (`::ffff:7f00:1`) stands for, else the input. */
function unmapped(host: string): string {
  const match = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(host);
  if (match === null) return host.replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/i, '$1');
  const high = parseInt(match[1] as string, 16);
  const low = parseInt(match[2] as string, 16);
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}

function isOwnHost(rawHost: string, localAddresses: readonly string[]): boolean {
  const host = unmapped(rawHost.toLowerCase());
  if (host === '' || host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIPv4(host)) return host.startsWith('127.') || host === '0.0.0.0' || localAddresses.includes(host);
  if (isIPv6(host)) {
    return host === '::1' || host === '::' || localAddresses.some((own) => own.toLowerCase() === host);
  }
  return false;
}

function isLinkLocal(rawHost: string): boolean {
  const host = unmapped(rawHost.toLowerCase());
  if (isIPv4(host)) return host.startsWith('169.254.');
  return isIPv6(host) && /^fe[89ab][0-9a-f]?:/.test(host);
}
