import { readFile } from 'node:fs/promises';
import { createSecureContext, type SecureContextOptions } from 'node:tls';
import type { Config } from '../config/index.js';
import type { PlaceholderTemplate } from '../process/index.js';
import { IpIgnoreList } from '../session/index.js';
import { mediaEvents, type IngestDeps } from './ingest-deps.js';
import { resolveIngestAddress, type IngestAddress } from './listen-address.js';
import { RtmpServer } from './rtmp/index.js';
import { rtmpProcessUrl } from './rtmp-process-url.js';
import { RtmpSessions } from './rtmp-sessions.js';

/**
 * The RTMP server when `rtmp.enable`, and its `{rtmp}` placeholder. It listens when the app
 * listens, before processes start (a restored process may read `{rtmp}` at once), and closes after
 * the processes stopped. A port in use or an unreadable certificate fails start-up with the config
 * key in the message.
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
      onMedia: mediaEvents('rtmp', deps),
      sessions:
        deps.rtmpCollector === undefined
          ? undefined
          : new RtmpSessions(deps.rtmpCollector, new IpIgnoreList(config.sessions.ip_ignorelist)),
    });
    server = rtmp;
    const listen = (key: string, address: string, tls?: SecureContextOptions): Promise<number> =>
      listenOn(rtmp, { key, address, tokenKey: 'rtmp.token', token: options.token }, deps, tls);
    deps.lifecycle.onListen(async () => {
      boundPort = await listen('rtmp.address', options.address);
      if (options.enable_tls) {
        const tls = await loadCertificate(config.tls.cert_file, config.tls.key_file);
        await listen('rtmp.address_tls', options.address_tls, tls);
      }
    });
    deps.lifecycle.onShutdown(() => rtmp.close());
  }
  return { server, placeholder: (params) => rtmpProcessUrl(options, boundPort, params) };
}

async function listenOn(
  server: RtmpServer,
  listener: IngestAddress,
  deps: IngestDeps,
  tls?: SecureContextOptions,
): Promise<number> {
  const { host, port } = resolveIngestAddress(listener, deps.logger);
  try {
    return (await server.listen(host, port, tls)).port;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`${listener.key}: cannot listen on "${listener.address}": ${reason}`, { cause: error });
  }
}

/** Reads and checks the PEM files, so a bad certificate stops start-up instead of every TLS client. */
async function loadCertificate(certFile: string, keyFile: string): Promise<SecureContextOptions> {
  const read = async (key: string, file: string): Promise<Buffer> => {
    try {
      return await readFile(file);
    } catch (error) {
      throw new Error(`${key}: cannot read "${file}": ${(error as Error).message}`, { cause: error });
    }
  };
  const cert = await read('tls.cert_file', certFile);
  const key = await read('tls.key_file', keyFile);
  try {
    createSecureContext({ cert, key });
  } catch (error) {
    throw new Error(
      `tls.cert_file, tls.key_file: not a usable certificate and key: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
  return { cert, key };
}
