import type { ChildProcess, StdioOptions } from 'node:child_process';
import { lstatSync, readFileSync, realpathSync, type Stats } from 'node:fs';
import { constants } from 'node:os';
import { sep } from 'node:path';
import type { Readable } from 'node:stream';
import { isExecutable } from './executable.js';
import { markEncoderWrapper, type EncoderWrapper, type SpawnFn } from './spawn.js';

/** What the encoder may write and must not see, asked at every start (directories come and go). */
export interface SandboxPlaces {
  /** Files and directories bound writable (the disk directory, `ffmpeg.access.output.paths`). */
  writable: () => readonly string[];
  /** Files and directories bound read-only: `ffmpeg.access.input.paths` (they may be in `/tmp`). */
  readable: () => readonly string[];
  /** Files and directories hidden (db, metrics history, config file, TLS key). */
  hidden: () => readonly string[];
  /** Give the encoder the host's `/dev` (devices allowed by `ffmpeg.access.devices`). */
  hostDevices: boolean;
}

/** The option whose value is the server's own `-vstats` FIFO (the policy forbids it to users). */
const VSTATS_OPTION = '-vstats_file';

/**
 * bubblewrap's arguments for one encoder: everything read-only, a private `/dev`, `/proc` and
 * `/tmp`, the readable places bound again (`/tmp` covers them otherwise), the writable ones bound
 * read-write, the hidden ones covered (an empty read-only tmpfs, or `/dev/null` over a file), the
 * network as it is. (The server's `CORE_*` variables are gone before bwrap starts, for every
 * encoder, sandboxed or not: server-env.ts.)
 * `--unshare-pid` gives the encoder its own `/proc`, so it cannot reach the server's files
 * through `/proc/<server pid>/root` or `/fd`; `--as-pid-1` makes the encoder that namespace's
 * pid 1 (no bwrap init between), so the pid `--info-fd` reports is the encoder's. As pid 1 it
 * still gets the signals it handles (ffmpeg handles SIGINT and SIGTERM), and SIGKILL.
 */
export function sandboxArgs(
  places: SandboxPlaces,
  infoFd: number,
  encoder: { command: string; args: readonly string[]; cwd?: string },
): string[] {
  const mounts: { path: string; args: string[]; hide: boolean }[] = [];
  const writable = realPaths(places.writable());
  for (const path of realPaths(places.readable())) {
    if (!writable.has(path)) mounts.push({ path, args: ['--ro-bind', path, path], hide: false });
  }
  for (const path of writable) mounts.push({ path, args: ['--bind', path, path], hide: false });
  const fifo = vstatsFifo(encoder.args);
  if (fifo !== undefined) mounts.push({ path: fifo, args: ['--bind', fifo, fifo], hide: false });
  const hiddenDirs: string[] = [];
  for (const place of places.hidden().flatMap(existing)) {
    if (place.stats.isDirectory()) hiddenDirs.push(place.path);
    mounts.push({
      path: place.path,
      args: place.stats.isDirectory() ? ['--tmpfs', place.path] : ['--ro-bind', '/dev/null', place.path],
      hide: true,
    });
  }
  // Outer places first, so that one inside another is mounted over it (a disk directory inside
  // the db directory stays usable, a config file inside the disk directory stays hidden); at the
  // same place, hiding wins.
  mounts.sort((a, b) => depth(a.path) - depth(b.path) || Number(a.hide) - Number(b.hide));
  return [
    '--die-with-parent',
    '--unshare-pid',
    '--unshare-ipc',
    '--as-pid-1',
    '--ro-bind',
    '/',
    '/',
    ...(places.hostDevices ? ['--dev-bind', '/dev', '/dev'] : ['--dev', '/dev']),
    '--proc',
    '/proc',
    '--tmpfs',
    '/tmp',
    ...mounts.flatMap((mount) => mount.args),
    // The covering tmpfs would take writes (into memory): read-only after the mounts inside it.
    ...hiddenDirs.flatMap((dir) => ['--remount-ro', dir]),
    ...(encoder.cwd !== undefined ? ['--chdir', encoder.cwd] : []),
    '--info-fd',
    String(infoFd),
    '--',
    encoder.command,
    ...encoder.args,
  ];
}

/**
 * Starts every encoder inside bubblewrap (`bwrap`), which forks it: the returned child is bwrap,
 * marked with the encoder's pid (read from `--info-fd`) and its exit (see `EncoderWrapper`).
 * A command that cannot run is spawned directly, so that it fails as it always did (ENOENT).
 */
export function withSandbox(spawn: SpawnFn, bwrap: string, places: SandboxPlaces): SpawnFn {
  return (command, args, options) => {
    if (!isExecutable(command, options.env?.PATH ?? process.env.PATH ?? '')) {
      return spawn(command, args, options);
    }
    const stdio = withExtraPipe(options.stdio);
    const infoFd = stdio.length - 1;
    const cwd = typeof options.cwd === 'string' ? options.cwd : undefined;
    const child = spawn(bwrap, sandboxArgs(places, infoFd, { command, args, cwd }), {
      ...options,
      stdio,
    });
    markEncoderWrapper(child, {
      encoderPid: readChildPid(child.stdio[infoFd] as Readable | null | undefined),
      signal: signalPid1,
      exitOf: exitThroughWrapper,
    });
    return child;
  };
}

