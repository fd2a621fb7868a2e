/**
 * Whether the path of `url` is `prefix` or lies below it, as the router sees it: an absolute-form
 * target (`GET http://host/api/v3/...`, RFC 9112 §3.2.2) is reduced to its path, and escapes are
 * decoded (`/api/%763` is `/api/v3`). Decoding also what the router keeps encoded (`%2F`) only
 * makes the set of guarded paths larger. Origin-form paths without escapes take the fast exit.
 */
export function isUnderPrefix(url: string, prefix: string): boolean {
  if (url.startsWith(prefix)) return endsPrefix(url, prefix.length);
  if (url.charCodeAt(0) === 0x2f && !url.includes('%')) return false;
  const path = routedPath(url);
  return path.startsWith(prefix) && endsPrefix(path, prefix.length);
}

/** The decoded path of a request target, without scheme, authority and query. */
function routedPath(url: string): string {
  let path = url;
  if (path.charCodeAt(0) !== 0x2f) {
    const authority = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(path);
    if (authority !== null) path = path.slice(authority[0].length);
  }
  const query = path.indexOf('?');
  if (query !== -1) path = path.slice(0, query);
  try {
    return decodeURIComponent(path);
  } catch {
    // A malformed escape: the router rejects the URL; compare the raw path all the same.
    return path;
  }
}

/** Whether `text` ends right after the prefix or continues with a path separator or the query. */
function endsPrefix(text: string, prefixLength: number): boolean {
  const next = text.charCodeAt(prefixLength);
  return Number.isNaN(next) || next === 0x2f /* / */ || next === 0x3f; /* ? */
}
