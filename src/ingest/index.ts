import type { FastifyInstance } from 'fastify';
import type { Config } from '../config/index.js';
import type { LocalStreams, PlaceholderTemplate } from '../process/index.js';
import type { IngestDeps } from './ingest-deps.js';
import { createRtmpIngest } from './rtmp-ingest.js';
import type { RtmpServer } from './rtmp/index.js';
import { registerRtmpRoutes } from './rtmp-routes.js';
import { createSrtIngest } from './srt-ingest.js';
import { registerSrtRoutes } from './srt-routes.js';
import type { SrtServer } from './srt/index.js';

export { RtmpServer } from './rtmp/index.js';
export { SrtServer } from './srt/index.js';
export type { IngestDeps } from './ingest-deps.js';

/** The live ingest servers (RTMP, SRT) and what other modules use of them. */
export interface Ingest {
  /** The RTMP server when `rtmp.enable`. */
  readonly rtmp: RtmpServer | undefined;
  /** The SRT server when `srt.enable`. */
  readonly srt: SrtServer | undefined;
  /** Process placeholders the servers provide (`{rtmp}`, `{srt}`), by name. */
  readonly placeholders: Readonly<Record<string, PlaceholderTemplate>>;
  /** The RTMP server's own streams, which a process's fallback relay reads without a feeder. */
  readonly localStreams: LocalStreams;
  /** `GET /api/v3/rtmp` and `GET /api/v3/srt`, into the guarded `/api/v3` scope. */
  registerApi(v3: FastifyInstance): void;
}

/**
 * Builds the enabled ingest servers (RTMP in rtmp-ingest.ts, SRT in srt-ingest.ts). They listen
 * when the app listens, before processes start, and close after the processes stopped.
 */
export function createIngest(config: Config, deps: IngestDeps): Ingest {
  const rtmp = createRtmpIngest(config, deps);
  const srt = createSrtIngest(config, deps);
  return {
    // The RTMP server a reload may build or close.
    get rtmp() {
      return rtmp.server;
    },
    get srt() {
      return srt.server;
    },
    placeholders: { rtmp: rtmp.placeholder, srt: srt.placeholder },
    localStreams: rtmp.localStreams,
    registerApi: (v3) => {
      registerRtmpRoutes(v3, () => rtmp.server);
      registerSrtRoutes(v3, () => srt.server);
    },
  };
}
export { INGEST_DOCS } from './contract.js';
