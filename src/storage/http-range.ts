/** A satisfiable byte range, both ends inclusive (RFC 9110 §14.1.2). */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * Parses a `Range` header against a file of `size` bytes.
 * - `undefined`: no range to apply (no header, another unit, several ranges, or malformed: RFC
 *   9110 lets a server ignore those and answer the whole file);
 * - `'unsatisfiable'`: a valid single range that lies outside the file (→ 416);
 * - otherwise the range, clamped to the file.
 */
export function parseRange(
  header: string | undefined,
  size: number,
): ByteRange | 'unsatisfiable' | undefined {
  if (header === undefined) return undefined;
  const match = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (match === null) return undefined;
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return undefined;
  if (first === '') {
    // Suffix range: the last N bytes.
    const length = Number(last);
    if (length === 0) return 'unsatisfiable';
    return size === 0 ? 'unsatisfiable' : { start: Math.max(0, size - length), end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  if (last !== '' && Number(last) < start) return undefined;
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}
