import type { Config } from '../config/index.js';
import type { PlaceholderTemplate } from '../process/index.js';
import type { ServedCertificate } from '../tls/index.js';
import { IpIgnoreList } from '../session/index.js';
import type { IngestDeps } from './ingest-deps.js';
import { resolveIngestAddress, type IngestAddress } from './listen-address.js';
import { RtmpServer } from './rtmp/index.js';
import { rtmpProcessUrl } from './rtmp-process-url.js';
import { RtmpSessions } from './rtmp-sessions.js';

/**
 * The RTMP server when `rtmp.enable`, and its `{rtmp}` placeholder. It listens when the app
 * listens, before processes start (a restored process may read `{rtmp}` at once), and closes after
 * the processes stopped. A port in use fails start-up with the config key in the message; RTMPS
 * serves the certificate HTTPS serves (tls/), own or automatic.
 */
export function createRtmpIngest(
  config: Config,
  deps: IngestDeps,
): { server: RtmpServer | undefined; placeholder: PlaceholderTemplate } {
  const options = config.rtmp;
  let server: RtmpServer | undefined;
  /** The port the plain listener got (differs from the configured one only for port 0). */
  let boundPort: number | undefined;
  if (options.enable) {
    const rtmp = new RtmpServer({
      app: options.app,
      token: options.token,
      logger: deps.logger,
      now: deps.now,
      sessions:
        deps.rtmpCollector === undefined
          ? undefined
          : new RtmpSessions(deps.rtmpCollector, new IpIgnoreList(config.sessions.ip_ignorelist)),
    });
    server = rtmp;
    const listen = (key: string, address: string, certificate?: ServedCertificate): Promise<number> =>
      listenOn(rtmp, { key, address, tokenKey: 'rtmp.token', token: options.token }, deps, certificate);
    deps.lifecycle.onListen(async () => {
      boundPort = await listen('rtmp.address', options.address);
      // The certificate HTTPS serves (own files or tls.auto), loaded before the listeners open.
      if (options.enable_tls) await listen('rtmp.address_tls', options.address_tls, deps.certificate);
    });
    deps.lifecycle.onShutdown(() => rtmp.close());
  }
  return { server, placeholder: (params) => rtmpProcessUrl(options, boundPort, params) };
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
