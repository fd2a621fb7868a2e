import { Type } from 'typebox';
import { SRT_STATISTICS_FIELDS } from './srt-statistics.js';
import { BEARER, errors, GUARDED, type RouteDoc } from './route-doc.js';

/** datarhei Core's `api.RTMPChannel`. */
const RtmpChannel = Type.Object({ name: Type.String({ minLength: 1 }) }, { title: 'RTMPChannel' });

/** datarhei Core's `api.SRTStatistics`: libsrt's counters since the connection opened. */
const SrtStatistics = Type.Object(
  Object.fromEntries(
    Object.entries(SRT_STATISTICS_FIELDS).map(([name, description]) => [
      name,
      Type.Number({ minimum: 0, description }),
    ]),
  ),
  { title: 'SRTStatistics', additionalProperties: false },
);

/** datarhei Core's `api.SRTLog` (never filled here: libsrt's log is not collected). */
const SrtLog = Type.Object(
  { ts: Type.Integer({ description: 'Unix milliseconds' }), msg: Type.Array(Type.String()) },
  { title: 'SRTLog' },
);
const SrtLogs = Type.Record(Type.String(), Type.Array(SrtLog));

/** datarhei Core's `api.SRTChannels`. */
const SrtChannels = Type.Object(
  {
    publisher: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), {
      description: 'resource → SRT socket id of its publisher',
    }),
    subscriber: Type.Record(Type.String(), Type.Array(Type.Integer({ minimum: 0 })), {
      description: 'resource → SRT socket ids of its players (absent without players)',
    }),
    connections: Type.Record(
      Type.String(),
      Type.Object({ log: SrtLogs, stats: SrtStatistics }, { title: 'SRTConnection' }),
      { description: 'SRT socket id → the connection’s statistics' },
    ),
    log: SrtLogs,
  },
  { title: 'SRTChannels', additionalProperties: false },
);

export const INGEST_DOCS: Record<string, RouteDoc> = {
  'GET /api/v3/rtmp': {
    summary: 'The RTMP paths being published now, oldest first (empty when the RTMP server is off)',
    tags: ['ingest'],
    security: BEARER,
    responses: { 200: Type.Array(RtmpChannel), ...errors(...GUARDED) },
  },
  'GET /api/v3/srt': {
    summary: 'The SRT publishers and players with their connection statistics (empty when SRT is off)',
    tags: ['ingest'],
    security: BEARER,
    responses: { 200: SrtChannels, ...errors(...GUARDED) },
  },
};
