import { getPath, isPlainObject, rangeProblem, setPath, type Config } from '../config/index.js';
import { V16_FIELDS, V16_SECTIONS, V16_VERSION, type V16Field, type V16Kind } from './v16-fields.js';

/** Where the config file keeps the v16 keys streamcore does not implement (and unknown ones). */
const STORED_SECTION = 'v16_unimplemented';

const FIELD_BY_PATH = new Map(V16_FIELDS.map((field) => [field.path, field]));

/**
 * The v16 layout of a configuration: streamcore's keys as the file holds them (env values where
 * an env var sets them, defaults where neither does), the stored unimplemented keys, and `version`.
 * `effective` is the resolved config (file + env); `overrides` the key paths env vars set.
 */
export function toV16Layout(
  fileJson: Record<string, unknown>,
  effective: Config,
  overrides: ReadonlySet<string>,
  createdAt: string,
): Record<string, unknown> {
  const storedValues = fileJson[STORED_SECTION];
  const layout: Record<string, unknown> = isPlainObject(storedValues) ? structuredClone(storedValues) : {};
  for (const field of V16_FIELDS) {
    if (field.stored !== undefined) {
      const kept = getPath(layout, field.path);
      // A value stored before its key had bounds is not answered: a client would send it back.
      setPath(layout, field.path, isStorable(field, kept) ? kept : structuredClone(field.stored));
      continue;
    }
    if (field.withheld === true) {
      setPath(layout, field.path, '');
      continue;
    }
    // The file's own spelling (a relative directory stays relative), unless env or a default rules.
    const inFile = getPath(fileJson, field.path);
    const value = overrides.has(field.path) || inFile === undefined ? getPath(effective, field.path) : inFile;
    setPath(layout, field.path, field.kind === 'tenants' ? v16Tenants(value) : structuredClone(value));
  }
  return { created_at: createdAt, version: V16_VERSION, ...layout };
}

/**
 * Merges a v16 layout (complete or partial, as `PUT /api/v3/config` takes it) into a copy of the
 * config file's content. Fields the body leaves out keep their value. Answers the new content and
 * one problem per bad field (type, refused value); the caller still resolves and validates it.
 */
export function mergeV16Layout(
  body: unknown,
  fileJson: Record<string, unknown>,
): { fileJson: Record<string, unknown>; problems: string[] } {
  const next = structuredClone(fileJson);
  if (!isPlainObject(body)) {
    return { fileJson: next, problems: ['body: must be a JSON object in the v16 config layout'] };
  }
  const problems: string[] = [];
  if (body.version !== V16_VERSION) problems.push(`version: must be ${V16_VERSION} (the v16 config layout)`);
  const storedNow = next[STORED_SECTION];
  const storedValues: Record<string, unknown> = isPlainObject(storedNow) ? storedNow : {};
  mergeSection(body, '', { next, storedValues, problems });
  next[STORED_SECTION] = storedValues;
  return { fileJson: next, problems };
}

interface MergeTarget {
  next: Record<string, unknown>;
  storedValues: Record<string, unknown>;
  problems: string[];
}

function mergeSection(section: Record<string, unknown>, prefix: string, target: MergeTarget): void {
  for (const [key, value] of Object.entries(section)) {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    // Written by the server, not by clients (the reference ignores them too).
    if (path === 'version' || path === 'created_at') continue;
    const field = FIELD_BY_PATH.get(path);
    if (field !== undefined) mergeField(field, value, target);
    else if (V16_SECTIONS.has(path)) {
      if (isPlainObject(value)) mergeSection(value, path, target);
      else target.problems.push(`${path}: must be an object`);
    } else {
      // A key of a newer layout, or the client's own: kept as sent, answered as stored.
      setPath(target.storedValues, path, structuredClone(value));
    }
  }
}

function mergeField(field: V16Field, value: unknown, target: MergeTarget): void {
  if (!hasKind(value, field.kind)) {
    target.problems.push(`${field.path}: ${KIND_PROBLEMS[field.kind]}`);
    return;
  }
  const outOfRange = field.range === undefined ? undefined : rangeProblem(value as number, field.range);
  if (outOfRange !== undefined) {
    target.problems.push(`${field.path}: ${outOfRange}`);
    return;
  }
  // What a client read back: the stored value stays.
  if (field.withheld === true && value === '') return;
  if (field.stored === undefined) {
    setPath(target.next, field.path, structuredClone(value));
    return;
  }
  if (field.refuse !== undefined && JSON.stringify(value) !== JSON.stringify(field.stored)) {
    target.problems.push(`${field.path}: must be ${JSON.stringify(field.stored)}, ${field.refuse}`);
    return;
  }
  setPath(target.storedValues, field.path, structuredClone(value));
}

const KIND_PROBLEMS: Record<V16Kind, string> = {
  bool: 'must be true or false',
  int: 'must be a non-negative integer',
  string: 'must be a string',
  strings: 'must be an array of strings',
  tenants: 'must be an array of tenant objects',
  objects: 'must be an array of objects',
  map: 'must be an object of strings',
};

function isStorable(field: V16Field, value: unknown): boolean {
  if (!hasKind(value, field.kind)) return false;
  return field.range === undefined || rangeProblem(value as number, field.range) === undefined;
}

function hasKind(value: unknown, kind: V16Kind): boolean {
  switch (kind) {
    case 'bool':
      return typeof value === 'boolean';
    case 'int':
      return Number.isSafeInteger(value) && (value as number) >= 0;
    case 'string':
      return typeof value === 'string';
    case 'strings':
      return Array.isArray(value) && value.every((item) => typeof item === 'string');
    case 'tenants':
    case 'objects':
      return Array.isArray(value) && value.every((item) => isPlainObject(item));
    case 'map':
      return isPlainObject(value) && Object.values(value).every((item) => typeof item === 'string');
  }
}

/** The reference's tenant shape; streamcore's optional `issuer` / `jwks_url` only when set. */
function v16Tenants(value: unknown): unknown[] {
  if (!Array.isArray(value)) return [];
  return value.map((tenant: Record<string, unknown>) => ({
    domain: tenant.domain,
    audience: tenant.audience,
    clientid: tenant.clientid,
    users: Array.isArray(tenant.users) ? [...(tenant.users as unknown[])] : [],
    ...(typeof tenant.issuer === 'string' ? { issuer: tenant.issuer } : {}),
    ...(typeof tenant.jwks_url === 'string' ? { jwks_url: tenant.jwks_url } : {}),
  }));
}
