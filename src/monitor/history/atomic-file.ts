import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { open, rename, rm, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Writes `parts` back to back as the file `path`, atomically: a temporary file beside it
 * (`.<name>.tmp`, which a tier deletes when it finds one at load), fsync, rename. Through the
 * thread pool: the history writes while the server runs (docs/history.md, The event loop and the
 * disk); its caller runs one write at a time.
 */
export async function writeFileAtomic(path: string, parts: readonly Uint8Array[]): Promise<void> {
  const temporary = temporaryOf(path);
  const handle = await open(temporary, 'w', 0o600);
  try {
    for (const part of parts) await writeAllTo(handle, part);
    await handle.sync();
  } catch (error) {
    await handle.close();
    await rm(temporary, { force: true });
    throw error;
  }
  await handle.close();
  await rename(temporary, path);
}

/** `writeFileAtomic` for start-up only (loading a tier, before the server listens). */
export function writeFileAtomicSync(path: string, parts: readonly Uint8Array[]): void {
  const temporary = temporaryOf(path);
  const fd = openSync(temporary, 'w', 0o600);
  try {
    for (const part of parts) {
      let written = 0;
      while (written < part.length) written += writeSync(fd, part, written);
    }
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
export async function writeAllTo(handle: FileHandle, bytes: Uint8Array): Promise<void> {
  let written = 0;
  while (written < bytes.length) written += (await handle.write(bytes, written)).bytesWritten;
}

function temporaryOf(path: string): string {
  return join(dirname(path), `.${basename(path)}.tmp`);
}
