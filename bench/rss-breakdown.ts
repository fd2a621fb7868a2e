/**
 * Where a process's RSS is, from /proc/<pid>/smaps (Linux, glibc): the resident part of each
 * mapping, sorted into
 * - files: the node binary and shared libraries (mapped code and data, shared with other processes);
 * - main malloc arena: `[heap]`, glibc's arena of the main thread (Buffers' memory, V8's malloc'd
 *   bookkeeping, most of Node's C++ allocations);
 * - thread malloc arenas: glibc's 64 MiB-aligned heaps for other threads (libuv's pool, V8's
 *   compiler and GC helpers);
 * - executable anonymous: JIT code;
 * - other anonymous: V8's heap pages, large malloc'd blocks (mmap'd), thread stacks.
 * A heuristic: an arena is recognised by its alignment and size, as glibc makes them.
 */
import { readFileSync } from 'node:fs';

const THREAD_ARENA_BYTES = 64 << 20;

export interface RssBreakdown {
  files: number;
  mainArena: number;
  threadArenas: number;
  executable: number;
  otherAnonymous: number;
}

interface Mapping {
  start: bigint;
  end: bigint;
  perms: string;
  path: string;
  rss: number;
}

function mappings(pid: number): Mapping[] {
  const list: Mapping[] = [];
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head !== null) {
      list.push({
        start: BigInt(`0x${head[1]}`),
        end: BigInt(`0x${head[2]}`),
        perms: head[3]!,
        path: head[4]!.trim(),
        rss: 0,
      });
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss !== null && list.length > 0) list.at(-1)!.rss = Number(rss[1]) * 1024;
  }
  return list;
}

/** Bytes resident per kind (see the module comment). */
export function rssBreakdown(pid: number): RssBreakdown {
  const result: RssBreakdown = { files: 0, mainArena: 0, threadArenas: 0, executable: 0, otherAnonymous: 0 };
  const list = mappings(pid);
  list.forEach((mapping, i) => {
    if (mapping.path.startsWith('/')) result.files += mapping.rss;
    else if (mapping.path === '[heap]') result.mainArena += mapping.rss;
    else if (mapping.path !== '')
      return; // [stack], [vdso], …: a few pages
    else if (isThreadArena(mapping, list[i + 1])) result.threadArenas += mapping.rss;
    else if (mapping.perms.includes('x')) result.executable += mapping.rss;
    else result.otherAnonymous += mapping.rss;
  });
  return result;
}

/** A glibc thread heap: 64 MiB-aligned, readable part plus an inaccessible rest making 64 MiB. */
function isThreadArena(mapping: Mapping, next: Mapping | undefined): boolean {
  if (mapping.start % BigInt(THREAD_ARENA_BYTES) !== 0n || !mapping.perms.startsWith('rw')) return false;
  const size = Number(mapping.end - mapping.start);
  if (size === THREAD_ARENA_BYTES) return true;
  return (
    next !== undefined &&
    next.perms === '---p' &&
    next.start === mapping.end &&
    size + Number(next.end - next.start) === THREAD_ARENA_BYTES
  );
}
