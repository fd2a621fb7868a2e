import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import type { EventSink } from '../events/index.js';
import type { Lifecycle } from '../lifecycle/index.js';
import type { SessionCollector } from '../session/index.js';
import type { ServedCertificate } from '../tls/index.js';

/** What the ingest servers take from the app. */
export interface IngestDeps {
  logger: Logger;
  now: () => number;
  lifecycle: Lifecycle<Config>;
  /** The `rtmp` session collector; undefined when `sessions.enable` is off. */
  rtmpCollector: SessionCollector | undefined;
  /** The `srt` session collector; undefined when `sessions.enable` is off. */
  srtCollector: SessionCollector | undefined;
  /** Where publish, unpublish, join and leave go as media events; none without. */
  events?: EventSink;
  /** The certificate RTMPS serves (the one of HTTPS, tls/). */
  certificate: ServedCertificate;
}

/**
 * The servers' media changes as `media` events: `name` the stream (`/live/abc` → `abc`, the
 * reference's session reference), `path` as published, `address` the client's.
 */
export function mediaEvents(
  protocol: 'rtmp' | 'srt',
  deps: IngestDeps,
): ((change: string, path: string, address: string) => void) | undefined {
  const events = deps.events;
  if (events === undefined) return undefined;
  return (change, path, address) =>
    events.publish('media', change, {
      protocol,
      name: path.slice(path.lastIndexOf('/') + 1),
      path,
      address,
    });
}
