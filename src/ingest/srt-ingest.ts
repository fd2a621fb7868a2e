import type { Config } from '../config/index.js';
import type { PlaceholderTemplate } from '../process/index.js';
import { IpIgnoreList, LiveSessions } from '../session/index.js';
import { mediaEvents, type IngestDeps } from './ingest-deps.js';
import { resolveIngestAddress } from './listen-address.js';
import { srtProcessUrl } from './srt-process-url.js';
import { loadSrtAddon, SrtServer, type SrtConnection } from './srt/index.js';

/**
 * The SRT server when `srt.enable`, and its `{srt}` placeholder. Enabling it on a machine whose
 * addon was not built (no libsrt at `npm ci`) fails start-up with the key and the reason; a port
 * in use fails it when the app listens. `load` is for tests. It listens before processes start and closes after they
 * stopped, as the RTMP server.
 */
export function createSrtIngest(
  config: Config,
  deps: IngestDeps,
  load: typeof loadSrtAddon = loadSrtAddon,
): { server: SrtServer | undefined; placeholder: PlaceholderTemplate } {
  const options = config.srt;
  let server: SrtServer | undefined;
  let boundPort: number | undefined;
  if (options.enable) {
    const loaded = load();
    if ('reason' in loaded) throw new Error(`srt.enable: SRT is not available here: ${loaded.reason}`);
    const srt = new SrtServer({
      addon: loaded.addon,
      passphrase: options.passphrase,
      token: options.token,
      logger: deps.logger,
      onMedia: mediaEvents('srt', deps),
      sessions:
        deps.srtCollector === undefined
          ? undefined
          : new LiveSessions<SrtConnection>(
              deps.srtCollector,
              new IpIgnoreList(config.sessions.ip_ignorelist),
              (resource) => resource,
            ),
    });
    server = srt;
    deps.lifecycle.onListen(async () => {
      // The passphrase is not a token here: every viewer must know it too (docs/security.md).
      const { host, port } = resolveIngestAddress(
        { key: 'srt.address', address: options.address, tokenKey: 'srt.token', token: options.token },
        deps.logger,
      );
      try {
        boundPort = await srt.listen(host, port);
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        throw new Error(`srt.address: cannot listen on "${options.address}" (UDP): ${reason}`, {
          cause: error,
        });
      }
    });
    deps.lifecycle.onShutdown(() => srt.close());
  }
  return {
    server,
    placeholder: (params, section) => srtProcessUrl(options, boundPort, params, section),
  };
}
