import type { Config } from '../config/index.js';
import { parseListenAddress } from '../config/index.js';
import { parseStreamPath } from './rtmp/stream-path.js';

/**
 * `{rtmp,name=<name>}` (datarhei Core `app/api/api.go`): the URL a process publishes to or plays
 * from, `rtmp://<host>:<port>[<app>]/<name>[?token=<token>]`. The host is the configured one, or
 * 127.0.0.1 when the server listens on every interface (the reference writes `localhost`, which
 * may resolve to ::1 first). Without `name` the `{name}` part stays, as in the reference.
 * `token` is the one to write when `rtmp.token` is set: an encoder run's own (stream-grants.ts),
 * else `rtmp.token` itself.
 */
export function rtmpProcessUrl(
  options: Config['rtmp'],
  boundPort: number | undefined,
  params: Readonly<Record<string, string>>,
  token: string = options.token,
): string {
  const { host, port } = processUrlHost(options.address, boundPort, 1935);
  let url = `rtmp://${host}:${port}${appPrefix(options)}/${params.name ?? '{name}'}`;
  if (options.token !== '') url += `?token=${encodeURIComponent(token)}`;
  return url;
}

/**
 * The path the RTMP server files a `{rtmp}` stream under (`/live/abc`), as it reads the URL
 * `rtmpProcessUrl` writes; undefined for a name it would refuse.
 */
export function rtmpStreamPath(
  options: Config['rtmp'],
  params: Readonly<Record<string, string>>,
): string | undefined {
  return parseStreamPath(appPrefix(options), params.name ?? '{name}', false)?.path;
}

function appPrefix(options: Config['rtmp']): string {
  return options.app === '/' ? '' : options.app.replace(/\/+$/, '');
}

/**
 * Host and port a process on this machine reaches a listener at: the configured host, or
 * 127.0.0.1 when it listens on every interface; the bound port (port 0 picks one), else the
 * configured one.
 */
export function processUrlHost(
  listenAddress: string,
  boundPort: number | undefined,
  defaultPort: number,
): { host: string; port: number } {
  const address = parseListenAddress(listenAddress);
  const wildcard = address === undefined || ['', '0.0.0.0', '::'].includes(address.host);
  const host = wildcard ? '127.0.0.1' : address.host.includes(':') ? `[${address.host}]` : address.host;
  return { host, port: boundPort ?? address?.port ?? defaultPort };
}
