import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/**
 * Writes `parts` back to back as the file `path`, atomically: a temporary file beside it
 * (`.<name>.tmp`, which a tier deletes when it finds one at load), fsync, rename. Synchronous: the
 * history's writes are small and run on the collection tick, which must not interleave with them.
 */
export function writeFileAtomicSync(path: string, parts: readonly Uint8Array[]): void {
  const temporary = join(dirname(path), `.${basename(path)}.tmp`);
  const fd = openSync(temporary, 'w', 0o600);
  try {
    for (const part of parts) writeAll(fd, part);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    rmSync(temporary, { force: true });
    throw error;
  }
  closeSync(fd);
  renameSync(temporary, path);
}

/** Writes all of `bytes` at the file's position (a write may take fewer bytes than asked). */
export function writeAll(fd: number, bytes: Uint8Array): void {
  let written = 0;
  while (written < bytes.length) written += writeSync(fd, bytes, written);
}
