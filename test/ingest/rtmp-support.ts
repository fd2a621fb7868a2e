import { spawn, type ChildProcess } from 'node:child_process';
import { pino } from 'pino';
import { RtmpServer, type RtmpServerOptions } from '../../src/ingest/rtmp/index.js';

export interface Ffmpeg {
  child: ChildProcess;
  /** Resolves with the exit code and stderr when ffmpeg ends. */
  done: Promise<{ code: number | null; stderr: string }>;
}

export function ffmpeg(args: string[]): Ffmpeg {
  const child = spawn('ffmpeg', ['-hide_banner', '-nostdin', '-loglevel', 'error', ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (data: Buffer) => (stderr += data.toString()));
  const done = new Promise<{ code: number | null; stderr: string }>((resolve) =>
    child.on('close', (code) => resolve({ code, stderr })),
  );
  return { child, done };
}

/**
 * A publisher of `seconds` of 25 fps test video (keyframe every second) and a sine tone, in real
 * time, muxed as `format` to `url`; with `recordTo`, the same packets also go to that file (ffmpeg's
 * tee muxer). Shared by the RTMP (FLV) and SRT (MPEG-TS) tests.
 */
export function publishLive(
  format: 'flv' | 'mpegts',
  url: string,
  seconds: number,
  recordTo?: string,
): Ffmpeg {
  const output =
    recordTo === undefined
      ? ['-f', format, url]
      : ['-map', '0:v', '-map', '1:a', '-f', 'tee', `[f=${format}]${url}|[f=${format}]${recordTo}`];
  return ffmpeg([
    '-re',
    ...['-f', 'lavfi', '-i', `testsrc2=size=320x240:rate=25:duration=${seconds}`],
    ...['-f', 'lavfi', '-i', `sine=duration=${seconds}`],
    ...['-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '25'],
    ...['-c:a', 'aac', '-b:a', '64k'],
    ...output,
  ]);
}

/** An RTMP publisher (FLV) of `publishLive`. */
export function publish(url: string, seconds: number, recordTo?: string): Ffmpeg {
  return publishLive('flv', url, seconds, recordTo);
}

/** A player that reads `seconds` of `url` and discards it: it exits 0 only if the stream played. */
export function play(url: string, seconds: number): Ffmpeg {
  return ffmpeg(['-i', url, '-t', String(seconds), '-f', 'null', '-']);
}

export async function startRtmp(
  options: Partial<RtmpServerOptions> = {},
): Promise<{ server: RtmpServer; port: number }> {
  const server = new RtmpServer({
    app: '/',
    token: '',
    logger: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
    now: Date.now,
    ...options,
  });
  const { port } = await server.listen('127.0.0.1', 0);
  return { server, port };
}

export async function waitFor(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Video packets of a recorded file: presentation time (s) and whether each is a keyframe. */
export async function videoPackets(file: string): Promise<{ pts: number; key: boolean }[]> {
  const child = spawn('ffprobe', [
    '-v',
    'error',
    '-select_streams',
    'v:0',
    '-show_entries',
    'packet=pts_time,flags',
    '-of',
    'csv=p=0',
    file,
  ]);
  let out = '';
  child.stdout.on('data', (data: Buffer) => (out += data.toString()));
  await new Promise((resolve) => child.on('close', resolve));
  return out
    .trim()
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const [pts = '', flags = ''] = line.split(',');
      return { pts: Number(pts), key: flags.includes('K') };
    });
}
