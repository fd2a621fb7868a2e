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
   * Write credentials of encoder runs, each for its own memfs paths; undefined when memfs writes
   * need no credentials (`storage.memory.auth.enable` off).
   */
  readonly memfsGrants: MemfsWriteGrants | undefined;
  /** `filesystem_*` for diskfs and memfs. */
  readonly collector: Collector;
  /** The memfs mount at `/memfs/` and the disk mount at `/`. */
  registerMounts(server: FastifyInstance): Promise<void>;
  /** `/api/v3/fs…`, into the guarded `/api/v3` scope. */
  registerApi(v3: FastifyInstance): Promise<void>;
  /** Ends pending failure delays of memfs logins, so shutdown does not wait for them. */
  close(): void;
}

export async function createStorage(
  config: Config,
  deps: { logger: Logger; now: () => number; events?: EventSink },
): Promise<Storage> {
  const filesystems = await createFilesystems(config, deps);
  const events = deps.events;
  if (events !== undefined) {
    for (const filesystem of [filesystems.disk, filesystems.mem]) {
      const fields = (path: string, bytes: number) => ({ filesystem: filesystem.name, path, bytes });
      filesystem.onWrite((path, bytes) => events.publish('filesystem', 'write', fields(path, bytes)));
      filesystem.onRemove((path, bytes) => events.publish('filesystem', 'delete', fields(path, bytes)));
    }
  }
  const mountHooks: MountHooks[] = [];
  const diskFallbacks: DiskFallback[] = [];
  const auth = config.storage.memory.auth;
  // Its own counts: failed memfs logins do not lock the API login, nor the reverse.
  const throttle = config.api.auth.throttle;
  const failureDelay = new FailureDelay(throttle.delay_ms);
  const memfsGrants = auth.enable ? new MemfsWriteGrants() : undefined;
  const memGate = memfsGrants
    ? // The running config's section itself: a reload of the username or password updates it in place.
      new BasicAuthGate(auth, memfsGrants, {
        throttle: new LoginThrottle({
          maxFailures: throttle.max_failures,
          windowSec: throttle.window_sec,
          maxKeys: throttle.max_tracked,
          now: deps.now,
        }),
        failureDelay,
        logger: deps.logger,
      })
    : undefined;
  return {
    filesystems,
    mountHooks,
    diskFallbacks,
    memfsGrants,
    collector: createFilesystemCollector([filesystems.disk, filesystems.mem]),
    registerMounts: (server) =>
      registerMounts(server, {
        disk: filesystems.disk,
        mem: filesystems.mem,
        memGate,
        inflatedLimitBytes: config.api.max_body_kbytes * 1024,
        reservedPrefixes: RESERVED_PREFIXES,
        hooks: mountHooks,
        diskFallbacks,
      }),
    registerApi: (v3) =>
      registerFsApiRoutes(v3, {
        filesystems: [filesystems.disk, filesystems.mem],
        inflatedLimitBytes: config.api.max_body_kbytes * 1024,
        hooks: mountHooks,
      }),
    close: () => failureDelay.endAll(),
  };
}
