import { Type } from 'typebox';
import { BEARER, errors, GUARDED, JSON_BODY, SAVED, type RouteDoc } from '../http/index.js';

/** Any JSON value: stored and answered as it was sent. */
const AnyJson = Type.Unknown({ description: 'any JSON value' });
const KeyParams = Type.Object({ key: Type.String() });
/** What every guarded route may answer besides 401: a forbidden or throttled client. */
const REFUSED = [403, 429];

function guarded(summary: string, doc: Omit<RouteDoc, 'summary' | 'tags' | 'security'>): RouteDoc {
  return { summary, tags: ['metadata'], security: BEARER, ...doc };
}

/** The server-wide metadata routes (`/api/v3/metadata`), described for the API document. */
export const METADATA_DOCS: Record<string, RouteDoc> = {
  'GET /api/v3/metadata': guarded('All server-wide metadata', {
    responses: { 200: AnyJson, ...errors(...GUARDED, ...REFUSED) },
  }),
  'GET /api/v3/metadata/:key': guarded('One server-wide metadata value', {
    params: KeyParams,
    responses: { 200: AnyJson, ...errors(...GUARDED, ...REFUSED, 404) },
  }),
  'PUT /api/v3/metadata/:key': guarded('Store one server-wide metadata value (null deletes it)', {
    params: KeyParams,
    body: AnyJson,
    responses: { 200: AnyJson, ...errors(...GUARDED, ...REFUSED, ...JSON_BODY, ...SAVED) },
  }),
};
