import type { IntRange } from '../config/index.js';

/**
 * The fields of datarhei Core v16's config layout (version 3, reference tag v16.14.0: `config/data.go`
 * for the JSON names, `config/config.go` for defaults and variable names). Each field is either
 * one of streamcore's own keys (same dotted path in both layouts) or a key streamcore does not
 * implement: those are stored as they were sent and answered unchanged, so a client's round trip
 * loses nothing (docs/compatibility.md#config).
 */

/** `strings`: array of strings; `tenants`: identity-provider tenants; `objects`: array of objects; `map`: string → string. */
export type V16Kind = 'bool' | 'int' | 'string' | 'strings' | 'tenants' | 'objects' | 'map';

export interface V16Field {
  /** Dotted JSON path in the v16 layout. */
  readonly path: string;
  readonly kind: V16Kind;
  /** The reference's variable name where it differs from `path` (what `overrides` lists). */
  readonly variable?: string;
  /** Set for keys streamcore does not implement: the value answered until a client stores one. */
  readonly stored?: unknown;
  /**
   * Why a value other than `stored` is refused, for unimplemented keys whose value would promise
   * something streamcore does not do (a protection, a listener): safe before compatible.
   */
  readonly refuse?: string;
  /**
   * Why the API may not change this key (the file on the server still can): what it names would
   * give an API token the machine (a program to run, a directory to serve or write, the encoder
   * policy lifted) once the server restarts. Safe before compatible (docs/security.md).
   */
  readonly fileOnly?: string;
  /** Holds a secret: never named with its value in a message. */
  readonly secret?: boolean;
  /**
   * A secret no client needs to read (docs/security.md, "What the config API cannot do"): answered
   * as `""`, and a `""` sent back (or none) keeps the stored value.
   */
  readonly withheld?: boolean;
  /**
   * Bounds of an unimplemented `int` key (streamcore's own keys have theirs in config/keys.ts):
   * a stored value is answered to clients, which may act on it, so it gets a ceiling too.
   */
  readonly range?: IntRange;
}

const mapped = (path: string, kind: V16Kind, extra: Partial<V16Field> = {}): V16Field => ({
  path,
  kind,
  ...extra,
});
const stored = (path: string, kind: V16Kind, value: unknown, extra: Partial<V16Field> = {}): V16Field => ({
  path,
  kind,
  stored: value,
  ...extra,
});

const RUNS_PROGRAM = 'it names the program the server runs for every process';
const MOVES_FILES = 'it decides which directory the server reads, writes or serves';
const LIFTS_POLICY = 'it decides what encoders may read and write';
const SIGNS_TOKENS = 'it signs every token: whoever chooses it can make tokens of their own';
const ADDS_LOGINS =
  'it decides who may log in: a tenant of their own would keep a token holder in after a password change';

const MOUNTS_BUCKETS =
  'it decides which servers the server connects to with which keys, and what it serves and lets encoders write';

const PORT: IntRange = { min: 0, max: 65_535, why: 'a TCP or UDP port' };

const NO_HTTPS = 'streamcore serves HTTP only; terminate TLS in a proxy in front of it';
const NO_ACCESS_LISTS = 'not enforced by streamcore; restrict access with a firewall or proxy';

