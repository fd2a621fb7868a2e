import type { SpawnFn } from '../process/index.js';

export interface ProbeRun {
  /** ffmpeg's stderr, line by line (bounded: the first `maxLines`, each cut at 4 KiB). */
  lines: string[];
  /** Set when the run was killed for running over its time. */
  timedOut: boolean;
}

const MAX_LINE_CHARS = 4096;

/**
 * Runs `<binary> <args>` (inputs and no output: ffmpeg opens the inputs, prints what it found and
 * exits) and collects its stderr. Killed with SIGKILL after `timeoutMs`; never rejects.
 */
export function runProbe(
  spawn: SpawnFn,
  binary: string,
  args: readonly string[],
  options: { timeoutMs: number; maxLines: number },
): Promise<ProbeRun> {
  return new Promise((resolve) => {
    const lines: string[] = [];
    let partial = '';
    let timedOut = false;
    let settled = false;
    const push = (line: string): void => {
      const text = line.replace(/\r$/, '');
      if (text !== '' && lines.length < options.maxLines) lines.push(text.slice(0, MAX_LINE_CHARS));
    };
    const settle = (failure?: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      push(partial);
      if (failure !== undefined) lines.push(failure);
      resolve({ lines, timedOut });
    };
    let child: ReturnType<SpawnFn>;
    try {
      child = spawn(binary, ['-nostdin', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    } catch (error) {
      resolve({ lines: [(error as Error).message], timedOut: false });
      return;
    }
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, options.timeoutMs);
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      // Past the bound nothing is kept, but the pipe is still drained so ffmpeg can exit.
      if (lines.length >= options.maxLines) return;
      const parts = (partial + chunk).split('\n');
      partial = (parts.pop() ?? '').slice(0, MAX_LINE_CHARS);
      for (const part of parts) push(part);
    });
    child.once('error', (error) => settle(`ffmpeg could not be started: ${error.message}`));
    child.once('close', () => settle(timedOut ? `probe stopped after ${options.timeoutMs} ms` : undefined));
  });
}
