/**
 * The longest process id, as `encodeURIComponent` spells it: the router refuses a path parameter
 * longer than its `maxParamLength` (1000, src/http/server.ts) before decoding it, so a longer id
 * could be created and then never be read, updated or deleted (issue 10 item 8).
 */
const MAX_ENCODED_ID_LENGTH = 1000;

// Any C0 or C1 control character or DEL: invisible in logs and listings, and unsafe in headers.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
// With the `u` flag a proper surrogate pair is one code point; only a lone half is category Cs.
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Why `id` cannot name a process, beyond "empty" and "contains /" (checked with the config): every
 * stored process must stay reachable at `/api/v3/process/<id>`. `.` and `..` are path segments
 * every client normalises away; a lone surrogate has no UTF-8 form, so no URL can carry it.
 */
export function processIdProblems(id: string): string[] {
  if (id === '.' || id === '..') return [`id: "${id}" is not allowed (a URL path cannot carry it)`];
  if (LONE_SURROGATE.test(id)) return ['id: must not contain a lone surrogate (it has no UTF-8 form)'];
  if (CONTROL.test(id)) return ['id: must not contain control characters'];
  const encoded = encodeURIComponent(id).length;
  if (encoded > MAX_ENCODED_ID_LENGTH) {
    return [
      `id: ${encoded} characters when URL-encoded, at most ${MAX_ENCODED_ID_LENGTH} (the longest path parameter the API routes)`,
    ];
  }
  return [];
}
