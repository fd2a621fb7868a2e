import type { StdioOptions } from 'node:child_process';
import { readFileSync, realpathSync } from 'node:fs';
import { constants } from 'node:os';
import type { Readable } from 'node:stream';
import { findExecutable } from './executable.js';
import { sandboxArgs, type SandboxPlaces } from './sandbox-args.js';
import { markEncoderWrapper, type EncoderWrapper, type SpawnFn } from './spawn.js';

/**
 * Starts every encoder inside bubblewrap (`bwrap`), which forks it: the returned child is bwrap,
 * marked with the encoder's pid (read from `--info-fd`) and its exit (see `EncoderWrapper`).
 * A command that cannot run is spawned directly, so that it fails as it always did (ENOENT).
 * The encoder runs by its real path (found through PATH, links resolved): the sandbox shows that
 * file's place, not necessarily the directories of the links that lead to it.
 */
export function withSandbox(spawn: SpawnFn, bwrap: string, places: SandboxPlaces): SpawnFn {
  return (command, args, options) => {
    const program = realProgram(command, options.env?.PATH ?? process.env.PATH ?? '');
    if (program === undefined) return spawn(command, args, options);
    const stdio = withExtraPipe(options.stdio);
    const infoFd = stdio.length - 1;
    const cwd = typeof options.cwd === 'string' ? options.cwd : undefined;
    const child = spawn(bwrap, sandboxArgs(places, infoFd, { command: program, args, cwd }), {
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

/** The real path of the file execvp would run for `command`; undefined when there is none. */
export function realProgram(command: string, path: string): string | undefined {
  const found = findExecutable(command, path);
  if (found === undefined) return undefined;
  try {
    return realpathSync(found);
  } catch {
    return undefined;
  }
}