export const V16_FIELDS: readonly V16Field[] = [
  mapped('id', 'string'),
  mapped('name', 'string'),
  mapped('address', 'string'),
  stored('update_check', 'bool', false),
  stored('log.level', 'string', 'info'),
  stored('log.topics', 'strings', []),
  stored('log.max_lines', 'int', 1000, {
    range: { min: 0, max: 100_000, why: 'the reference keeps that many log lines in memory' },
  }),
  mapped('db.dir', 'string', { fileOnly: MOVES_FILES }),
  mapped('host.name', 'strings'),
  stored('host.auto', 'bool', false),
  stored('api.read_only', 'bool', false, { refuse: 'a read-only API is not implemented by streamcore' }),
  stored('api.access.http.allow', 'strings', [], { refuse: NO_ACCESS_LISTS }),
  stored('api.access.http.block', 'strings', [], { refuse: NO_ACCESS_LISTS }),
  stored('api.access.https.allow', 'strings', [], { refuse: NO_ACCESS_LISTS }),
  stored('api.access.https.block', 'strings', [], { refuse: NO_ACCESS_LISTS }),
  mapped('api.auth.enable', 'bool'),
  // Not implemented: localhost needs a token like everyone else, which is the safe side.
  stored('api.auth.disable_localhost', 'bool', false),
  mapped('api.auth.username', 'string'),
  // The Restreamer UI shows it in its Settings and logs in with it after a restart, and copes
  // without: an empty field keeps the password, the stored refresh token logs in (docs/security.md).
  mapped('api.auth.password', 'string', { secret: true, withheld: true }),
  mapped('api.auth.jwt.secret', 'string', { secret: true, withheld: true, fileOnly: SIGNS_TOKENS }),
  mapped('api.auth.auth0.enable', 'bool'),
  mapped('api.auth.auth0.tenants', 'tenants', { fileOnly: ADDS_LOGINS }),
  stored('tls.address', 'string', ':8181'),
  stored('tls.enable', 'bool', false, { refuse: NO_HTTPS }),
  stored('tls.auto', 'bool', false, { refuse: NO_HTTPS }),
  stored('tls.email', 'string', 'cert@datarhei.com'),
  mapped('tls.cert_file', 'string', { fileOnly: MOVES_FILES }),
  mapped('tls.key_file', 'string', { fileOnly: MOVES_FILES }),
  stored('storage.mimetypes_file', 'string', './mime.types'),
  mapped('storage.disk.dir', 'string', { fileOnly: MOVES_FILES }),
  mapped('storage.disk.max_size_mbytes', 'int'),
  stored('storage.disk.cache.enable', 'bool', false),
  stored('storage.disk.cache.max_size_mbytes', 'int', 0, {
    range: { min: 0, max: 1_048_576, why: '1 TiB of cache in memory' },
  }),
  stored('storage.disk.cache.ttl_seconds', 'int', 300, { range: { min: 0, max: 31_536_000, why: 'a year' } }),
  stored('storage.disk.cache.max_file_size_mbytes', 'int', 1, {
    range: { min: 0, max: 1_048_576, why: '1 TiB' },
  }),
  stored('storage.disk.cache.types.allow', 'strings', [], { variable: 'storage.disk.cache.type.allow' }),
  stored('storage.disk.cache.types.block', 'strings', ['.m3u8', '.mpd'], {
    variable: 'storage.disk.cache.type.block',
  }),
  mapped('storage.memory.auth.enable', 'bool'),
  mapped('storage.memory.auth.username', 'string'),
  // Answered: the Restreamer UI builds the HLS push address it shows from it, and it opens nothing
  // a token does not (PUT /api/v3/fs/mem writes memfs too).
  mapped('storage.memory.auth.password', 'string', { secret: true }),
  mapped('storage.memory.max_size_mbytes', 'int'),
  mapped('storage.memory.purge', 'bool'),
  mapped('storage.s3', 'objects', { secret: true, fileOnly: MOUNTS_BUCKETS }),
  mapped('storage.cors.origins', 'strings'),
  mapped('rtmp.enable', 'bool'),
  mapped('rtmp.enable_tls', 'bool'),
  mapped('rtmp.address', 'string'),
  mapped('rtmp.address_tls', 'string'),
  mapped('rtmp.app', 'string'),
  mapped('rtmp.token', 'string', { secret: true }),
  mapped('srt.enable', 'bool'),
  mapped('srt.address', 'string'),
  mapped('srt.passphrase', 'string', { secret: true }),
  mapped('srt.token', 'string', { secret: true }),
  mapped('srt.log.enable', 'bool'),
  mapped('srt.log.topics', 'strings'),
  mapped('ffmpeg.binary', 'string', { fileOnly: RUNS_PROGRAM }),
  mapped('ffmpeg.max_processes', 'int'),
  mapped('ffmpeg.access.input.allow', 'strings', { fileOnly: LIFTS_POLICY }),
  mapped('ffmpeg.access.input.block', 'strings', { fileOnly: LIFTS_POLICY }),
  mapped('ffmpeg.access.output.allow', 'strings', { fileOnly: LIFTS_POLICY }),
  mapped('ffmpeg.access.output.block', 'strings', { fileOnly: LIFTS_POLICY }),
  mapped('ffmpeg.log.max_lines', 'int'),
  mapped('ffmpeg.log.max_history', 'int'),
  stored('playout.enable', 'bool', false),
  stored('playout.min_port', 'int', 0, { range: PORT }),
  stored('playout.max_port', 'int', 0, { range: PORT }),
  stored('debug.profiling', 'bool', false),
  stored('debug.force_gc', 'int', 0, {
    range: { min: 0, max: 86_400, why: 'seconds between forced collections: a day' },
  }),
  stored('debug.memory_limit_mbytes', 'int', 0, { range: { min: 0, max: 1_048_576, why: '1 TiB' } }),
  mapped('metrics.enable', 'bool'),
  mapped('metrics.enable_prometheus', 'bool'),
  mapped('metrics.range_sec', 'int', { variable: 'metrics.range_seconds' }),
  mapped('metrics.interval_sec', 'int', { variable: 'metrics.interval_seconds' }),
  mapped('sessions.enable', 'bool'),
  mapped('sessions.ip_ignorelist', 'strings'),
  mapped('sessions.session_timeout_sec', 'int'),
  mapped('sessions.persist', 'bool'),
  mapped('sessions.persist_interval_sec', 'int'),
  mapped('sessions.max_bitrate_mbit', 'int'),
  mapped('sessions.max_sessions', 'int'),
  stored('service.enable', 'bool', false),
  stored('service.token', 'string', '', { secret: true }),
  stored('service.url', 'string', 'https://service.datarhei.com'),
  stored('router.blocked_prefixes', 'strings', ['/api']),
  stored('router.routes', 'map', {}),
  stored('router.ui_path', 'string', ''),
];

/**
 * streamcore's own keys that the v16 layout does not carry and that only the config file may set:
 * a body naming them would otherwise be kept as an unknown key (and have no effect), so it is
 * refused like the file-only keys above, with the reason. Never shown by `GET /api/v3/config`.
 */
export const OWN_FILE_ONLY_FIELDS: readonly V16Field[] = [
  mapped('ffmpeg.sandbox', 'string', { fileOnly: 'it decides whether encoders run confined' }),
  mapped('ffmpeg.access.input.paths', 'strings', { fileOnly: LIFTS_POLICY }),
  mapped('ffmpeg.access.output.paths', 'strings', { fileOnly: LIFTS_POLICY }),
  mapped('ffmpeg.access.devices', 'strings', { fileOnly: LIFTS_POLICY }),
];

/** The v16 layout's version this server reads and answers. */
export const V16_VERSION = 3;

/** Every object on the way to a field (`api`, `api.auth`, …): a body must have objects there. */
export const V16_SECTIONS: ReadonlySet<string> = new Set(
  V16_FIELDS.flatMap((field) => {
    const parts = field.path.split('.');
    return parts.slice(0, -1).map((_, index) => parts.slice(0, index + 1).join('.'));
  }),
);
