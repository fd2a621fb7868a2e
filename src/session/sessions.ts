import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import type { EventSink } from '../events/index.js';
import { readAtUse, type Lifecycle } from '../lifecycle/index.js';
import type { Collector } from '../monitor/index.js';
import type { MountHooks } from '../storage/index.js';
import { HistoryPersistence } from './history-persistence.js';
import { HlsIngestSessions } from './hls-ingest.js';
import { HlsViewerSessions } from './hls-viewers.js';
import { IpIgnoreList } from './ip-ignorelist.js';
import { SessionCollector, type Session, type SessionLimits } from './session-collector.js';
import { createSessionMetricsCollector } from './session-metrics.js';
import { registerSessionRoutes } from './session-routes.js';
import { TrafficMeter } from './traffic-meter.js';

/** The collectors, in the order the metrics and the API list them (docs/sessions.md#the-contract). */
export const COLLECTOR_NAMES = ['hls', 'hlsingress', 'http', 'ffmpeg', 'rtmp', 'srt'] as const;
export type CollectorName = (typeof COLLECTOR_NAMES)[number];

/** A pending HLS viewer (master playlist fetched, no segment yet) is dropped after this long, ms. */
const PENDING_TIMEOUT_MS = 5_000;
const SWEEP_INTERVAL_MS = 1_000;
const MBIT = 1024 * 1024;

export interface Sessions {
  /** Every collector by name; `rtmp` is fed by the RTMP server, `ffmpeg` and `srt` by no one yet. */
  readonly collectors: ReadonlyMap<CollectorName, SessionCollector>;
  /** `session_*` for the monitor. */
  readonly metrics: Collector;
  /** `/api/v3/session` and `/api/v3/session/active`, into the guarded `/api/v3` scope. */
  registerApi(v3: FastifyInstance): void;
}

export interface SessionDeps {
  logger: Logger;
  now: () => number;
  lifecycle: Lifecycle<Config>;
  /** The storage mounts' hooks: the HLS viewer and ingest sessions add theirs. */
  mountHooks: MountHooks[];
  /** Where sessions that start and end go as session events; none without. */
  events?: EventSink;
}

/**
 * Builds the session collectors, hooks byte metering into the server (counting while `sessions.enable`),
 * loads the persisted history, and sweeps idle sessions every second until shutdown, when the
 * open sessions are closed into the history and it is written (`sessions.persist`).
 */
export async function createSessions(
  server: FastifyInstance,
  config: Config,
  deps: SessionDeps,
): Promise<Sessions> {
  const options = config.sessions;
  const noLimits: SessionLimits = { maxSessions: 0, maxTxBitrate: 0, maxRxBitrate: 0 };
  const collectorOf = (name: CollectorName): SessionCollector =>
    // Getters over the running config's section, which a reload updates in place.
    new SessionCollector(name, {
      now: deps.now,
      get timeoutMs() {
        return options.session_timeout_sec * 1000;
      },
      get pendingTimeoutMs() {
        return Math.min(PENDING_TIMEOUT_MS, options.session_timeout_sec * 1000);
      },
      // The limits are about viewers (docs/sessions.md#the-contract): they apply to, and are reported for, `hls` and
      // `rtmp` (its players are refused over them; publishers are counted but never refused).
      get limits() {
        return name === 'hls' || name === 'rtmp'
          ? {
              maxSessions: options.max_sessions,
              maxTxBitrate: options.max_bitrate_mbit * MBIT,
              maxRxBitrate: 0,
            }
          : noLimits;
      },
      onChange: sessionEvents(name, deps.events),
    });
  const collectors = new Map(COLLECTOR_NAMES.map((name) => [name, collectorOf(name)] as const));
  const all = [...collectors.values()];
  const get = (name: CollectorName): SessionCollector => collectors.get(name) as SessionCollector;

  const persistence = new HistoryPersistence(join(config.db.dir, 'sessions'), deps.logger);
  if (options.persist) await persistence.load(all);

  // Installed whether `sessions.enable` is on or not, and asked at each request: a reload may turn
  // it on or off (the cost while off is one property read per request, docs/sessions.md).
  const enabled = (): boolean => options.enable;
  const ignoreList = new IpIgnoreList(() => options.ip_ignorelist);
  const meter = new TrafficMeter(ignoreList, get('http'));
  meter.install(server, enabled);
  const ingest = new HlsIngestSessions(get('hlsingress'), meter, deps.now);
  deps.mountHooks.push(
    whileEnabled(new HlsViewerSessions(get('hls'), meter, ignoreList), enabled),
    whileEnabled(ingest, enabled),
  );

  const sweeper = setInterval(() => {
    for (const collector of all) collector.sweep();
    ingest.sweep();
  }, SWEEP_INTERVAL_MS);
  sweeper.unref();
  let persister: NodeJS.Timeout | undefined;
  /** Saves the history every `persist_interval_sec` while `persist` is on (and a reload may turn it on or off). */
  const schedulePersist = (settings: Config['sessions']): void => {
    clearInterval(persister);
    persister = undefined;
    if (!settings.persist) return;
    persister = setInterval(() => {
      persistence
        .save(all)
        .catch((error: unknown) => deps.logger.error({ err: error }, 'cannot persist sessions'));
    }, settings.persist_interval_sec * 1000);
    persister.unref();
  };
  schedulePersist(options);
  // Turned on by a reload, the history of this run is saved from then on (a file of an earlier
  // run is loaded at a start only, as in the reference, and replaced by the next save).
  deps.lifecycle.onReload({
    name: 'session history',
    keys: ['sessions.persist', 'sessions.persist_interval_sec'],
    prepare: (next) => {
      const settings = structuredClone(next.sessions);
      return { commit: () => schedulePersist(settings), abort: () => undefined };
    },
  });
  // The collectors and ignore lists read these from the running config at each use.
  deps.lifecycle.onReload(
    readAtUse('sessions', [
      'sessions.enable',
      'sessions.ip_ignorelist',
      'sessions.session_timeout_sec',
      'sessions.max_bitrate_mbit',
      'sessions.max_sessions',
    ]),
  );
  deps.lifecycle.onFinal(async () => {
    clearInterval(sweeper);
    clearInterval(persister);
    for (const collector of all) collector.closeAll();
    if (options.persist) await persistence.save(all);
  });

  return {
    collectors,
    metrics: createSessionMetricsCollector(all),
    registerApi: (v3) => registerSessionRoutes(v3, all, deps.now),
  };
}

/** `hooks`, called only while `enabled` answers true. */
function whileEnabled(hooks: MountHooks, enabled: () => boolean): MountHooks {
  return {
    beforeServe: hooks.beforeServe && ((event) => (enabled() ? hooks.beforeServe?.(event) : undefined)),
    afterWrite: hooks.afterWrite && ((event) => void (enabled() && hooks.afterWrite?.(event))),
    afterDelete: hooks.afterDelete && ((event) => void (enabled() && hooks.afterDelete?.(event))),
  };
}

/** A collector's sessions as `session` events (`start` when one becomes active, `end` when it closes). */
function sessionEvents(
  collector: string,
  events: EventSink | undefined,
): ((change: 'start' | 'end', session: Session) => void) | undefined {
  if (events === undefined) return undefined;
  return (change, session) =>
    events.publish('session', change, {
      collector,
      id: session.id,
      reference: session.reference,
      local: session.local,
      remote: session.remote,
      ...(change === 'end' ? { rx_bytes: session.rxBytes, tx_bytes: session.txBytes } : {}),
    });
}
