import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { LiveSessions } from '../../src/session/live-sessions.js';
import { loadSrtAddon, SrtServer, type SrtAddon, type SrtConnection } from '../../src/ingest/srt/index.js';
import { type SessionCollector, IpIgnoreList } from '../../src/session/index.js';
import { ffmpeg, publishLive, type Ffmpeg } from './rtmp-support.js';

const loaded = loadSrtAddon();

/**
 * Why SRT tests cannot run here (the addon was not built: no libsrt at `npm ci`), shown as the
 * skip reason; undefined where they run. CI installs libsrt, so there they run.
 */
export const SRT_SKIP: string | undefined = 'reason' in loaded ? loaded.reason : undefined;

export function srtAddon(): SrtAddon {
  if ('reason' in loaded) throw new Error(loaded.reason);
  return loaded.addon;
}

export async function startSrt(
  options: { passphrase?: string; token?: string; collector?: SessionCollector } = {},
): Promise<{ server: SrtServer; port: number; logs: string[] }> {
  // The server's log messages, to see why a caller was refused.
  const logs: string[] = [];
  const server = new SrtServer({
    addon: srtAddon(),
    passphrase: options.passphrase ?? '',
    token: options.token ?? '',
    logger: pino(
      { level: 'info' },
      { write: (line: string) => logs.push((JSON.parse(line) as { msg: string }).msg) },
    ),
    sessions:
      options.collector === undefined
        ? undefined
        : new LiveSessions<SrtConnection>(options.collector, new IpIgnoreList([]), (resource) => resource),
  });
  const port = await server.listen('127.0.0.1', 0);
  return { server, port, logs };
}

/** `srt://` caller URL for a stream id (written raw, as ffmpeg reads it) and an optional passphrase. */
export function srtUrl(port: number, streamId: string, passphrase = ''): string {
  let url = `srt://127.0.0.1:${port}?mode=caller&transtype=live&latency=120000&streamid=${streamId}`;
  if (passphrase !== '') url += `&passphrase=${passphrase}`;
  return url;
}

/** An SRT publisher (MPEG-TS) of `publishLive`. */
export function publishSrt(url: string, seconds: number, recordTo?: string): Ffmpeg {
  return publishLive('mpegts', url, seconds, recordTo);
}

/** A player that copies what it receives into an MPEG-TS file, timestamps untouched. */
export function playSrt(url: string, file: string): Ffmpeg {
  return ffmpeg(['-copyts', '-i', url, '-map', '0', '-c', 'copy', '-f', 'mpegts', '-y', file]);
}

/** The sizes of a file's video packets, in order. */
export async function videoFrameSizes(file: string): Promise<number[]> {
  const { stdout } = await promisify(execFile)('ffprobe', [
    '-v',
    'error',
    '-select_streams',
    'v:0',
    '-show_entries',
    'packet=size',
    '-of',
    'csv=p=0',
    file,
  ]);
  return stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => Number.parseInt(line, 10));
}
