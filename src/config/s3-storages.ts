import { getPath } from './json-path.js';
import type { S3Storage } from './schema.js';

/**
 * `storage.s3` (docs/storage.md#s3-filesystems): the reference's shape in the file, and its URL
 * form in `CORE_STORAGE_S3`, entries joined by `|`:
 * `https://<access_key_id>:<secret_access_key>@<region>.<endpoint>/<bucket>?name=…&mount=…&username=…&password=…`
 * (datarhei Core v16.14.0 `config/value/s3.go`).
 */

/** What the reference allows as a name (`config/value/s3.go`); also what `{fs:<name>}` accepts here. */
export const S3_NAME = /^[A-Za-z0-9_-]+$/;

/** Names and URL prefixes that belong to something else. */
const RESERVED_NAMES = new Set(['disk', 'mem']);
const RESERVED_MOUNTS = ['/memfs', '/api', '/metrics', '/dashboard'];

/**
 * Parses the env form. The host is `<region>.<endpoint>` split at its first dot, as the reference
 * does; WHATWG `new URL()` is not used because it refuses such a host when the endpoint is an IP
 * address (`us-east-1.127.0.0.1:9000` is no valid IPv4 host to it), which Go's `url.Parse` accepts.
 */
export function parseS3StoragesEnv(value: string): { storages: S3Storage[] } | { problem: string } {
  const storages: S3Storage[] = [];
  const items = value.split('|').filter((item) => item.trim() !== '');
  for (const [index, item] of items.entries()) {
    const parsed = parseS3StorageUrl(item.trim());
    if (typeof parsed === 'string') return { problem: `item ${index + 1}: ${parsed}` };
    storages.push(parsed);
  }
  return { storages };
}

