import type { ChildProcess, SpawnOptions } from 'node:child_process';

/** `child_process.spawn`, injectable (STYLE §4). */
export type SpawnFn = (command: string, args: readonly string[], options: SpawnOptions) => ChildProcess;

/**
 * What a spawn that starts the encoder as a grandchild tells about the child it returns (the
 * sandbox: `bwrap` forks the encoder and stays its parent). The child's stdio are the encoder's,
 * and it exits when the encoder does; but its pid is not the encoder's.
 */
export interface EncoderWrapper {
  /** The encoder's own pid once the wrapper reports it; undefined when it never started one. */
  readonly encoderPid: Promise<number | undefined>;
  /** The encoder's exit, read from the wrapper's (bwrap reports a signal as 128 + its number). */
  /**
   * Sends a signal other than SIGKILL to the encoder so that it acts as on a plain child (the
   * wrapper does not pass signals on, and the sandbox's encoder is pid 1 of its namespace).
   */
  signal(pid: number, signal: NodeJS.Signals): void;
  exitOf(
    code: number | null,
    signal: NodeJS.Signals | null,
  ): { code: number | null; signal: NodeJS.Signals | null };
}

const wrappers = new WeakMap<ChildProcess, EncoderWrapper>();

/** Marks `child` as a wrapper around the encoder (called by the spawn that made it). */
export function markEncoderWrapper(child: ChildProcess, wrapper: EncoderWrapper): void {
  wrappers.set(child, wrapper);
}

/** The wrapper facts of `child`, undefined when the child is the encoder itself. */
export function encoderWrapperOf(child: ChildProcess): EncoderWrapper | undefined {
  return wrappers.get(child);
}

/** The encoder's pid: the child's own, or the one its wrapper reports. */
export function encoderPidOf(child: ChildProcess): Promise<number | undefined> {
  return wrappers.get(child)?.encoderPid ?? Promise.resolve(child.pid);
}
