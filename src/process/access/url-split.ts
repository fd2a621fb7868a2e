/** A network address cut into the parts ffmpeg connects with. */
export interface SplitUrl {
  /** Everything before the first `:` (ffmpeg takes the first colon, whatever precedes it). */
  scheme: string;
  /** The host as ffmpeg hands it to the resolver: after the last `@`, without brackets. */
  host: string;
  /** The port, or -1 when none is given (the protocol's default port applies then). */
  port: number;
  /** From the first `/`, `?` or `#` after the host on, as ffmpeg sends it (not normalised). */
  path: string;
}

/**
 * Splits `address` the way ffmpeg's `av_url_split` (libavformat/utils.c) does, which every
 * network protocol uses to find its host (http, tcp, tls, rtmp and its tunnels, rtsp, srt, udp).
 * It differs from a WHATWG URL parser where it matters for the own-port rule: a backslash is an
 * ordinary character, so `http://a\@127.0.0.1:8080/` reaches 127.0.0.1; the *last* `@` before the
 * path ends the user part; one or two slashes after the scheme are skipped and none are needed;
 * anything in brackets is the host (`[127.0.0.1]` too); the port is read with C's `atoi`.
 * Returns undefined for an address without a colon (a local path to ffmpeg).
 */
export function splitUrl(address: string): SplitUrl | undefined {
  const colon = address.indexOf(':');
  if (colon < 0) return undefined;
  let rest = address.slice(colon + 1);
  if (rest.startsWith('/')) rest = rest.slice(1);
  if (rest.startsWith('/')) rest = rest.slice(1);
  const pathStart = rest.search(/[/?#]/);
  const authority = pathStart < 0 ? rest : rest.slice(0, pathStart);
  const path = pathStart < 0 ? '' : rest.slice(pathStart);
  const hostPort = authority.slice(authority.lastIndexOf('@') + 1);
  let host = hostPort;
  let port = -1;
  const close = hostPort.indexOf(']');
  if (hostPort.startsWith('[') && close > 0) {
    host = hostPort.slice(1, close);
    if (hostPort[close + 1] === ':') port = atoi(hostPort.slice(close + 2));
  } else if (hostPort.includes(':')) {
    host = hostPort.slice(0, hostPort.indexOf(':'));
    port = atoi(hostPort.slice(hostPort.indexOf(':') + 1));
  }
  return { scheme: address.slice(0, colon), host, port, path };
}

const LONG_MAX = 2n ** 63n - 1n;
const LONG_MIN = -(2n ** 63n);

/**
 * glibc's `atoi`: `(int) strtol(text, NULL, 10)` on a 64-bit machine. Leading white space and a
 * sign are accepted, reading stops at the first non-digit, an overflow saturates the long and the
 * cast to int keeps the low 32 bits: `4294975376` is port 8080 to ffmpeg.
 */
export function atoi(text: string): number {
  const match = /^[\t\n\v\f\r ]*([+-]?)(\d*)/.exec(text);
  const digits = match?.[2] ?? '';
  if (digits === '') return 0;
  let value = BigInt(digits);
  if (match?.[1] === '-') value = -value;
  if (value > LONG_MAX) value = LONG_MAX;
  if (value < LONG_MIN) value = LONG_MIN;
  return Number(BigInt.asIntN(32, value));
}
