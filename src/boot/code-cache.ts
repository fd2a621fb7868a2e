/**
 * V8's code cache for the server bundle (issue 11, docs/performance.md#start-up-issue-11). Compiling the
 * 4 MB bundle, and then each function the start calls, was the largest part of a start; with the
 * cache V8 reads the compiled code instead. Node 20 has no built-in compile cache for modules, so
 * the entry compiles the bundle itself (node:vm) and keeps the cache beside it.
 *
 * What V8 checks is not enough to trust a file: it accepts a cache only from the same V8 version
 * and V8 flags (`--max-semi-space-size` included), but it checks the source only by its length and
 * it does not check the payload at all (a damaged cache crashes the process while it loads). So:
 * - a cache file is named by the SHA-256 of the bundle it was made from and by the runtime that
 *   made it (Node's version, its flags, NODE_OPTIONS); a run under other flags keeps its own;
 * - a cache file starts with the SHA-256 of its payload, checked before V8 sees the payload.
 * Both hashes cost about 5 ms per start together (4 MB of bundle, 2.3 MB of cache, measured).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The server bundle's file name in dist/ (written by scripts/build-server.ts). */
export const SERVER_BUNDLE = 'server.cjs';
/** The folder, beside the bundle, that holds the cache files. */
export const CODE_CACHE_FOLDER = 'code-cache';

const DIGEST_BYTES = 32;

export type CodeCacheRead = { state: 'found'; data: Buffer } | { state: 'missing' } | { state: 'damaged' };

/** The cache file for this bundle (its bytes) under this runtime. */
export function codeCacheFile(distDir: string, bundle: Buffer): string {
  const runtime = [
    process.version,
    process.arch,
    process.execArgv.join(' '),
    process.env.NODE_OPTIONS ?? '',
  ].join('\0');
  const bundleKey = sha256(bundle).toString('hex').slice(0, 16);
  const runtimeKey = sha256(Buffer.from(runtime)).toString('hex').slice(0, 16);
  return join(distDir, CODE_CACHE_FOLDER, `${bundleKey}-${runtimeKey}.v8`);
}

/** The cache's payload if the file is there and whole. */
export function readCodeCache(file: string): CodeCacheRead {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch {
    return { state: 'missing' };
  }
  const data = bytes.subarray(DIGEST_BYTES);
  if (bytes.length <= DIGEST_BYTES || !sha256(data).equals(bytes.subarray(0, DIGEST_BYTES))) {
    return { state: 'damaged' };
  }
  return { state: 'found', data };
}

/**
 * Writes the cache atomically (a temporary file renamed over it): two servers started at once from
 * one checkout may both write, and neither may ever read a torn file. Throws when the folder is
 * not writable (an installation owned by another user); the caller decides what that means.
 */
export function writeCodeCache(file: string, data: Buffer): void {
  mkdirSync(join(file, '..'), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, Buffer.concat([sha256(data), data]));
    renameSync(temporary, file);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}

function sha256(bytes: Buffer): Buffer {
  return createHash('sha256').update(bytes).digest();
}
