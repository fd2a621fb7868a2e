import { open, rename, rm } from 'node:fs/promises';
import { dirname, join, basename } from 'node:path';
import { ownedName } from './leftovers.js';
import { makeDirectory } from './make-dir.js';

/**
 * Replaces `file` with `data` so that a reader (or a crash) sees either the old or the new content,
 * never a truncated mix: write a temporary file beside it, fsync it, rename it over the target,
 * then fsync the directory so the rename itself is durable.
 */
export async function writeFileAtomic(file: string, data: string | Uint8Array, mode = 0o600): Promise<void> {
  const dir = dirname(file);
  await makeDirectory(dir);
  // Named with this server's pid: a later start removes what a crash left (leftovers.ts).
  const temporary = join(dir, ownedName(`.${basename(file)}.`, '.tmp'));
  try {
    const handle = await open(temporary, 'w', mode);
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
  await syncDirectory(dir);
}

async function syncDirectory(dir: string): Promise<void> {
  try {
    const handle = await open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Some filesystems refuse fsync on a directory; the rename has happened either way.
  }
}

/** Serialises writes of one file: each call waits for the previous one, so the last state wins. */
export class SerialFileWriter {
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly file: string,
    private readonly mode = 0o600,
  ) {}

  write(data: string | Uint8Array): Promise<void> {
    const next = this.chain.then(() => writeFileAtomic(this.file, data, this.mode));
    // Keep the chain alive after a failure; the caller of this write still sees the rejection.
    this.chain = next.catch(() => undefined);
    return next;
  }
}
