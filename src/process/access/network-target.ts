import { isIPv4, isIPv6 } from 'node:net';
import { splitUrl } from './url-split.js';

/** Where this server can be reached by its encoders. */
export interface OwnServer {
  /** The TCP port the HTTP server listens on. */
  port: number;
  /** Path prefix of the memory filesystem (`/memfs`): the one place encoders may reach here. */
  memfsPath: string;
  /** The S3 filesystems' mountpoints (`/s3`): encoders write there through the server too. */
  s3Paths?: readonly string[];
  /** This machine's own addresses (interfaces); loopback ones are always included. */
  localAddresses: readonly string[];
}

/** The port each protocol connects to when the address names none (libavformat's defaults). */
const DEFAULT_PORTS: Readonly<Record<string, number>> = {
  http: 80,
  https: 443,
  rtmp: 1935,
  rtmpe: 1935,
  rtmps: 443,
  rtmpt: 80,
  rtmpte: 80,
  rtmpts: 443,
  rtsp: 554,
  rtsps: 322,
  ftp: 21,
  gopher: 70,
  gophers: 70,
  icecast: 8000,
  mmsh: 80,
  mmst: 1755,
};

/** Names the resolver answers with a loopback address without asking DNS (/etc/hosts, glibc). */
const LOOPBACK_NAMES: ReadonlySet<string> = new Set([
  'localhost',
  'localhost.localdomain',
  'ip6-localhost',
  'ip6-loopback',
]);

/**
 * Why a network address must not be used, or undefined when it may. The address is split the way
 * ffmpeg splits it (see url-split.ts), so the host checked is the host the encoder connects to.
 * Refused: link-local hosts (cloud metadata services answer there with credentials), and this
 * server's own port on any of its own addresses except the memory filesystem (SSRF into its API:
 * with authentication off, an encoder could create processes or read the config through it).
 * Host names are not resolved: a DNS name that points here is not recognised (see docs/security.md).
 */
export function networkRefusal(address: string, scheme: string, own: OwnServer): string | undefined {
  const split = splitUrl(address);
  if (split === undefined) return `"${address}" is not a network address`;
  const host = resolverForm(split.host);
  if (isLinkLocal(host) || host === 'metadata.google.internal') {
    return `"${address}" names a link-local host (cloud metadata services answer there)`;
  }
  if (!isOwnHost(host, own.localAddresses)) return undefined;
  const port = split.port < 0 ? DEFAULT_PORTS[scheme] : split.port;
  if (port !== own.port) return undefined;
  const open = [own.memfsPath, ...(own.s3Paths ?? [])];
  if ((scheme === 'http' || scheme === 'https') && open.some((prefix) => isMemfsPath(split.path, prefix))) {
    return undefined;
  }
  const s3 = (own.s3Paths ?? []).map((prefix) => `, ${prefix}/…`).join('');
  return `"${address}" reaches this server's own port ${own.port}; encoders may only reach its memory filesystem (${own.memfsPath}/…)${s3 === '' ? '' : ` and its S3 mounts (${s3.slice(2)})`}`;
}

/**
 * A path under the memory filesystem that stays there: ffmpeg sends it as written and the server
 * decodes it, so dot segments, backslashes and encoded dots or separators are refused.
 */
function isMemfsPath(path: string, memfsPath: string): boolean {
  if (!path.startsWith(`${memfsPath}/`)) return false;
  return !/(^|\/)\.\.?(\/|$)|\\|%2e|%2f|%5c/i.test(path);
}

/**
 * The host in the form this module compares: IPv4 in every spelling the resolver accepts
 * (`127.1`, `0x7f.1`, `2130706433`, `0177.0.0.1`) as dotted decimal, IPv6 canonical and without a
 * zone (`::1%lo`), IPv4-mapped and IPv4-compatible IPv6 as the IPv4 address, names in lower case
 * without trailing dots. Text after white space is dropped: older glibc ignored it in numbers.
 */
function resolverForm(written: string): string {
  const host = (written.split(/[\t\n\v\f\r ]/)[0] as string).toLowerCase();
  if (host.includes(':')) {
    const canonical = canonicalIPv6(host.replace(/%.*$/, ''));
    return canonical === undefined ? host : (embeddedIPv4(canonical) ?? canonical);
  }
  const ipv4 = canonicalIPv4(host);
  return ipv4 ?? host.replace(/\.+$/, '');
}

function canonicalIPv6(host: string): string | undefined {
  try {
    return unbracket(new URL(`http://[${host}]`).hostname);
  } catch {
    return undefined;
  }
}

/** Parsed as an http URL's host, which reads IPv4 numbers as inet_aton does. */
function canonicalIPv4(host: string): string | undefined {
  if (!/^[0-9a-fx.]+$/.test(host)) return undefined;
  try {
    const parsed = new URL(`http://${host}`).hostname;
    return isIPv4(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function unbracket(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** The IPv4 address `::ffff:7f00:1` (mapped) or `::7f00:1` (compatible) stands for. */
function embeddedIPv4(canonical: string): string | undefined {
  const match = /^::(?:ffff:)?([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
  if (match === null) return undefined;
  const high = parseInt(match[1] as string, 16);
  const low = parseInt(match[2] as string, 16);
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}

function isOwnHost(host: string, localAddresses: readonly string[]): boolean {
  if (host === '' || LOOPBACK_NAMES.has(host) || host.endsWith('.localhost')) return true;
  if (isIPv4(host)) return host.startsWith('127.') || host === '0.0.0.0' || localAddresses.includes(host);
  if (isIPv6(host)) {
    return (
      host === '::1' ||
      host === '::' ||
      localAddresses.some((local) => canonicalIPv6(local.toLowerCase()) === host)
    );
  }
  return false;
}

function isLinkLocal(host: string): boolean {
  if (isIPv4(host)) return host.startsWith('169.254.');
  return isIPv6(host) && /^fe[89ab][0-9a-f]?:/.test(host);
}
