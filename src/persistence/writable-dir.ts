import { randomBytes } from 'node:crypto';
import { open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { makeDirectory } from './make-dir.js';

/** Raised at start-up when a directory the server must write to cannot be written. */
export class UnwritableDirError extends Error {
  constructor(
    readonly key: string,
    readonly dir: string,
    reason: string,
  ) {
    super(
      `${key}: ${dir} is not writable (${reason}); the server stops rather than lose what it cannot save`,
    );
    this.name = 'UnwritableDirError';
  }
}

/**
 * Makes `dir` if needed and proves it takes a file: create, write, sync and remove a probe file.
 * Mode bits do not stop root, so only a real write tells (read-only mounts, immutable
 * directories, a file where the directory should be, a full disk). `key` names the config key in
 * the error.
 */
export async function assertWritableDir(key: string, dir: string): Promise<void> {
  const probe = join(dir, `.streamcore-write-probe-${randomBytes(6).toString('hex')}`);
  try {
    await makeDirectory(dir);
    const handle = await open(probe, 'wx', 0o600);
    try {
      await handle.writeFile('probe');
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch (error) {
    throw new UnwritableDirError(key, dir, (error as NodeJS.ErrnoException).code ?? (error as Error).message);
  } finally {
    await rm(probe, { force: true }).catch(() => undefined);
  }
}
