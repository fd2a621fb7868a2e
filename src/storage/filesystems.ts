import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import { DiskFilesystem } from './disk-filesystem.js';
import { MemoryFilesystem } from './memory-filesystem.js';

/** The server's two filesystems (docs/storage.md#the-contract), by API name. */
export interface Filesystems {
  readonly disk: DiskFilesystem;
  readonly mem: MemoryFilesystem;
}

/** How long a disk usage walk is reused before the tree is walked again, milliseconds. */
const DISK_USAGE_CACHE_MS = 10_000;
const MIB = 1024 * 1024;

/** Creates both filesystems from the config; the disk root is created when missing. */
export async function createFilesystems(
  config: Config,
  deps: { logger: Logger; now: () => number },
): Promise<Filesystems> {
  const onListenerError = (error: unknown): void =>
    deps.logger.error({ err: error }, 'a filesystem write listener failed');
  // Getters over the running config's sections, which a reload updates in place.
  const { disk: diskSettings, memory } = config.storage;
  const disk = new DiskFilesystem({
    root: config.storage.disk.dir,
    get maxSizeBytes() {
      return diskSettings.max_size_mbytes * MIB;
    },
    usageCacheMs: DISK_USAGE_CACHE_MS,
    now: deps.now,
    onListenerError,
  });
  await disk.init();
  const mem = new MemoryFilesystem({
    get maxSizeBytes() {
      return memory.max_size_mbytes * MIB;
    },
    get purge() {
      return memory.purge;
    },
    now: deps.now,
    onListenerError,
  });
  return { disk, mem };
}
