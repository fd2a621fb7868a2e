import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** native/malloc-trim/src/malloc_trim.c. */
export interface MallocTrimAddon {
  /** glibc's `malloc_trim(0)`: true when some memory went back to the kernel. */
  trim(this: void): boolean;
  /**
   * Sets glibc's mmap and trim thresholds to `bytes` (1 B – 1 GiB) and stops glibc from raising
   * them itself; true when both were set.
   */
  pinThresholds(this: void, bytes: number): boolean;
  /** False where the C library is not glibc: `trim` then does nothing. */
  available: boolean;
}

/** The built addon, relative to this file in src/ and in dist/ alike. */
const ADDON_PATH = fileURLToPath(
  new URL('../../native/malloc-trim/build/Release/malloc_trim.node', import.meta.url),
);

/**
 * The malloc-trim addon, or why it is not there (not built at `npm ci`: no C compiler, or a build
 * for another Node). `path` is for tests.
 */
export function loadMallocTrimAddon(path = ADDON_PATH): { addon: MallocTrimAddon } | { reason: string } {
  if (!existsSync(path)) {
    return { reason: 'the malloc-trim addon is not built (run `npm run build:malloc-trim`)' };
  }
  try {
    return { addon: createRequire(import.meta.url)(path) as MallocTrimAddon };
  } catch (error) {
    return { reason: `the malloc-trim addon does not load: ${(error as Error).message}` };
  }
}
