import type { Config } from '../config/index.js';
import type { PlaceholderTemplate } from '../process/index.js';
import { IpIgnoreList, LiveSessions } from '../session/index.js';
import { mediaEvents, type IngestDeps } from './ingest-deps.js';
import { resolveIngestAddress } from './listen-address.js';
import { srtProcessUrl } from './srt-process-url.js';
import { StreamGrants } from './stream-grants.js';
import { loadSrtAddon, SrtServer, type SrtConnection } from './srt/index.js';

/** Every `srt` key but the log settings (accepted, not used). */
const SRT_KEYS = ['srt.enable', 'srt.address', 'srt.passphrase', 'srt.token'];

/**
 * The SRT server when `srt.enable`, and its `{srt}` placeholder. Enabling it on a machine whose
 * addon was not built (no libsrt at `npm ci`) fails start-up with the key and the reason; a port
 * in use fails it when the app listens. `load` is for tests. It listens before processes start and closes after they
 * stopped, as the RTMP server. A reload of `srt.*` builds it again: libsrt's listener takes the
 * passphrase and the token when it opens, so its connections end and their peers reconnect.
 */
export function createSrtIngest(
  config: Config,
  deps: IngestDeps,
  load: typeof loadSrtAddon = loadSrtAddon,
): { readonly server: SrtServer | undefined; placeholder: PlaceholderTemplate } {
  const options = config.srt;
  let server: SrtServer | undefined;
  let boundPort: number | undefined;
  const grants = new StreamGrants(() => server?.grantsChanged());
  const build = (settings: Config['srt']): SrtServer => {
    const loaded = load();
    if ('reason' in loaded) throw new Error(`srt.enable: SRT is not available here: ${loaded.reason}`);
    return new SrtServer({
      addon: loaded.addon,
      passphrase: settings.passphrase,
      token: settings.token,
      grants,
      logger: deps.logger,
      onMedia: mediaEvents('srt', deps),
      sessions:
        deps.srtCollector === undefined
          ? undefined
          : new LiveSessions<SrtConnection>(
              deps.srtCollector,
              new IpIgnoreList(() => config.sessions.ip_ignorelist),
              (resource) => resource,
              () => config.sessions.enable,
            ),
    });
  };
  const open = async (srt: SrtServer, settings: Config['srt']): Promise<number> => {
    // The passphrase is not a token here: every viewer must know it too (docs/security.md).
    const { host, port } = resolveIngestAddress(
      { key: 'srt.address', address: settings.address, tokenKey: 'srt.token', token: settings.token },
      deps.logger,
    );
    try {
      return await srt.listen(host, port);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new Error(`srt.address: cannot listen on "${settings.address}" (UDP): ${reason}`, {
        cause: error,
      });
    }
  };
  if (options.enable) {
    const srt = build(options);
    server = srt;
    deps.lifecycle.onListen(async () => {
      boundPort = await open(srt, options);
    });
  }
  deps.lifecycle.onShutdown(() => server?.close());
  deps.lifecycle.onReload({
    name: 'srt',
    keys: SRT_KEYS,
    prepare: (next) => {
      const settings = structuredClone(next.srt);
      // Built now, so that a missing addon refuses the reload; it listens at the commit, when
      // the old one has let go of its port.
      const fresh = settings.enable ? build(settings) : undefined;
      return {
        commit: async () => {
          server?.close();
          server = fresh;
          boundPort = undefined;
          if (fresh === undefined) return;
          try {
            boundPort = await open(fresh, settings);
          } catch (error) {
            deps.logger.error({ err: error }, 'srt: not listening after the reload');
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
    placeholder: (params, section, run) => {
      // An encoder run gets a token of its own for the resource it names, never `srt.token`. The
      // passphrase stays the server's: every caller must know it to encrypt (docs/security.md).
      if (run === undefined || options.token === '') {
        return srtProcessUrl(options, boundPort, params, section);
      }
      const grant = run.credential(grants, () => grants.issue());
      grant.allow(params.name ?? '{name}');
      return srtProcessUrl(options, boundPort, params, section, grant.token);
    },
  };
}
