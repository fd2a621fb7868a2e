import { BEARER, opaque, type RouteDoc } from '../http/index.js';

/** A cluster route under the API's guard, described for the API document. */
export function guarded(doc: Omit<RouteDoc, 'tags' | 'security'>): RouteDoc {
  return { ...doc, tags: ['cluster'], security: BEARER };
}

/** The reference's `"OK"` answer of a change. */
export const OK = opaque('"OK"');
