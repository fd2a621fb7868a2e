import type { SpawnFn } from './spawn.js';
import { PROGRESS_FD } from './run.js';

/** What the configured encoder binary turned out to be. */
export interface EncoderInfo {
  /** The version ffmpeg reports (`5.1.9-0+deb12u1`), or `''` when it is not an ffmpeg. */
  version: string;
  /** True when the server can ask it for machine-readable progress (ffmpeg 4.4 and newer). */
  progressStreams: boolean;
}

/** Parses the first line of `ffmpeg -version`. Git builds (`N-…`, `git-…`) count as new. */
export function parseVersionLine(text: string): EncoderInfo {
  const match = /^ffmpeg version (\S+)/m.exec(text);
  if (match === null) return { version: '', progressStreams: false };
  const version = match[1] as string;
  const numbers = /^n?(\d+)\.(\d+)/.exec(version);
  if (numbers === null) return { version, progressStreams: /^(N-|git-)/.test(version) };
  const major = Number(numbers[1]);
  const minor = Number(numbers[2]);
  return { version, progressStreams: major > 4 || (major === 4 && minor >= 4) };
}

/** Runs `<binary> -version` once (bounded by `timeoutMs`) to learn what it supports. */
export function probeEncoder(binary: string, spawn: SpawnFn, timeoutMs = 5000): Promise<EncoderInfo> {
  return new Promise((resolve) => {
    let output = '';
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(parseVersionLine(output));
    };
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      finish();
    }, timeoutMs);
    const child = spawn(binary, ['-hide_banner', '-version'], { stdio: ['ignore', 'pipe', 'ignore'] });
    child.stdout?.on('data', (chunk: Buffer) => {
      if (output.length < 4096) output += chunk.toString('utf8');
    });
    child.once('error', finish);
    child.once('close', finish);
  });
}

/**
 * Options the server puts in front of every command line (docs/processes.md#process-config "options it needs for
 * itself"): no terminal interaction, the `-progress` key=value stream on fd 3 once per second,
 * and the per-frame video statistics into `vstatsPath` (a FIFO the server reads) when there is
 * one. An encoder that is not a recent ffmpeg gets none, and its progress is read from stderr.
 */
export function serverOptions(info: EncoderInfo, vstatsPath?: string): string[] {
  if (!info.progressStreams) return info.version === '' ? [] : ['-nostdin'];
  const options = ['-nostdin', '-progress', `pipe:${PROGRESS_FD}`, '-stats_period', '1'];
  if (vstatsPath !== undefined) options.push('-vstats_file', vstatsPath, '-vstats_version', '2');
  return options;
}
