/**
 * Paths inside a filesystem (docs/storage.md#the-contract): absolute, `/`-separated, never leaving the root.
 * Every path that comes from a request goes through `normalizeFilePath` before it reaches a
 * filesystem, so the filesystems themselves only ever see clean paths.
 */

/**
 * Turns a decoded request path into a clean filesystem path (`/a/b.ts`), or `undefined` when it
 * tries to leave the root (any `..` segment, whether it came encoded or not), contains a NUL byte,
 * or is empty. Repeated slashes and `.` segments are dropped. A trailing slash is kept, because on
 * the disk mount it names a directory.
 */
export function normalizeFilePath(decoded: string): string | undefined {
  if (decoded.includes('\0')) return undefined;
  const segments: string[] = [];
  for (const segment of decoded.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') return undefined;
    segments.push(segment);
  }
  const joined = `/${segments.join('/')}`;
  return decoded.endsWith('/') && segments.length > 0 ? `${joined}/` : joined;
}

/**
 * Decodes the percent-encoding of a raw URL path once (`%2e%2e` is `..`, `%252e` stays `%2e`),
 * then normalizes it. `undefined` for malformed encodings and for paths that leave the root.
 */
export function decodeFilePath(rawPath: string): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(rawPath);
  } catch {
    return undefined;
  }
  return normalizeFilePath(decoded);
}

/** Longest name of one path segment, bytes of UTF-8 (Linux `NAME_MAX`). */
export const MAX_NAME_BYTES = 255;
/** Longest path inside a filesystem, bytes of UTF-8; far below `PATH_MAX` (4096) with the disk root. */
export const MAX_PATH_BYTES = 1024;

/**
 * Why a file cannot be stored under `path` on either filesystem, or undefined when it can. Both
 * filesystems apply the disk's limits, so a file can move between them and a name the disk refuses
 * with `ENAMETOOLONG` is a clear 400 instead of a 500.
 */
export function pathLengthProblem(path: string): string | undefined {
  const bytes = Buffer.byteLength(path);
  if (bytes > MAX_PATH_BYTES) return `path: ${bytes} bytes, longer than ${MAX_PATH_BYTES}`;
  for (const segment of path.split('/')) {
    const segmentBytes = Buffer.byteLength(segment);
    if (segmentBytes > MAX_NAME_BYTES) {
      return `path: the name "${segment.slice(0, 32)}…" is ${segmentBytes} bytes, longer than ${MAX_NAME_BYTES}`;
    }
  }
  return undefined;
}
