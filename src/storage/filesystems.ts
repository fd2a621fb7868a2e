import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import { DiskFilesystem } from './disk-filesystem.js';
import { MemoryFilesystem } from './memory-filesystem.js';
import { ObjectCache } from './object-cache.js';
import { S3Bucket, type S3Timeouts } from './s3-bucket.js';
import { S3Filesystem } from './s3-filesystem.js';

/** The server's filesystems (docs/storage.md#the-contract): disk, memory, and the S3 buckets of `storage.s3`. */
export interface Filesystems {
  readonly disk: DiskFilesystem;
  readonly mem: MemoryFilesystem;
  /** In the order of `storage.s3`. */
  readonly s3: readonly S3Filesystem[];
}

/** Bounds on waiting for an S3 endpoint (docs/storage.md#s3-filesystems). */
const S3_TIMEOUTS: S3Timeouts = { connectMs: 2000, requestMs: 5000, idleMs: 10_000 };
/** Bytes of small S3 objects (playlists, recent segments) all S3 filesystems keep in memory together. */
const S3_CACHE_BYTES = 64 * 1024 * 1024;
const MIB = 1024 * 1024;

/** How long a disk usage walk is reused before the tree is walked again, milliseconds. */
const DISK_USAGE_CACHE_MS = 10_000;

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
  const s3 = await createS3Filesystems(config, deps, onListenerError);
  return { disk, mem, s3 };
}

/**
 * One filesystem per `storage.s3` entry, its bucket created when missing. An endpoint that does
 * not answer at start is logged, not fatal: its mount answers 502/504 until it does.
 */
async function createS3Filesystems(
  config: Config,
  deps: { logger: Logger; now: () => number },
  onListenerError: (error: unknown) => void,
): Promise<S3Filesystem[]> {
  if (config.storage.s3.length === 0) return [];
  const cache = new ObjectCache({ maxBytes: S3_CACHE_BYTES, now: deps.now });
  return Promise.all(
    config.storage.s3.map(async (storage) => {
      const bucket = new S3Bucket(storage, S3_TIMEOUTS);
      const log = { filesystem: storage.name, endpoint: storage.endpoint, bucket: storage.bucket };
      try {
        const state = await bucket.ensureBucket();
        deps.logger.info(log, `s3 filesystem "${storage.name}": bucket ${state}`);
      } catch (error) {
        deps.logger.error(
          { ...log, detail: (error as { details?: string[] }).details ?? (error as Error).message },
          `s3 filesystem "${storage.name}": the bucket could not be checked; its mount answers 502/504 until the endpoint answers`,
        );
      }
      if (!storage.auth.enable) {
        deps.logger.warn(
          log,
          `s3 filesystem "${storage.name}": auth is off, anyone may write and delete through ${storage.mountpoint}`,
        );
      }
      return new S3Filesystem({
        storage,
        bucket,
        cache,
        now: deps.now,
        onListenerError,
        onUsageError: (error) =>
          deps.logger.warn(
            { ...log, err: error },
            `s3 filesystem "${storage.name}": listing for its usage failed`,
          ),
      });
    }),
  );
}
