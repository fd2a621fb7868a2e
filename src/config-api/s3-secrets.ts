import { getPath, isPlainObject, S3_SECRET_FIELDS, setPath, type Config } from '../config/index.js';

/**
 * The secrets of `storage.s3` entries (docs/security.md, "What the config API cannot do"): answered
 * as `""`, as `api.auth.password` is, and an entry sent back with `""` there keeps the value it
 * has (matched by name). No client needs to read an S3 secret key; the Restreamer UI sends the
 * section back unchanged.
 */
const WITHHELD = S3_SECRET_FIELDS;

/** `layout` with the S3 secrets blanked (changed in place). */
export function withholdS3Secrets(layout: Record<string, unknown>): void {
  const entries = getPath(layout, 'storage.s3');
  if (!Array.isArray(entries)) return;
  for (const entry of entries) {
    if (!isPlainObject(entry)) continue;
    for (const path of WITHHELD) if (typeof getPath(entry, path) === 'string') setPath(entry, path, '');
  }
}

/** A copy of `body` whose blank S3 secrets are the running entries' of the same name. */
export function restoreS3Secrets(body: unknown, running: Config): unknown {
  if (!isPlainObject(body)) return body;
  const entries = getPath(body, 'storage.s3');
  if (!Array.isArray(entries)) return body;
  const copy = structuredClone(body);
  const byName = new Map(running.storage.s3.map((entry) => [entry.name, entry]));
  for (const entry of getPath(copy, 'storage.s3') as unknown[]) {
    if (!isPlainObject(entry)) continue;
    const known = byName.get(String(entry.name));
    if (known === undefined) continue;
    for (const path of WITHHELD) {
      if (getPath(entry, path) === '') setPath(entry, path, getPath(known, path));
    }
  }
  return copy;
}
