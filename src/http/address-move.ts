import type { Server as HttpServer } from 'node:http';
import { Server as NetServer, type AddressInfo, type Server } from 'node:net';
import type { Logger } from 'pino';
import { resolveBindAddress, type Config } from '../config/index.js';
import { NOTHING_TO_BUILD, type ReloadStep } from '../lifecycle/index.js';
import { listenOn, loopbackBaseUrl, openForwardingListener, probeListen } from './listen-address.js';

export interface AddressMoveDeps {
  /** The server whose listener moves (fastify's node server). */
  http: HttpServer;
  logger: Logger;
  /** The server answers at `baseUrl` from now on (`{memfs}` of the processes started from now). */
  moved: (baseUrl: string) => void;
}

/**
 * `address` on a reload: the HTTP listener moves to the new address while the connections it
 * accepted carry on (the reload's own request too). The node server stops accepting and listens
 * again: the same server, so every hook, time-out and HTTPS listener that hands it connections
 * stays. Processes started before the move write to `{memfs}` at the old loopback address; it
 * keeps answering on loopback until the next start, so they keep running. `api.auth.enable` moves
 * it too when the address names no host (`:port` binds loopback while authentication is off);
 * the auth step, registered before, has switched the guard by then.
 */
export class HttpAddress {
  /** Old loopback addresses kept for the encoders that write to them. */
  private readonly kept: Server[] = [];

  constructor(private readonly deps: AddressMoveDeps) {}

  readonly reloadStep: ReloadStep<Config> = {
    name: 'http listener',
    // Authentication decides the bind host of `:port` (every interface while on, loopback while off).
    keys: ['address', 'api.auth.enable'],
    prepare: async (next, changed) => {
      const current = this.deps.http.address() as AddressInfo;
      const resolved = resolveBindAddress(next);
      // Port 0 of an unchanged address keeps the port it got: only the host moves.
      const target =
        resolved.port === 0 && !changed.includes('address') ? { ...resolved, port: current.port } : resolved;
      if (target.port !== 0 && target.port === current.port && sameHost(target.host, current.address)) {
        return NOTHING_TO_BUILD;
      }
      // A port the server holds itself is free once it lets go of it; any other is tried now.
      if (target.port === 0 || target.port !== current.port)
        await probeListen('address', next.address, target);
      return { commit: () => this.move(target), abort: () => undefined };
    },
  };

  /** Closes the loopback addresses kept for earlier encoders (at shutdown). */
  close(): void {
    for (const server of this.kept.splice(0)) server.close();
  }

  private async move(target: { host: string; port: number }): Promise<void> {
    const { http, logger } = this.deps;
    const before = http.address() as AddressInfo;
    const oldUrl = loopbackBaseUrl(before);
    stopAccepting(http);
    try {
      await listenOn(http, target);
    } catch (error) {
      // Taken between the check and now: stay where it was (the port was just let go).
      logger.error({ err: error }, 'address: cannot listen on the new address; the old one stays');
      await listenOn(http, { host: before.address, port: before.port });
      return;
    }
    const after = http.address() as AddressInfo;
    const newUrl = loopbackBaseUrl(after);
    if (newUrl !== oldUrl) await this.keepForEncoders(oldUrl);
    this.deps.moved(newUrl);
    logger.info({ from: oldUrl, to: newUrl }, 'address: the HTTP listener moved');
  }

  /** Keeps answering at `url` when it is a loopback address no listener serves any more. */
  private async keepForEncoders(url: string): Promise<void> {
    const { hostname, port } = new URL(url);
    const host = hostname.replace(/^\[|\]$/g, '');
    if (!isLoopback(host)) return;
    try {
      this.kept.push(await openForwardingListener(this.deps.http, { host, port: Number(port) }));
    } catch (error) {
      // The new listener covers it (same port, every interface), or another program took it.
      this.deps.logger.debug({ err: error, url }, 'address: the old loopback address is not kept');
    }
  }
}

function sameHost(configured: string, bound: string): boolean {
  if (configured === '') return bound === '::' || bound === '0.0.0.0';
  return configured === bound;
}

function isLoopback(host: string): boolean {
  return host === '::1' || host.startsWith('127.');
}

/**
 * Closes the listening socket and nothing else. `http.Server.close` (node 19 on) also destroys
 * every connection without a request under way: idle keep-alive ones, and ones whose answer is
 * written but still in the server's buffers (a large memfs file a client is downloading), which
 * loses the rest of that answer. Node starts its connection checks (`headers_sec`,
 * `request_sec`) again when the server listens again.
 */
function stopAccepting(http: HttpServer): void {
  NetServer.prototype.close.call(http);
}
