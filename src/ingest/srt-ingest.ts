import type { Config } from '../config/index.js';
import { parseListenAddress } from '../config/index.js';
import type { PlaceholderTemplate } from '../process/index.js';
import { IpIgnoreList, LiveSessions } from '../session/index.js';
import type { IngestDeps } from './index.js';
import { srtPlaceholder } from './srt-placeholder.js';
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
      const parsed = parseListenAddress(options.address);
      if (parsed === undefined) throw new Error(`srt.address: invalid address "${options.address}"`);
      try {
        boundPort = await srt.listen(parsed.host, parsed.port);
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
    placeholder: (params, section) => srtPlaceholder(options, boundPort, params, section),
  };
}
