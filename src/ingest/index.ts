import { readFile } from 'node:fs/promises';
import { createSecureContext, type SecureContextOptions } from 'node:tls';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { parseListenAddress, type Config } from '../config/index.js';
import type { Lifecycle } from '../lifecycle/index.js';
import type { PlaceholderTemplate } from '../process/index.js';
import { IpIgnoreList, type SessionCollector } from '../session/index.js';
import { RtmpServer } from './rtmp/index.js';
import { registerRtmpRoutes } from './rtmp-routes.js';
import { RtmpSessions } from './rtmp-sessions.js';
import { rtmpPlaceholder } from './rtmp-placeholder.js';
import { createSrtIngest } from './srt-ingest.js';
import { registerSrtRoutes } from './srt-routes.js';
import type { SrtServer } from './srt/index.js';

export { RtmpServer } from './rtmp/index.js';
export { SrtServer } from './srt/index.js';

export interface IngestDeps {
  logger: Logger;
  now: () => number;
  lifecycle: Lifecycle;
  /** The `rtmp` session collector; undefined when `sessions.enable` is off. */
  rtmpCollector: SessionCollector | undefined;
  /** The `srt` session collector; undefined when `sessions.enable` is off. */
  srtCollector: SessionCollector | undefined;
}

/** The live ingest servers (RTMP, SRT) and what other modules use of them. */
export interface Ingest {
  /** The RTMP server when `rtmp.enable`. */
  readonly rtmp: RtmpServer | undefined;
  /** The SRT server when `srt.enable`. */
  readonly srt: SrtServer | undefined;
  /** Process placeholders the servers provide (`{rtmp}`, `{srt}`), by name. */
  readonly placeholders: Readonly<Record<string, PlaceholderTemplate>>;
  /** `GET /api/v3/rtmp` and `GET /api/v3/srt`, into the guarded `/api/v3` scope. */
  registerApi(v3: FastifyInstance): void;
}

/**
 * Builds the enabled ingest servers (SRT in srt-ingest.ts). They listen when the app listens, before processes start
 * (a restored process may read `{rtmp}` at once), and close after the processes stopped. A port in
 * use or an unreadable certificate fails start-up with the config key in the message.
 */
export function createIngest(config: Config, deps: IngestDeps): Ingest {
  const options = config.rtmp;
  let rtmp: RtmpServer | undefined;
  /** The port the plain listener got (differs from the configured one only for port 0). */
  let boundPort: number | undefined;
  if (options.enable) {
    const server = new RtmpServer({
      app: options.app,
      token: options.token,
      logger: deps.logger,
      now: deps.now,
      sessions:
        deps.rtmpCollector === undefined
          ? undefined
          : new RtmpSessions(deps.rtmpCollector, new IpIgnoreList(config.sessions.ip_ignorelist)),
    });
    rtmp = server;
    deps.lifecycle.onListen(async () => {
      boundPort = await listenOn(server, 'rtmp.address', options.address);
      if (options.enable_tls) {
        const tls = await loadCertificate(config.tls.cert_file, config.tls.key_file);
        await listenOn(server, 'rtmp.address_tls', options.address_tls, tls);
      }
    });
    deps.lifecycle.onShutdown(() => server.close());
  }
  const srt = createSrtIngest(config, deps);
  return {
    rtmp,
    srt: srt.server,
    placeholders: {
      rtmp: (params) => rtmpPlaceholder(options, boundPort, params),
      srt: srt.placeholder,
    },
    registerApi: (v3) => {
      registerRtmpRoutes(v3, rtmp);
      registerSrtRoutes(v3, srt.server);
    },
  };
}

async function listenOn(
  server: RtmpServer,
  key: string,
  address: string,
  tls?: SecureContextOptions,
): Promise<number> {
  const parsed = parseListenAddress(address);
  if (parsed === undefined) throw new Error(`${key}: invalid address "${address}"`);
  try {
    return (await server.listen(parsed.host, parsed.port, tls)).port;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`${key}: cannot listen on "${address}": ${reason}`, { cause: error });
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
export { INGEST_DOCS } from './contract.js';
