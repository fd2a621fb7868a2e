/** Bounds on the server-wide metadata (docs/compatibility.md#metadata). */
export const METADATA_LIMITS = {
  /** Longest key, in characters. */
  maxKeyChars: 256,
  /** Deepest nesting of arrays and objects in one value (a scalar is depth 0). */
  maxDepth: 32,
  /** All keys and values together, as JSON, in bytes. */
  maxTotalBytes: 1024 * 1024,
  /** How many keys. */
  maxKeys: 1000,
} as const;

/** Problems of a key, one line each (empty: fine). */
function checkKey(key: string): string[] {
  if (key === '') return ['key: must not be empty'];
  if (key.length > METADATA_LIMITS.maxKeyChars) {
    return [`key: ${key.length} characters, at most ${METADATA_LIMITS.maxKeyChars} allowed`];
  }
  return [];
}

/** The nesting depth of a JSON value, stopping once it is past `limit` (no deep recursion). */
export function depthOf(value: unknown, limit: number = METADATA_LIMITS.maxDepth): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [unknown, number];
    if (typeof node !== 'object' || node === null) continue;
    const inner = depth + 1;
    deepest = Math.max(deepest, inner);
    if (inner > limit) return inner;
    for (const child of Array.isArray(node) ? node : Object.values(node)) stack.push([child, inner]);
  }
  return deepest;
}

/**
 * Problems of setting `key` to `value` (`null`: deleting it) in `current` (the whole store), one
 * line each, and the bytes the store takes as JSON after the change (for the budget of all
 * metadata together; 0 when the value is refused before it is measured).
 */
export function checkSet(
  current: Record<string, unknown>,
  key: string,
  value: unknown,
): { problems: string[]; bytes: number } {
  const problems = checkKey(key);
  if (value === null) {
    const rest = { ...current };
    delete rest[key];
    return { problems, bytes: jsonBytes(rest) };
  }
  const depth = depthOf(value);
  if (depth > METADATA_LIMITS.maxDepth) {
    problems.push(`value: nested deeper than ${METADATA_LIMITS.maxDepth} levels`);
    return { problems, bytes: 0 };
  }
  if (!Object.hasOwn(current, key) && Object.keys(current).length >= METADATA_LIMITS.maxKeys) {
    problems.push(`key: at most ${METADATA_LIMITS.maxKeys} keys allowed`);
  }
  const total = jsonBytes({ ...current, [key]: value });
  if (total > METADATA_LIMITS.maxTotalBytes) {
    problems.push(
      `value: the metadata would take ${total} bytes as JSON, at most ${METADATA_LIMITS.maxTotalBytes} allowed`,
    );
  }
  return { problems, bytes: total };
}

/** Bytes of a metadata store as JSON; an empty store counts 0. */
export function jsonBytes(store: Record<string, unknown>): number {
  return Object.keys(store).length === 0 ? 0 : Buffer.byteLength(JSON.stringify(store));
}
