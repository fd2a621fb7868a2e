/**
 * Every configuration key: its file path, the env vars that override it (first is the canonical
 * name, the rest are accepted aliases), and its kind. The loader and the validator are driven by
 * this one table, so a key cannot be readable from the file but forgotten in the env, or the reverse.
 */
import type { IntRange } from './int-range.js';

/** `patterns`: a list like `list`, but env values split on white space only (expressions hold commas). */
export type KeyKind = 'bool' | 'int' | 'string' | 'list' | 'patterns' | 'tenants' | 's3';

export interface ConfigKey {
  readonly path: string;
  readonly env: readonly string[];
  readonly kind: KeyKind;
  /** Never printed in messages. */
  readonly secret?: boolean;
  /** Every `int` key has its bounds (docs/configuration.md, Keys). */
  readonly range?: IntRange;
}

function key(path: string, env: string | string[], kind: KeyKind, secret = false): ConfigKey {
  return { path, env: typeof env === 'string' ? [env] : env, kind, secret };
}

function int(path: string, env: string | string[], range: IntRange): ConfigKey {
  return { ...key(path, env, 'int'), range };
}

export const KEYS: readonly ConfigKey[] = [
  key('id', 'CORE_ID', 'string'),
  key('name', 'CORE_NAME', 'string'),
  key('address', 'CORE_ADDRESS', 'string'),
  key('db.dir', 'CORE_DB_DIR', 'string'),
  key('host.name', 'CORE_HOST_NAME', 'list'),
  key('api.trusted_proxies', 'CORE_API_TRUSTED_PROXIES', 'list'),
  int('api.max_body_kbytes', 'CORE_API_MAX_BODY_KBYTES', {
    min: 1,
    max: 65_536,
    why: 'a body is held in memory whole before it is parsed',
  }),
  int('api.timeouts.header_sec', 'CORE_API_TIMEOUTS_HEADER_SEC', {
    min: 1,
    max: 600,
    why: 'a longer wait only helps a client that holds sockets open',
  }),
  int('api.timeouts.request_sec', 'CORE_API_TIMEOUTS_REQUEST_SEC', {
    min: 0,
    max: 86_400,
    why: 'a day; 0 turns the limit off',
  }),
  int('api.timeouts.idle_sec', 'CORE_API_TIMEOUTS_IDLE_SEC', {
    min: 0,
    max: 86_400,
    why: 'a day; 0 turns the limit off',
  }),
  int('api.timeouts.keepalive_sec', 'CORE_API_TIMEOUTS_KEEPALIVE_SEC', {
    min: 1,
    max: 600,
    why: 'an idle keep-alive connection only holds a socket',
  }),
  int('api.limits.max_processes', 'CORE_API_LIMITS_MAX_PROCESSES', {
    min: 1,
    max: 100_000,
    why: 'each defined process keeps its config, report and supervisor in memory',
  }),
  int('api.limits.max_metadata_bytes', 'CORE_API_LIMITS_MAX_METADATA_BYTES', {
    min: 1,
    max: 1_073_741_824,
    why: 'all metadata is held in memory and written to the db directory',
  }),
  int('api.connections.max_per_address', 'CORE_API_CONNECTIONS_MAX_PER_ADDRESS', {
    min: 0,
    max: 65_535,
    why: 'one address cannot open more connections to one port',
  }),
  key('api.connections.exempt', 'CORE_API_CONNECTIONS_EXEMPT', 'list'),
  key('api.auth.enable', 'CORE_API_AUTH_ENABLE', 'bool'),
  key('api.auth.username', 'CORE_API_AUTH_USERNAME', 'string'),
  key('api.auth.password', 'CORE_API_AUTH_PASSWORD', 'string', true),
  key('api.auth.jwt.secret', 'CORE_API_AUTH_JWT_SECRET', 'string', true),
  int('api.auth.jwt.access_ttl_sec', 'CORE_API_AUTH_JWT_ACCESS_TTL_SEC', {
    min: 1,
    max: 86_400,
    why: 'a leaked access token works until it expires',
  }),
  int('api.auth.jwt.refresh_ttl_sec', 'CORE_API_AUTH_JWT_REFRESH_TTL_SEC', {
    min: 1,
    max: 2_592_000,
    why: '30 days: a leaked refresh token renews access until it expires',
  }),
  key('api.auth.auth0.enable', 'CORE_API_AUTH_AUTH0_ENABLE', 'bool'),
  key('api.auth.auth0.tenants', 'CORE_API_AUTH_AUTH0_TENANTS', 'tenants'),
  int('api.auth.throttle.max_failures', 'CORE_API_AUTH_THROTTLE_MAX_FAILURES', {
    min: 1,
    max: 1_000_000,
    why: 'one counter per address and username; this many is the throttle off',
  }),
  int('api.auth.throttle.window_sec', 'CORE_API_AUTH_THROTTLE_WINDOW_SEC', {
    min: 1,
    max: 86_400,
    why: 'a day',
  }),
  int('api.auth.throttle.delay_ms', 'CORE_API_AUTH_THROTTLE_DELAY_MS', {
    min: 0,
    max: 10_000,
    why: 'each failed login holds its request that long',
  }),
  int('api.auth.throttle.max_tracked', 'CORE_API_AUTH_THROTTLE_MAX_TRACKED', {
    min: 1,
    max: 1_000_000,
    why: 'each address and username is remembered in memory',
  }),
  key('metrics.enable', 'CORE_METRICS_ENABLE', 'bool'),
  key('metrics.enable_prometheus', 'CORE_METRICS_ENABLE_PROMETHEUS', 'bool'),
  int('metrics.range_sec', 'CORE_METRICS_RANGE_SECONDS', {
    min: 1,
    max: 604_800,
    why: "a week in memory; longer history is metrics.history's",
  }),
  int('metrics.interval_sec', 'CORE_METRICS_INTERVAL_SECONDS', {
    min: 1,
    max: 3600,
    why: 'an hour; the history tiers are coarser still',
  }),
  key('metrics.prometheus.bearer_token', 'CORE_METRICS_PROMETHEUS_BEARER_TOKEN', 'string', true),
  key('metrics.prometheus.username', 'CORE_METRICS_PROMETHEUS_USERNAME', 'string'),
  key('metrics.prometheus.password', 'CORE_METRICS_PROMETHEUS_PASSWORD', 'string', true),
  int('metrics.query.max_items', 'CORE_METRICS_QUERY_MAX_ITEMS', {
    min: 1,
    max: 100_000,
    why: 'an answer is built in memory',
  }),
  int('metrics.query.max_pattern_length', 'CORE_METRICS_QUERY_MAX_PATTERN_LENGTH', {
    min: 1,
    max: 100_000,
    why: 'a pattern is compiled for each query',
  }),
  int('metrics.query.max_total_pattern_length', 'CORE_METRICS_QUERY_MAX_TOTAL_PATTERN_LENGTH', {
    min: 1,
    max: 1_000_000,
    why: 'the patterns are compiled for each query',
  }),
  int('metrics.query.max_program_size', 'CORE_METRICS_QUERY_MAX_PROGRAM_SIZE', {
    min: 10,
    max: 1_000_000,
    why: 'a compiled pattern is held in memory',
  }),
  int('metrics.query.max_time_ms', 'CORE_METRICS_QUERY_MAX_TIME_MS', {
    min: 1,
    max: 60_000,
    why: 'a minute: the client waits that long for its 503',
  }),
  key('metrics.history.enable', 'CORE_METRICS_HISTORY_ENABLE', 'bool'),
  key('metrics.history.dir', 'CORE_METRICS_HISTORY_DIR', 'string'),
  int('metrics.history.minute_retention_days', 'CORE_METRICS_HISTORY_MINUTE_RETENTION_DAYS', {
    min: 1,
    max: 90,
    why: 'the minute tier is for recent detail; the hour tier keeps the rest',
  }),
  int('metrics.history.hour_retention_days', 'CORE_METRICS_HISTORY_HOUR_RETENTION_DAYS', {
    min: 1,
    max: 3660,
    why: 'ten years',
  }),
  int('metrics.history.max_size_mbytes', 'CORE_METRICS_HISTORY_MAX_SIZE_MBYTES', {
    min: 0,
    max: 1_048_576,
    why: '1 TiB; 0 means no cap',
  }),
  key('storage.disk.dir', 'CORE_STORAGE_DISK_DIR', 'string'),
  int(
    'storage.disk.max_size_mbytes',
    ['CORE_STORAGE_DISK_MAX_SIZE_MBYTES', 'CORE_STORAGE_DISK_MAXSIZEMBYTES'],
    { min: 0, max: 1_073_741_824, why: '1 PiB; 0 means no limit' },
  ),
  key('storage.memory.auth.enable', 'CORE_STORAGE_MEMORY_AUTH_ENABLE', 'bool'),
  key('storage.memory.auth.username', 'CORE_STORAGE_MEMORY_AUTH_USERNAME', 'string'),
  key('storage.memory.auth.password', 'CORE_STORAGE_MEMORY_AUTH_PASSWORD', 'string', true),
  int(
    'storage.memory.max_size_mbytes',
    ['CORE_STORAGE_MEMORY_MAX_SIZE_MBYTES', 'CORE_STORAGE_MEMORY_MAXSIZEMBYTES'],
    { min: 0, max: 1_048_576, why: "1 TiB, more than any machine's memory; 0 means no limit" },
  ),
  key('storage.memory.purge', 'CORE_STORAGE_MEMORY_PURGE', 'bool'),
  key('storage.cors.origins', 'CORE_STORAGE_CORS_ORIGINS', 'list'),
  // Holds access keys and passwords: never printed.
  key('storage.s3', 'CORE_STORAGE_S3', 's3', true),
  key('ffmpeg.binary', 'CORE_FFMPEG_BINARY', 'string'),
  int('ffmpeg.max_processes', 'CORE_FFMPEG_MAXPROCESSES', {
    min: 0,
    max: 10_000,
    why: 'each is an ffmpeg process of its own; 0 means no limit',
  }),
  key('ffmpeg.sandbox', 'CORE_FFMPEG_SANDBOX', 'string'),
  key('ffmpeg.access.input.allow', 'CORE_FFMPEG_ACCESS_INPUT_ALLOW', 'patterns'),
  key('ffmpeg.access.input.block', 'CORE_FFMPEG_ACCESS_INPUT_BLOCK', 'patterns'),
  key('ffmpeg.access.input.paths', 'CORE_FFMPEG_ACCESS_INPUT_PATHS', 'list'),
  key('ffmpeg.access.output.allow', 'CORE_FFMPEG_ACCESS_OUTPUT_ALLOW', 'patterns'),
  key('ffmpeg.access.output.block', 'CORE_FFMPEG_ACCESS_OUTPUT_BLOCK', 'patterns'),
  key('ffmpeg.access.output.paths', 'CORE_FFMPEG_ACCESS_OUTPUT_PATHS', 'list'),
  key('ffmpeg.access.devices', 'CORE_FFMPEG_ACCESS_DEVICES', 'list'),
  int('ffmpeg.log.max_lines', 'CORE_FFMPEG_LOG_MAX_LINES', {
    min: 0,
    max: 10_000,
    why: 'kept in memory for every process and each of its kept runs',
  }),
  int('ffmpeg.log.max_history', 'CORE_FFMPEG_LOG_MAX_HISTORY', {
    min: 0,
    max: 100,
    why: "each run's log is kept in memory",
  }),
  key('rtmp.enable', 'CORE_RTMP_ENABLE', 'bool'),
  key('rtmp.enable_tls', 'CORE_RTMP_ENABLE_TLS', 'bool'),
  key('rtmp.address', 'CORE_RTMP_ADDRESS', 'string'),
  key('rtmp.address_tls', 'CORE_RTMP_ADDRESS_TLS', 'string'),
  key('rtmp.app', 'CORE_RTMP_APP', 'string'),
  key('rtmp.token', 'CORE_RTMP_TOKEN', 'string', true),
  key('srt.enable', 'CORE_SRT_ENABLE', 'bool'),
  key('srt.address', 'CORE_SRT_ADDRESS', 'string'),
  key('srt.passphrase', 'CORE_SRT_PASSPHRASE', 'string', true),
  key('srt.token', 'CORE_SRT_TOKEN', 'string', true),
  key('srt.log.enable', 'CORE_SRT_LOG_ENABLE', 'bool'),
  key('srt.log.topics', 'CORE_SRT_LOG_TOPICS', 'list'),
  key('tls.cert_file', ['CORE_TLS_CERT_FILE', 'CORE_TLS_CERTFILE'], 'string'),
  key('tls.key_file', ['CORE_TLS_KEY_FILE', 'CORE_TLS_KEYFILE'], 'string'),
  key('sessions.enable', 'CORE_SESSIONS_ENABLE', 'bool'),
  key('sessions.ip_ignorelist', 'CORE_SESSIONS_IP_IGNORELIST', 'list'),
  int('sessions.session_timeout_sec', 'CORE_SESSIONS_SESSION_TIMEOUT_SEC', {
    min: 1,
    max: 86_400,
    why: 'a day',
  }),
  key('sessions.persist', 'CORE_SESSIONS_PERSIST', 'bool'),
  int('sessions.persist_interval_sec', 'CORE_SESSIONS_PERSIST_INTERVAL_SEC', {
    min: 1,
    max: 86_400,
    why: 'a day',
  }),
  int('sessions.max_bitrate_mbit', 'CORE_SESSIONS_MAXBITRATE_MBIT', {
    min: 0,
    max: 1_000_000,
    why: '1 Tbit/s; 0 means no limit',
  }),
  int('sessions.max_sessions', ['CORE_SESSIONS_MAX_SESSIONS', 'CORE_SESSIONS_MAXSESSIONS'], {
    min: 0,
    max: 1_000_000,
    why: 'each session is kept in memory; 0 means no limit',
  }),
];
