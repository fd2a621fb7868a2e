import { Type } from 'typebox';
import { BEARER, errors, GUARDED, type RouteDoc } from '../route-doc.js';

/** datarhei Core's `api.RTMPChannel`. */
const RtmpChannel = Type.Object({ name: Type.String({ minLength: 1 }) }, { title: 'RTMPChannel' });

export const INGEST_DOCS: Record<string, RouteDoc> = {
  'GET /api/v3/rtmp': {
    summary: 'The RTMP paths being published now, oldest first (empty when the RTMP server is off)',
    tags: ['ingest'],
    security: BEARER,
    responses: { 200: Type.Array(RtmpChannel), ...errors(...GUARDED) },
  },
};
