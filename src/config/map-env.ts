/**
 * `CORE_ROUTER_ROUTES` as the reference reads it: entries separated by spaces, each split at its
 * first `:` (`/:/ui/ /docs/*:/srv/docs`); an entry without one maps to `""`.
 */
export function parseMapEnv(raw: string): Record<string, string> {
  const entries = raw
    .split(/\s+/)
    .filter((entry) => entry !== '')
    .map((entry): [string, string] => {
      const colon = entry.indexOf(':');
      return colon === -1 ? [entry, ''] : [entry.slice(0, colon), entry.slice(colon + 1)];
    });
  // fromEntries defines each key as the object's own, `__proto__` included.
  return Object.fromEntries(entries);
}
