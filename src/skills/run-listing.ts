import type { SpawnFn } from '../process/index.js';

/** What one listing run gave: its stdout (bounded), or why it gave nothing. */
export interface ListingOutput {
  stdout: string;
  /** Set when the binary could not be started, exited non-zero, or ran over its time. */
  failure?: string;
}

/** Bound on one listing's stdout; ffmpeg 7's `-filters` is about 60 KiB. */
const MAX_STDOUT_BYTES = 1024 * 1024;

/**
 * Runs `<binary> -hide_banner -<option>` and collects its stdout. Killed (SIGKILL) when it runs over
 * `timeoutMs`, so a hanging binary cannot hold a reload; never rejects.
 */
export function runListing(
  spawn: SpawnFn,
  binary: string,
  option: string,
  timeoutMs: number,
): Promise<ListingOutput> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (failure?: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const stdout = Buffer.concat(chunks).toString('utf8');
      resolve(failure === undefined ? { stdout } : { stdout, failure });
    };
    let child: ReturnType<SpawnFn>;
    try {
      child = spawn(binary, ['-hide_banner', `-${option}`], { stdio: ['ignore', 'pipe', 'ignore'] });
    } catch (error) {
      resolve({ stdout: '', failure: (error as Error).message });
      return;
    }
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      settle(`-${option} ran over ${timeoutMs} ms`);
    }, timeoutMs);
    child.stdout?.on('data', (chunk: Buffer) => {
      if (size >= MAX_STDOUT_BYTES) return;
      chunks.push(chunk);
      size += chunk.length;
    });
    child.once('error', (error) => settle(error.message));
    child.once('close', (code, signal) => {
      settle(code === 0 ? undefined : `-${option} exited with ${code ?? signal ?? 'unknown'}`);
    });
  });
}
