import { resolveListenAddress, type Config } from '../config/index.js';
import { probeListen } from '../http/index.js';
import type { LocalStream, LocalStreams, PlaceholderTemplate } from '../process/index.js';
import type { ServedCertificate } from '../tls/index.js';
import { IpIgnoreList } from '../session/index.js';
import { mediaEvents, type IngestDeps } from './ingest-deps.js';
import { resolveIngestAddress, type IngestAddress } from './listen-address.js';
import { RtmpServer } from './rtmp/index.js';
import { rtmpProcessUrl, rtmpStreamPath } from './rtmp-process-url.js';
import { RtmpSessions } from './rtmp-sessions.js';
import { StreamGrants } from './stream-grants.js';

/** The keys of the RTMP server's listeners: a change builds them again. */
const LISTENER_KEYS = ['rtmp.enable', 'rtmp.enable_tls', 'rtmp.address', 'rtmp.address_tls'];

/**
 * The RTMP server when `rtmp.enable`, and its `{rtmp}` placeholder. It listens when the app
 * listens, before processes start (a restored process may read `{rtmp}` at once), and closes after
 * the processes stopped. A port in use fails start-up with the config key in the message; RTMPS
 * serves the certificate HTTPS serves (tls/), own or automatic. A reload applies every `rtmp` key:
 * the app and token at once, the listeners moved (the streams and connections they accepted keep
 * running), the server built or closed.
 */
export function createRtmpIngest(
  config: Config,
  deps: IngestDeps,
): { readonly server: RtmpServer | undefined; placeholder: PlaceholderTemplate; localStreams: LocalStreams } {
  const options = config.rtmp;
  let server: RtmpServer | undefined;
  /** The port the plain listener got (differs from the configured one only for port 0). */
  let boundPort: number | undefined;
  const grants = new StreamGrants();
  const build = (settings: Config['rtmp']): RtmpServer =>
    new RtmpServer({
      app: settings.app,
      token: settings.token,
      grants,
      logger: deps.logger,
      now: deps.now,
      onMedia: mediaEvents('rtmp', deps),
      sessions:
        deps.rtmpCollector === undefined
          ? undefined
          : new RtmpSessions(
              deps.rtmpCollector,
              new IpIgnoreList(() => config.sessions.ip_ignorelist),
              // Read at each connection and tick: a reload may turn it on or off.
              () => config.sessions.enable,
            ),
    });
  const open = async (rtmp: RtmpServer, settings: Config['rtmp'], tls: ServedCertificate | undefined) => {
    const listen = (key: string, address: string, certificate?: ServedCertificate): Promise<number> =>
      listenOn(rtmp, { key, address, tokenKey: 'rtmp.token', token: settings.token }, deps, certificate);
    boundPort = await listen('rtmp.address', settings.address);
    if (tls !== undefined) await listen('rtmp.address_tls', settings.address_tls, tls);
  };
  // The certificate HTTPS serves (own files or tls.auto): tls/ loads it at start before the
  // listeners open, and its reload step, registered before this one, builds it for a reload.
  const certificateFor = (next: Config): ServedCertificate | undefined =>
    next.rtmp.enable_tls ? deps.certificate : undefined;
  if (options.enable) {
    const rtmp = build(options);
    server = rtmp;
    deps.lifecycle.onListen(async () => open(rtmp, options, certificateFor(config)));
  }
  deps.lifecycle.onShutdown(() => server?.close());
  deps.lifecycle.onReload({
    name: 'rtmp',
    keys: [...LISTENER_KEYS, 'rtmp.app', 'rtmp.token'],
    prepare: async (next, changed) => {
      const settings = structuredClone(next.rtmp);
      if (!changed.some((key) => LISTENER_KEYS.includes(key))) {
        // `{rtmp}` reads the running config's section, which the reload updates in place.
        return { commit: () => server?.setAccess(settings), abort: () => undefined };
      }
      if (!settings.enable) {
        return {
          commit: async () => {
            await server?.close();
            server = undefined;
            boundPort = undefined;
          },
          abort: () => undefined,
        };
      }
      const tls = certificateFor(next);
      const held = server?.ports() ?? [];
      const tokened = settings.token !== '';
      await probeAddress('rtmp.address', settings.address, tokened, held);
      if (tls !== undefined) await probeAddress('rtmp.address_tls', settings.address_tls, tokened, held);
      return {
        commit: async () => {
          const rtmp = server ?? build(settings);
          rtmp.setAccess(settings);
          rtmp.stopListening();
          try {
            await open(rtmp, settings, tls);
            server = rtmp;
          } catch (error) {
            deps.logger.error(
              { err: error },
              'rtmp: cannot listen on the new addresses; RTMP is not listening',
            );
          }
        },
        abort: () => undefined,
      };
    },
  });
  return {
    get server() {
      return server;
    },
    placeholder: (params, _section, run) => {
      // An encoder run gets a token of its own for the stream it names, never `rtmp.token`
      // (a name the server refuses gets a token that opens nothing).
      if (run === undefined || options.token === '') return rtmpProcessUrl(options, boundPort, params);
      const grant = run.credential(grants, () => grants.issue());
      const path = rtmpStreamPath(options, params);
      if (path !== undefined) grant.allow(path);
      return rtmpProcessUrl(options, boundPort, params, grant.token);
    },
    localStreams: (address) =>
      server === undefined || boundPort === undefined
        ? undefined
        : localRtmpStream(server, address, rtmpProcessUrl(options, boundPort, { name: 'x' })),
  };
}

/**
 * Binds a listener's new address for a moment, so that a reload refuses one it could not open;
 * a port the server holds itself is free once it lets go of it.
 */
async function probeAddress(
  key: string,
  address: string,
  protectedByToken: boolean,
  held: readonly number[],
): Promise<void> {
  const resolved = resolveListenAddress(address, protectedByToken);
  if (resolved === undefined) throw new Error(`${key}: invalid address "${address}"`);
  if (resolved.port !== 0 && held.includes(resolved.port)) return;
  await probeListen(key, address, resolved);
}

/**
 * The server's own stream at `address` when it is an RTMP URL of the plain listener as `{rtmp}`
 * writes it (same host and port): a process's fallback relay reads it in the server
 * (docs/processes.md#fallback-sources), the token checked as for a player. Not counted as an
 * `rtmp` session: no connection is made.
 */
function localRtmpStream(server: RtmpServer, address: string, own: string): LocalStream | undefined {
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'rtmp:' || url.host !== new URL(own).host) return undefined;
  return {
    open: (onTag, onEnd) => {
      const stream = server.playable(url);
      if (stream === undefined) {
        const later = setImmediate(() => onEnd(`${url.pathname} is not being published`));
        return () => clearImmediate(later);
      }
      return stream.addListener({
        tag: (type, timestamp, body) => onTag({ type, timestamp, body }),
        end: onEnd,
      });
    },
  };
}

async function listenOn(
  server: RtmpServer,
  listener: IngestAddress,
  deps: IngestDeps,
  certificate?: ServedCertificate,
): Promise<number> {
  const { host, port } = resolveIngestAddress(listener, deps.logger);
  try {
    return (await server.listen(host, port, certificate)).port;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`${listener.key}: cannot listen on "${listener.address}": ${reason}`, { cause: error });
  }
}
