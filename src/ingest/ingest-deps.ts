import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import type { Lifecycle } from '../lifecycle/index.js';
import type { SessionCollector } from '../session/index.js';

/** What the ingest servers take from the app. */
export interface IngestDeps {
  logger: Logger;
  now: () => number;
  lifecycle: Lifecycle<Config>;
  /** The `rtmp` session collector; undefined when `sessions.enable` is off. */
  rtmpCollector: SessionCollector | undefined;
  /** The `srt` session collector; undefined when `sessions.enable` is off. */
  srtCollector: SessionCollector | undefined;
}
