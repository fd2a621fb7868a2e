/** Reading and writing dotted key paths (`api.auth.enable`) in parsed JSON objects. */

/** The value at `path`, or undefined when a step is missing or not a plain object. */
export function getPath(object: unknown, path: string): unknown {
  let current: unknown = object;
  for (const part of path.split('.')) {
    if (!isPlainObject(current)) return undefined;
    current = current[part];
  }
  return current;
}

/** Sets the value at `path`, replacing any step that is not a plain object by an empty one. */
export function setPath(object: object, path: string, value: unknown): void {
  const parts = path.split('.');
  let current = object as Record<string, unknown>;
  for (const part of parts.slice(0, -1)) {
    const next = current[part];
    if (!isPlainObject(next)) current[part] = {};
    current = current[part] as Record<string, unknown>;
  }
  current[parts[parts.length - 1] as string] = value;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
