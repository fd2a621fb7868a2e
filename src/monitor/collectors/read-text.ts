import { readFile } from 'node:fs/promises';

/** Reads a small text file; `undefined` when it does not exist (e.g. the file of an absent cgroup controller). */
export async function readOptionalText(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw error;
  }
}
