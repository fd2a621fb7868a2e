import { mkdirSync, statSync } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

/**
 * `mkdir -p` that cannot spin. Node 20's `mkdir(dir, { recursive: true })` retries for ever when
 * the kernel answers ENOENT although the parent exists, which procfs and sysfs do (`/proc/x/y`):
 * start-up or shutdown then burned a core without end (issue 10 item 9). This walks up to the
 * first directory that exists and creates each missing one below it once; any failure is thrown
 * with the path and the kernel's code.
 */
export async function makeDirectory(dir: string, mode?: number): Promise<void> {
  const missing: string[] = [];
  for (let current = resolve(dir); ; current = dirname(current)) {
    const found = await stat(current).then(
      (stats) => stats,
      (error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error;
        return undefined;
      },
    );
    if (found !== undefined) {
      if (!found.isDirectory()) throw notADirectory(current);
      break;
    }
    missing.push(current);
    if (dirname(current) === current) break;
  }
  for (const path of missing.reverse()) {
    await mkdir(path, { mode }).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw cannotCreate(path, error);
    });
  }
}

/** `makeDirectory` for the few places that must be synchronous (a constructor). */
export function makeDirectorySync(dir: string, mode?: number): void {
  const missing: string[] = [];
  for (let current = resolve(dir); ; current = dirname(current)) {
    let found;
    try {
      found = statSync(current);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    if (found !== undefined) {
      if (!found.isDirectory()) throw notADirectory(current);
      break;
    }
    missing.push(current);
    if (dirname(current) === current) break;
  }
  for (const path of missing.reverse()) {
    try {
      mkdirSync(path, { mode });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST')
        throw cannotCreate(path, error as NodeJS.ErrnoException);
    }
  }
}

function notADirectory(path: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`ENOTDIR: ${path} exists and is not a directory`), {
    code: 'ENOTDIR',
    path,
  });
}

function cannotCreate(path: string, cause: NodeJS.ErrnoException): NodeJS.ErrnoException {
  return Object.assign(new Error(`${cause.code ?? 'error'}: cannot create directory ${path}`), {
    code: cause.code,
    path,
  });
}