/**
 * Whether bubblewrap confines a command here, with the places of real runs: undefined when it
 * does, else why not (bwrap missing, no user namespaces, a place it cannot mount). Runs `true`.
 */
export function probeSandbox(
  spawn: SpawnFn,
  bwrap: string,
  places: SandboxPlaces,
  timeoutMs = 5000,
): Promise<string | undefined> {
  return new Promise((resolve) => {
    let done = false;
    let stderr = '';
    const finish = (problem: string | undefined): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(problem);
    };
    let child: ChildProcess;
    try {
      child = spawn(bwrap, sandboxArgs(places, 3, { command: 'true', args: [] }), {
        stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
      });
    } catch (error) {
      finish(`${bwrap}: ${(error as Error).message}`);
      return;
    }
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      finish(`${bwrap} did not finish within ${timeoutMs} ms`);
    }, timeoutMs);
    child.stderr?.on('data', (chunk: Buffer) => {
      if (stderr.length < 2048) stderr += chunk.toString('utf8');
    });
    child.once('error', (error) => finish(`${bwrap}: ${error.message}`));
    child.once('close', (code) =>
      finish(code === 0 ? undefined : `${bwrap} exited with code ${code}: ${stderr.trim() || 'no message'}`),
    );
  });
}

/**
 * A signal for the sandboxed encoder (alive while bwrap is: bwrap reaps it, then exits). As pid 1
 * of its namespace it drops a signal left at its default action, where a plain child would die
 * of it (ffmpeg stopped before it set its SIGINT handler): then it gets SIGKILL, the same end.
 * A signal it catches or ignores (`SigCgt` / `SigIgn` of /proc/<pid>/status) is sent as it is.
 */
function signalPid1(pid: number, signal: NodeJS.Signals): void {
  if (IGNORED_BY_DEFAULT.has(signal)) {
    sendQuietly(pid, signal);
    return;
  }
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return; // Gone: its exit is on the way.
  }
  const bit = BigInt(constants.signals[signal] - 1);
  const mask = (field: string): bigint =>
    BigInt(`0x${new RegExp(`^${field}:\\s*([0-9a-f]+)$`, 'm').exec(status)?.[1] ?? '0'}`);
  const disposed = ((mask('SigCgt') | mask('SigIgn')) >> bit) & 1n;
  sendQuietly(pid, disposed === 1n ? signal : 'SIGKILL');
}

/** Signals whose default action is not to end the process: never turned into SIGKILL. */
const IGNORED_BY_DEFAULT: ReadonlySet<NodeJS.Signals> = new Set(['SIGCHLD', 'SIGCONT', 'SIGURG', 'SIGWINCH']);

function sendQuietly(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Gone meanwhile: its exit is on the way.
  }
}

/** The encoder's exit from bwrap's: bwrap exits with 128 + N when its child died of signal N. */
function exitThroughWrapper(
  code: number | null,
  signal: NodeJS.Signals | null,
): { code: number | null; signal: NodeJS.Signals | null } {
  if (signal !== null || code === null || code <= 128) return { code, signal };
  const name = Object.entries(constants.signals).find(([, number]) => number === code - 128)?.[0];
  return name === undefined ? { code, signal } : { code: null, signal: name as NodeJS.Signals };
}

/** The `child-pid` of bwrap's `--info-fd` JSON; undefined when the pipe ends without one. */
function readChildPid(stream: Readable | null | undefined): EncoderWrapper['encoderPid'] {
  return new Promise((resolve) => {
    if (stream === null || stream === undefined) {
      resolve(undefined);
      return;
    }
    let text = '';
    const settle = (): void => {
      const match = /"child-pid"\s*:\s*(\d+)/.exec(text);
      resolve(match === null ? undefined : Number(match[1]));
    };
    stream.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      // The object is complete once it closes; bwrap closes the pipe right after anyway.
      if (text.includes('}')) settle();
    });
    stream.once('close', settle);
    stream.on('error', () => undefined);
  });
}

/** The caller's stdio with one more pipe at the end (bwrap's `--info-fd`). */
function withExtraPipe(stdio: StdioOptions | undefined): StdioList {
  if (stdio === undefined) return ['pipe', 'pipe', 'pipe', 'pipe'];
  if (typeof stdio === 'string') return [stdio, stdio, stdio, 'pipe'];
  return [...stdio, 'pipe'];
}

type StdioList = Exclude<StdioOptions, string>;

/** The server's `-vstats` FIFO in the command, when it is one (a regular file is never bound). */
function vstatsFifo(args: readonly string[]): string | undefined {
  const index = args.lastIndexOf(VSTATS_OPTION);
  const path = index === -1 ? undefined : args[index + 1];
  if (path === undefined) return undefined;
  try {
    return lstatSync(path).isFIFO() ? path : undefined;
  } catch {
    return undefined;
  }
}

/** The real paths of the places that exist. */
function realPaths(places: readonly string[]): Set<string> {
  return new Set(places.flatMap(existing).map((place) => place.path));
}

/** `place` as its real path with its type, or nothing when it does not exist (yet). */
function existing(place: string): { path: string; stats: Stats }[] {
  try {
    const path = realpathSync(place);
    return [{ path, stats: lstatSync(path) }];
  } catch {
    return [];
  }
}

function depth(path: string): number {
  return path.split(sep).filter((part) => part !== '').length;
}
