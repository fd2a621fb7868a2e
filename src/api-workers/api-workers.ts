import type { Server } from 'node:http';
import type { Logger } from 'pino';
import type { FailingKeys } from '../auth/index.js';
import type { RequestCounter } from '../session/index.js';
import type { Config } from '../config/index.js';
import { ReplicaFeed, type Monitor } from '../monitor/index.js';
import type { ToWorker } from './messages.js';
import { WorkerPool, type WorkerEntry } from './worker-pool.js';

export interface ApiWorkersDeps {
  entry: WorkerEntry;
  logger: Logger;
  http: Server;
  monitor: Pick<Monitor, 'store' | 'onCommit'>;
  /** Where the login throttle reports its failing keys (Auth.onThrottleChange). */
  onThrottleChange: (listener: (keys: FailingKeys) => void) => void;
  /** The `http` session collector: the requests the workers answered are counted there. */
  httpSessions: Pick<RequestCounter, 'countRequest'>;
  /** The encoders running now, and where their changes are reported (EncoderRegistry). */
  encoders: { runningPids(): ReadonlySet<number>; onChange(listener: () => void): void };
}

/**
 * The API workers wired to the parts of the main process they follow: each metrics snapshot, the
 * login throttle's failing keys, the running encoders. Answers undefined when the config asks for
 * none; they start once the server listens (`start`).
 */
export function createApiWorkers(config: Config, deps: ApiWorkersDeps): WorkerPool | undefined {
  const count = config.api.workers;
  // In a cluster the process routes forward between nodes; a worker keeps out of that.
  if (count === 0 || config.cluster.enable) return undefined;
  const feed = new ReplicaFeed(deps.monitor.store);
  let throttled: FailingKeys = { addresses: [], usernames: [] };
  const throttleMessage = (): ToWorker => ({ type: 'throttle', ...throttled });
  const encodersMessage = (): ToWorker => ({ type: 'encoders', pids: [...deps.encoders.runningPids()] });
  const pool = new WorkerPool({
    count,
    entry: deps.entry,
    logger: deps.logger,
    config,
    http: deps.http,
    backlog: () => feed.backlog(),
    greeting: () => [throttleMessage(), encodersMessage()],
    countRequests: (counted) => {
      for (const [remote, route, rx, tx] of counted) deps.httpSessions.countRequest(remote, route, rx, tx);
    },
  });
  deps.monitor.onCommit((timeMs, batch) =>
    pool.broadcast({ type: 'snapshot', snapshot: feed.snapshot(timeMs, batch) }),
  );
  deps.onThrottleChange((keys) => {
    // Every successful login reports; only a change of the keys travels.
    if (sameKeys(keys, throttled)) return;
    throttled = keys;
    pool.broadcast(throttleMessage());
  });
  deps.encoders.onChange(() => pool.broadcast(encodersMessage()));
  return pool;
}

function sameKeys(a: FailingKeys, b: FailingKeys): boolean {
  return (
    a.addresses.length === b.addresses.length &&
    a.usernames.length === b.usernames.length &&
    a.addresses.every((key, i) => key === b.addresses[i]) &&
    a.usernames.every((key, i) => key === b.usernames[i])
  );
}
