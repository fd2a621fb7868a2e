import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { SrtStatistics } from './contract.js';

/** What the addon reports from its threads (native/srt/src/listener.h). */
export interface NativeEvent {
  type: 'accepted' | 'refused' | 'closed';
  /** The connection's SRT socket id; -1 for refusals. */
  socket: number;
  /** `publish` or `request` (accepted, refused); what the caller asked for. */
  mode: string;
  resource: string;
  streamId: string;
  /** `ip:port`, `[ip]:port` for IPv6. */
  peer: string;
  reason: string;
  /** SRT rejection code (1400 bad request, 1401 unauthorized, 1404, 1405, 1409, …). */
  code: number;
  /** For `closed`: the connection's byte totals at the close. */
  bytesRead: number;
  bytesWritten: number;
}

export interface NativeListenerOptions {
  /** A numeric address, '' for every interface (dual stack). */
  host: string;
  port: number;
  passphrase: string;
  token: string;
  maxConnections?: number;
}

export interface NativeListener {
  port(): number;
  closeSocket(socket: number, reason: string): void;
  /** libsrt's statistics of one of this listener's connections, undefined when it is gone. */
  stats(socket: number): SrtStatistics | undefined;
  /** Encoder runs' own tokens and the resources each opens, replacing the ones given before. */
  setGrants(grants: ReadonlyArray<{ token: string; resources: readonly string[] }>): void;
  /** Stops the relay thread and closes every connection; no events follow. */
  close(): void;
}

export interface SrtAddon {
  Listener: new (options: NativeListenerOptions, onEvent: (event: NativeEvent) => void) => NativeListener;
  parseStreamId: (streamId: string) => { resource: string; mode: string; token: string };
  libsrtVersion: string;
}

/** The built addon, relative to this file in src/ and in dist/ alike. */
const ADDON_PATH = fileURLToPath(
  new URL('../../../native/srt/build/Release/srt_ingest.node', import.meta.url),
);

let loaded: { addon: SrtAddon } | { reason: string } | undefined;

/**
 * The SRT addon, or why it is not there (libsrt missing when `npm ci` ran, or a build for another
 * Node). Loaded once, on first use, so a server without SRT never touches it. `path` is for tests.
 */
export function loadSrtAddon(path = ADDON_PATH): { addon: SrtAddon } | { reason: string } {
  if (path === ADDON_PATH && loaded !== undefined) return loaded;
  let result: { addon: SrtAddon } | { reason: string };
  if (!existsSync(path)) {
    result = {
      reason:
        'the SRT addon is not built (libsrt was missing at npm install: install libsrt-openssl-dev, ' +
        'then run `npm run build:srt`)',
    };
  } else {
    try {
      result = { addon: createRequire(import.meta.url)(path) as SrtAddon };
    } catch (error) {
      result = { reason: `the SRT addon does not load: ${(error as Error).message}` };
    }
  }
  if (path === ADDON_PATH) loaded = result;
  return result;
}