const URL_PARTS = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)([^?#]*)(?:\?([^#]*))?(?:#.*)?$/;

function parseS3StorageUrl(item: string): S3Storage | string {
  const parts = URL_PARTS.exec(item);
  if (parts === null)
    return 'not a URL of the form http(s)://key:secret@region.endpoint/bucket?name=…&mount=…';
  const [, scheme = '', authority = '', path = '', query = ''] = parts;
  if (scheme !== 'http' && scheme !== 'https') return `scheme "${scheme}" must be http or https`;
  const at = authority.lastIndexOf('@');
  const userinfo = at === -1 ? '' : authority.slice(0, at);
  const host = authority.slice(at + 1);
  const colon = userinfo.indexOf(':');
  const accessKey = decodePercent(colon === -1 ? userinfo : userinfo.slice(0, colon));
  const secret = decodePercent(colon === -1 ? '' : userinfo.slice(colon + 1));
  // The secret is never echoed: this message may reach a log.
  if (accessKey === undefined || secret === undefined)
    return 'the access key or secret is not valid percent-encoding';
  const bucket = decodePercent(path.replace(/^\//, ''));
  if (bucket === undefined) return 'the bucket is not valid percent-encoding';
  const params = new URLSearchParams(query);
  const dot = host.indexOf('.');
  const hasAuth = params.has('username') || params.has('password');
  return {
    name: params.get('name') ?? '',
    mountpoint: params.get('mount') ?? '',
    auth: {
      enable: hasAuth,
      username: hasAuth ? (params.get('username') ?? '') : '',
      password: hasAuth ? (params.get('password') ?? '') : '',
    },
    endpoint: dot === -1 ? '' : host.slice(dot + 1),
    access_key_id: accessKey,
    secret_access_key: secret,
    bucket,
    region: dot === -1 ? host : host.slice(0, dot),
    use_ssl: scheme === 'https',
  };
}

function decodePercent(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

/** The fields of an entry that hold secrets (dotted paths inside it). */
export const S3_SECRET_FIELDS = ['secret_access_key', 'auth.password'] as const;

/** The secrets inside S3 filesystem entries: what the server's log must never show. */
export function s3StorageSecrets(storages: readonly S3Storage[]): string[] {
  return storages.flatMap((storage) => S3_SECRET_FIELDS.map((field) => String(getPath(storage, field))));
}

/** One `storage.s3` entry as read from the file; the reference's defaults for what is left out. */
export function readS3Storage(json: unknown): S3Storage | string {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return 'must be a JSON object';
  const record = json as Record<string, unknown>;
  const auth = record.auth ?? {};
  if (typeof auth !== 'object' || auth === null || Array.isArray(auth)) return 'auth must be a JSON object';
  const authRecord = auth as Record<string, unknown>;
  const strings = [
    'name',
    'mountpoint',
    'endpoint',
    'access_key_id',
    'secret_access_key',
    'bucket',
    'region',
  ];
  for (const field of strings) {
    if (record[field] !== undefined && typeof record[field] !== 'string') return `${field} must be a string`;
  }
  for (const field of ['username', 'password']) {
    if (authRecord[field] !== undefined && typeof authRecord[field] !== 'string')
      return `auth.${field} must be a string`;
  }
  if (record.use_ssl !== undefined && typeof record.use_ssl !== 'boolean')
    return 'use_ssl must be true or false';
  if (authRecord.enable !== undefined && typeof authRecord.enable !== 'boolean')
    return 'auth.enable must be true or false';
  const text = (value: unknown): string => (typeof value === 'string' ? value : '');
  return {
    name: text(record.name),
    mountpoint: text(record.mountpoint),
    auth: {
      enable: authRecord.enable === true,
      username: text(authRecord.username),
      password: text(authRecord.password),
    },
    endpoint: text(record.endpoint),
    access_key_id: text(record.access_key_id),
    secret_access_key: text(record.secret_access_key),
    bucket: text(record.bucket),
    region: text(record.region),
    use_ssl: record.use_ssl === true,
  };
}

/**
 * Every problem of the configured S3 filesystems, one message each, as `storage.s3[i].<field>: …`
 * (0-based, as in the file). Beyond the reference's checks: names and mountpoints must not clash
 * with each other or with the server's own filesystems and routes, and the endpoint and bucket
 * must be given (the reference only finds out when it connects).
 */
export function s3StorageProblems(storages: readonly S3Storage[]): string[] {
  const problems: string[] = [];
  const names = new Set<string>();
  const mounts = new Set<string>();
  storages.forEach((storage, index) => {
    const at = `storage.s3[${index}]`;
    if (storage.name === '') problems.push(`${at}.name: required`);
    else if (!S3_NAME.test(storage.name))
      problems.push(`${at}.name: must match ${S3_NAME.source}, got "${storage.name}"`);
    else if (RESERVED_NAMES.has(storage.name))
      problems.push(`${at}.name: "${storage.name}" is the name of a built-in filesystem`);
    else if (names.has(storage.name)) problems.push(`${at}.name: "${storage.name}" is already in use`);
    names.add(storage.name);
    const mountProblems = mountpointProblems(at, storage.mountpoint, mounts);
    problems.push(...mountProblems);
    if (mountProblems.length === 0) mounts.add(storage.mountpoint.replace(/\/+$/, ''));
    if (storage.endpoint === '') problems.push(`${at}.endpoint: required (host or host:port)`);
    else if (!/^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/.test(storage.endpoint))
      problems.push(
        `${at}.endpoint: must be host or host:port without scheme or path, got "${storage.endpoint}"`,
      );
    if (storage.bucket === '') problems.push(`${at}.bucket: required`);
    else if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(storage.bucket))
      problems.push(
        `${at}.bucket: must be 3 to 63 lower-case letters, digits, dots or hyphens, got "${storage.bucket}"`,
      );
    if (storage.auth.enable && storage.auth.username === '' && storage.auth.password === '')
      problems.push(`${at}.auth: enabled, but neither username nor password is set`);
  });
  return problems;
}

/**
 * Paths of `router` an S3 mountpoint would hide: the mounts are matched before the router's
 * directories and redirects (storage/mount-routes.ts), so such a route would never be reached.
 * Named by the router's key, the one a reload can change.
 */
export function s3RouterClashes(
  storages: readonly S3Storage[],
  router: { readonly ui_path: string; readonly routes: Readonly<Record<string, string>> },
): string[] {
  const routes: { key: string; prefix: string; directory: boolean }[] = [
    ...(router.ui_path === ''
      ? []
      : [{ key: 'router.ui_path: served at /ui/, it', prefix: '/ui', directory: true }]),
    ...Object.keys(router.routes).map((route) => ({
      key: `router.routes: "${route}"`,
      prefix: route.replace(/\/\*$/, '').replace(/\/+$/, ''),
      directory: route.endsWith('/*'),
    })),
  ];
  const problems: string[] = [];
  storages.forEach((storage, index) => {
    const mount = storage.mountpoint.replace(/\/+$/, '');
    if (mount === '') return;
    for (const { key, prefix, directory } of routes) {
      const hidden =
        prefix.startsWith(`${mount}/`) || (directory && (prefix === mount || mount.startsWith(`${prefix}/`)));
      if (hidden)
        problems.push(
          `${key} overlaps the mountpoint "${storage.mountpoint}" of storage.s3[${index}], which is served there`,
        );
    }
  });
  return problems;
}

function mountpointProblems(at: string, mountpoint: string, taken: ReadonlySet<string>): string[] {
  if (mountpoint === '') return [`${at}.mountpoint: required`];
  if (
    !/^\/[A-Za-z0-9._~\-/]*$/.test(mountpoint) ||
    mountpoint.includes('//') ||
    /\/\.\.?(\/|$)/.test(mountpoint)
  )
    return [`${at}.mountpoint: must be an absolute URL path like "/s3", got "${mountpoint}"`];
  const clean = mountpoint.replace(/\/+$/, '');
  if (clean === '') return [`${at}.mountpoint: "/" belongs to the disk filesystem`];
  const clash = RESERVED_MOUNTS.find((prefix) => clean === prefix || clean.startsWith(`${prefix}/`));
  if (clash !== undefined)
    return [`${at}.mountpoint: "${mountpoint}" lies under ${clash}, which the server uses`];
  for (const other of taken) {
    if (clean === other || clean.startsWith(`${other}/`) || other.startsWith(`${clean}/`))
      return [
        `${at}.mountpoint: "${mountpoint}" overlaps the mountpoint "${other}" of another S3 filesystem`,
      ];
  }
  return [];
}
