import { randomBytes } from 'node:crypto';
import { readdir, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Temporary files and directories carry the pid of the server that made them, so that a server
 * starting later can tell what a crashed one left behind (issue 10 item 9: `.db.json.*.tmp` files
 * and `/tmp/streamcore-vstats-*` directories piled up after crashes) from what a live one uses.
 */
export function ownedName(prefix: string, suffix = ''): string {
  return `${prefix}${process.pid}-${randomHex()}${suffix}`;
}

/**
 * Removes the atomic-write temporaries of `file` (`.<name>.<pid>-<hex>.tmp`) whose server is gone.
 * Ones without a pid come from a version that did not record it, and are removed too: such a
 * temporary lives only while a write is under way, so at start-up it is a crash's leftover.
 * Returns the names removed.
 */
export async function removeStaleTemporaries(file: string): Promise<string[]> {
  const pattern = new RegExp(`^\\.${escapeRegExp(basename(file))}\\.(?:(\\d+)-)?[0-9a-f]+\\.tmp$`);
  return removeStale(dirname(file), pattern, false);
}

/**
 * Removes directories `<parent>/<prefix><pid>-<random>` whose server is gone. Ones without a pid
 * are left alone: a running server of an older version may still be using them.
 */
export async function removeStaleDirectories(parent: string, prefix: string): Promise<string[]> {
  const pattern = new RegExp(`^${escapeRegExp(prefix)}(?:(\\d+)-)[A-Za-z0-9]+$`);
  return removeStale(parent, pattern, true);
}

async function removeStale(dir: string, pattern: RegExp, recursive: boolean): Promise<string[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const removed: string[] = [];
  for (const name of names) {
    const match = pattern.exec(name);
    if (match === null) continue;
    const pid = match[1] === undefined ? undefined : Number(match[1]);
    if (pid !== undefined && (pid === process.pid || isAlive(pid))) continue;
    try {
      await rm(join(dir, name), { recursive, force: true });
      removed.push(name);
    } catch {
      // Another server may be removing it at the same moment; it is gone either way or next time.
    }
  }
  return removed;
}

/** Whether a process with this pid exists (EPERM: it does, and belongs to someone else). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function randomHex(): string {
  return randomBytes(6).toString('hex');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
