import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import type { EventSink } from '../events/index.js';
import { FailureDelay, LoginThrottle } from '../auth/index.js';
import type { Collector } from '../monitor/index.js';
import { BasicAuthGate } from './basic-auth-gate.js';
import { createFilesystemCollector } from './filesystem-collector.js';
import { createFilesystems, type Filesystems } from './filesystems.js';
import { registerFsApiRoutes } from './fs-api-routes.js';
import { MemfsWriteGrants } from './memfs-write-grants.js';
import type { MountHooks } from './mount-hooks.js';
import { registerMounts, type DiskFallback } from './mount-routes.js';

/** URL prefixes the disk mount leaves alone: they belong to the API, the scrape endpoint and the dashboard. */
const RESERVED_PREFIXES = ['/api', '/metrics', '/dashboard'];

/** The storage module as the app sees it (docs/storage.md#the-contract). */
export interface Storage {
  readonly filesystems: Filesystems;
  /** Hooks around the mounts; other modules (sessions) push theirs before the server listens. */
  readonly mountHooks: MountHooks[];
  /** Served in the disk's place when they answer (the router); other modules push theirs. */
  readonly diskFallbacks: DiskFallback[];
  /**
   * Write credentials of encoder runs, each for its own paths of the writable mounts (URL paths
   * with the mount: `/memfs/live/a`, `/s3/live/a`). Issued whether writes need them or not: a
   * reload may turn `storage.memory.auth.enable` on while the runs write.
   */
  readonly memfsGrants: MemfsWriteGrants;
  /** `filesystem_*` for diskfs, memfs and each S3 filesystem. */
  readonly collector: Collector;
  /** The memfs mount at `/memfs/`, the S3 mounts at their mountpoints, and the disk mount at `/`. */
  registerMounts(server: FastifyInstance): Promise<void>;
  /** `/api/v3/fs…`, into the guarded `/api/v3` scope. */
  registerApi(v3: FastifyInstance): Promise<void>;
  /** Ends pending failure delays of mount logins, so shutdown does not wait for them; closes S3 connections. */
  close(): void;
}

export async function createStorage(
  config: Config,
  deps: { logger: Logger; now: () => number; events?: EventSink },
): Promise<Storage> {
  const filesystems = await createFilesystems(config, deps);
  const mounted = [filesystems.disk, filesystems.mem, ...filesystems.s3];
  const events = deps.events;
  if (events !== undefined) {
    for (const filesystem of mounted) {
      const fields = (path: string, bytes: number) => ({ filesystem: filesystem.name, path, bytes });
      filesystem.onWrite((path, bytes) => events.publish('filesystem', 'write', fields(path, bytes)));
      filesystem.onRemove((path, bytes) => events.publish('filesystem', 'delete', fields(path, bytes)));
    }
  }
  const mountHooks: MountHooks[] = [];
  const diskFallbacks: DiskFallback[] = [];
  const auth = config.storage.memory.auth;
  // Their own counts: failed mount logins do not lock the API login, nor the reverse.
  const throttle = config.api.auth.throttle;
  const failureDelay = new FailureDelay(throttle.delay_ms);
  const memfsGrants = new MemfsWriteGrants();
  const gateDeps = {
    throttle: new LoginThrottle({
      maxFailures: throttle.max_failures,
      windowSec: throttle.window_sec,
      maxKeys: throttle.max_tracked,
      now: deps.now,
    }),
    failureDelay,
    logger: deps.logger,
  };
  // The running config's section itself: a reload of `enable`, the username or the password
  // updates it in place.
  const memGate = new BasicAuthGate(auth, memfsGrants, gateDeps);
  const s3Mounts = filesystems.s3.map((filesystem, index) => {
    const s3Auth = config.storage.s3[index]?.auth;
    const gate =
      s3Auth?.enable === true
        ? new BasicAuthGate({ username: s3Auth.username, password: s3Auth.password }, memfsGrants, gateDeps, {
            realm: filesystem.name,
            credentialsKey: `storage.s3[${index}].auth`,
          })
        : undefined;
    return { filesystem, gate };
  });
  return {
    filesystems,
    mountHooks,
    diskFallbacks,
    memfsGrants,
    collector: createFilesystemCollector(mounted),
    registerMounts: (server) =>
      registerMounts(server, {
        disk: filesystems.disk,
        writable: [{ filesystem: filesystems.mem, gate: memGate }, ...s3Mounts],
        inflatedLimitBytes: config.api.max_body_kbytes * 1024,
        reservedPrefixes: RESERVED_PREFIXES,
        hooks: mountHooks,
        diskFallbacks,
      }),
    registerApi: (v3) =>
      registerFsApiRoutes(v3, {
        filesystems: mounted,
        inflatedLimitBytes: config.api.max_body_kbytes * 1024,
        hooks: mountHooks,
      }),
    close: () => {
      failureDelay.endAll();
      for (const s3 of filesystems.s3) s3.close();
    },
  };
}
