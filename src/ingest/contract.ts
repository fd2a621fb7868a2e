import { Type } from 'typebox';
import { BEARER, errors, GUARDED, type RouteDoc } from '../http/index.js';
import { SrtChannels } from './srt/index.js';

/** datarhei Core's `api.RTMPChannel`. */
const RtmpChannel = Type.Object({ name: Type.String({ minLength: 1 }) }, { title: 'RTMPChannel' });

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
