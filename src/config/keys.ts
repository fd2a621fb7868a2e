/**
 * Every configuration key, declared once (docs/configuration.md#declaring-a-key): its file path,
 * the env vars that override it (the first canonical, the rest accepted aliases), its kind and
 * default, an integer's bounds with the reason for the ceiling, whether it is a secret, whether
 * only the config file may change it, and how the v16 layout (datarhei Core v16.14.0,
 * `config/data.go`) carries it. Keys of the v16 layout that streamcore does not implement are
 * declared here too (`v16Only`): they are stored as a client sent them and answered unchanged.
 *
 * Derived from this table: the `Config` type and `defaultConfig()` (schema.ts), `KEYS` (below; the
 * loader, the validator and the reload read it) and the v16 field list (config-api/v16-fields.ts).
 * Longer than 300 lines because it is one table: a key is added by one entry here.
 */
import {
  bool,
  int,
  isDeclaredKey,
  list,
  map,
  oneOf,
  patterns,
  s3Storages,
  string,
  tenants,
  v16Only,
  webhooks,
  type DeclaredKey,
  type KeyDeclaration,
} from './declare-key.js';
import type { IntRange } from './int-range.js';

/** Values of `log.level`: the reference's, and pino's `trace` and `fatal`. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/** Values of `cluster.media` (docs/cluster.md#media-from-any-node). */
export const CLUSTER_MEDIA_MODES = ['redirect', 'proxy'] as const;

/** Values of `ffmpeg.sandbox`. */
export const SANDBOX_MODES = ['auto', 'on', 'off'] as const;
export type SandboxMode = (typeof SANDBOX_MODES)[number];

/** Values of `cluster.reference_placement` (docs/cluster.md#placement). */
export const REFERENCE_PLACEMENTS = ['load', 'spread', 'together'] as const;

// Why the config API may not change a key (`fileOnly`): what it names would give an API token the
// machine once the server restarts (docs/security.md, "What the config API cannot do").
const RUNS_PROGRAM = 'it names the program the server runs for every process';
const MOVES_FILES = 'it decides which directory the server reads, writes or serves';
const UNBLOCKS_ROUTES = 'it decides which paths the served directories may take over';
const LIFTS_POLICY = 'it decides what encoders may read and write';
const SIGNS_TOKENS = 'it signs every token: whoever chooses it can make tokens of their own';
const ADDS_LOGINS =
  'it decides who may log in: a tenant of their own would keep a token holder in after a password change';
const MOUNTS_BUCKETS =
  'it decides which servers the server connects to with which keys, and what it serves and lets encoders write';
const CHOOSES_CA = 'it decides which certificate authority the server trusts and serves certificates of';
const JOINS_CLUSTER =
  "it decides which machines the server takes processes from and sends its clients' tokens to (docs/cluster.md)";

// Why an unimplemented v16 key refuses any value but its default (`refuse`): safe before compatible.
const NO_ACCESS_LISTS = 'not enforced by streamcore; restrict access with a firewall or proxy';

const PORT: IntRange = { min: 0, max: 65_535, why: 'a TCP or UDP port' };

/**
 * The declarations, by dotted path. Streamcore's own keys are in the order a new config file
 * lists them; the v16 layout's unimplemented keys stand beside their section.
 */
export const DECLARED_KEYS = {
  id: string('', { env: 'CORE_ID', v16: true, doc: 'instance id; Prometheus `core` label' }),
  name: string('', { env: 'CORE_NAME', v16: true, doc: 'human name' }),
  'log.level': oneOf(LOG_LEVELS, 'info', {
    env: 'CORE_LOG_LEVEL',
    v16: true,
    doc: 'the server log (stdout and `GET /api/v3/log`) leaves out lines below it',
  }),
  address: string(':8080', {
    env: 'CORE_ADDRESS',
    v16: true,
    doc: 'HTTP listen address; `:port` on all IPv4 interfaces (loopback, and the API local-only, with auth off)',
  }),
  'db.dir': string('./config', {
    env: 'CORE_DB_DIR',
    fileOnly: MOVES_FILES,
    v16: true,
    doc: 'where `db.json` (processes) and `sessions/` (session history) live',
  }),
  'host.name': list([], {
    env: 'CORE_HOST_NAME',
    v16: true,
    doc: 'public host names (DNS names or IPs, no scheme or port); clients build viewer addresses from the first one',
  }),
  'host.auto': v16Only('bool', false),
  'api.trusted_proxies': list([], {
    env: 'CORE_API_TRUSTED_PROXIES',
    doc: 'CIDRs whose `X-Forwarded-For` is believed; otherwise the socket address is the client',
  }),
  'api.max_body_kbytes': int(64, {
    env: 'CORE_API_MAX_BODY_KBYTES',
    range: { min: 1, max: 65_536, why: 'a body is held in memory whole before it is parsed' },
    doc: 'bound on JSON API bodies (413 beyond)',
  }),
  'api.workers': int(0, {
    env: 'CORE_API_WORKERS',
    range: { min: 0, max: 64, why: 'each worker is a process with its own heap (about 60 MiB)' },
    fileOnly: 'it decides how many processes the server forks',
    doc: 'API worker processes answering logins and metric queries on other cores (one per core but one); 0: none',
  }),
  'api.timeouts.header_sec': int(10, {
    env: 'CORE_API_TIMEOUTS_HEADER_SEC',
    range: { min: 1, max: 600, why: 'a longer wait only helps a client that holds sockets open' },
    doc: 'all request headers must arrive within this (408 and close beyond); at least 1',
  }),
  'api.timeouts.request_sec': int(300, {
    env: 'CORE_API_TIMEOUTS_REQUEST_SEC',
    range: { min: 0, max: 86_400, why: 'a day; 0 turns the limit off' },
    doc: 'the whole request, body included, must arrive within this (408 and close); 0: no limit (long streamed uploads)',
  }),
  'api.timeouts.idle_sec': int(60, {
    env: 'CORE_API_TIMEOUTS_IDLE_SEC',
    range: { min: 0, max: 86_400, why: 'a day; 0 turns the limit off' },
    doc: 'a connection silent both ways this long is closed (a stalled body too); 0: never',
  }),
  'api.timeouts.keepalive_sec': int(5, {
    env: 'CORE_API_TIMEOUTS_KEEPALIVE_SEC',
    range: { min: 1, max: 600, why: 'an idle keep-alive connection only holds a socket' },
    doc: 'an idle keep-alive connection is closed after this; at least 1',
  }),
  'api.limits.max_processes': int(1000, {
    env: 'CORE_API_LIMITS_MAX_PROCESSES',
    range: {
      min: 1,
      max: 100_000,
      why: 'each defined process keeps its config, report and supervisor in memory',
    },
    doc: 'defined processes, running or not (400 naming the key beyond); `ffmpeg.max_processes` bounds running ones',
  }),
  'api.limits.max_metadata_bytes': int(64 * 1024 * 1024, {
    env: 'CORE_API_LIMITS_MAX_METADATA_BYTES',
    range: {
      min: 1,
      max: 1_073_741_824,
      why: 'all metadata is held in memory and written to the db directory',
    },
    doc: "all metadata together, every process's and the server's, as JSON, bytes (507 naming the key beyond)",
  }),
  'api.connections.max_per_address': int(64, {
    env: 'CORE_API_CONNECTIONS_MAX_PER_ADDRESS',
    range: { min: 0, max: 65_535, why: 'one address cannot open more connections to one port' },
    doc: 'open connections per client address (IPv6: per /64); more get 503 and are closed; 0: no cap',
  }),
  'api.connections.exempt': list(['127.0.0.0/8', '::1/128'], {
    env: 'CORE_API_CONNECTIONS_EXEMPT',
    doc: 'CIDRs the connection cap does not apply to (the encoders write to memfs over loopback; a reverse proxy belongs here)',
  }),
  'api.auth.enable': bool(false, {
    env: 'CORE_API_AUTH_ENABLE',
    v16: true,
    doc: 'protect `/api/v3/*` with JWT',
  }),
  'api.auth.username': string('', {
    env: 'CORE_API_AUTH_USERNAME',
    v16: true,
    doc: 'login user (required with auth)',
  }),
  // The Restreamer UI shows it in its Settings and logs in with it after a restart, and copes
  // without: an empty field keeps the password, the stored refresh token logs in (docs/security.md).
  'api.auth.password': string('', {
    env: 'CORE_API_AUTH_PASSWORD',
    secret: true,
    v16: { withheld: true },
    doc: 'login password (required with auth)',
  }),
  'api.auth.jwt.secret': string('', {
    env: 'CORE_API_AUTH_JWT_SECRET',
    secret: true,
    fileOnly: SIGNS_TOKENS,
    v16: { withheld: true },
    doc: 'HMAC secret of the tokens',
  }),
  'api.auth.jwt.access_ttl_sec': int(600, {
    env: 'CORE_API_AUTH_JWT_ACCESS_TTL_SEC',
    range: { min: 1, max: 86_400, why: 'a leaked access token works until it expires' },
    doc: 'access token lifetime',
  }),
  'api.auth.jwt.refresh_ttl_sec': int(86_400, {
    env: 'CORE_API_AUTH_JWT_REFRESH_TTL_SEC',
    range: { min: 1, max: 2_592_000, why: '30 days: a leaked refresh token renews access until it expires' },
    doc: 'refresh token lifetime',
  }),
  'api.auth.auth0.enable': bool(false, {
    env: 'CORE_API_AUTH_AUTH0_ENABLE',
    v16: true,
    doc: 'identity-provider login',
  }),
  'api.auth.auth0.tenants': tenants({
    env: 'CORE_API_AUTH_AUTH0_TENANTS',
    fileOnly: ADDS_LOGINS,
    v16: true,
    doc: 'tenants, see [auth.md](auth.md)',
  }),
  'api.auth.throttle.max_failures': int(5, {
    env: 'CORE_API_AUTH_THROTTLE_MAX_FAILURES',
    range: {
      min: 1,
      max: 1_000_000,
      why: 'one counter per address and username; this many is the throttle off',
    },
    doc: 'failed logins per address or username within the window before 429',
  }),
  'api.auth.throttle.window_sec': int(300, {
    env: 'CORE_API_AUTH_THROTTLE_WINDOW_SEC',
    range: { min: 1, max: 86_400, why: 'a day' },
    doc: 'sliding window of the failure count',
  }),
  'api.auth.throttle.delay_ms': int(1000, {
    env: 'CORE_API_AUTH_THROTTLE_DELAY_MS',
    range: { min: 0, max: 10_000, why: 'each failed login holds its request that long' },
    doc: 'non-blocking delay before a failed login is answered',
  }),
  'api.auth.throttle.max_tracked': int(10_000, {
    env: 'CORE_API_AUTH_THROTTLE_MAX_TRACKED',
    range: { min: 1, max: 1_000_000, why: 'each address and username is remembered in memory' },
    doc: 'addresses and usernames the throttle remembers (each); locks are evicted last',
  }),
  // Not implemented: localhost needs a token like everyone else, which is the safe side.
  'api.auth.disable_localhost': v16Only('bool', false),
  'api.read_only': v16Only('bool', false, { refuse: 'a read-only API is not implemented by streamcore' }),
  'api.access.http.allow': v16Only('strings', [], { refuse: NO_ACCESS_LISTS }),
  'api.access.http.block': v16Only('strings', [], { refuse: NO_ACCESS_LISTS }),
  'api.access.https.allow': v16Only('strings', [], { refuse: NO_ACCESS_LISTS }),
  'api.access.https.block': v16Only('strings', [], { refuse: NO_ACCESS_LISTS }),
  'metrics.enable': bool(false, { env: 'CORE_METRICS_ENABLE', v16: true, doc: 'collect metrics' }),
  'metrics.enable_prometheus': bool(false, {
    env: 'CORE_METRICS_ENABLE_PROMETHEUS',
    v16: true,
    doc: 'serve `GET /metrics`',
  }),
  'metrics.range_sec': int(300, {
    env: 'CORE_METRICS_RANGE_SECONDS',
    range: { min: 1, max: 604_800, why: "a week in memory; longer history is metrics.history's" },
    v16: { variable: 'metrics.range_seconds' },
    doc: 'how long samples stay queryable',
  }),
  'metrics.interval_sec': int(2, {
    env: 'CORE_METRICS_INTERVAL_SECONDS',
    range: { min: 1, max: 3600, why: 'an hour; the history tiers are coarser still' },
    v16: { variable: 'metrics.interval_seconds' },
    doc: 'collection interval',
  }),
  'metrics.prometheus.bearer_token': string('', {
    env: 'CORE_METRICS_PROMETHEUS_BEARER_TOKEN',
    secret: true,
    doc: 'optional scrape credential (bearer)',
  }),
  'metrics.prometheus.username': string('', {
    env: 'CORE_METRICS_PROMETHEUS_USERNAME',
    doc: 'optional scrape credential (basic auth user)',
  }),
  'metrics.prometheus.password': string('', {
    env: 'CORE_METRICS_PROMETHEUS_PASSWORD',
    secret: true,
    doc: 'optional scrape credential (basic auth password)',
  }),
  'metrics.query.max_items': int(1000, {
    env: 'CORE_METRICS_QUERY_MAX_ITEMS',
    range: { min: 1, max: 100_000, why: 'an answer is built in memory' },
    doc: 'query items per metrics query',
  }),
  'metrics.query.max_pattern_length': int(1000, {
    env: 'CORE_METRICS_QUERY_MAX_PATTERN_LENGTH',
    range: { min: 1, max: 100_000, why: 'a pattern is compiled for each query' },
    doc: 'characters per label pattern',
  }),
  'metrics.query.max_total_pattern_length': int(16_000, {
    env: 'CORE_METRICS_QUERY_MAX_TOTAL_PATTERN_LENGTH',
    range: { min: 1, max: 1_000_000, why: 'the patterns are compiled for each query' },
    doc: 'characters of all label patterns of one query',
  }),
  'metrics.query.max_program_size': int(20_000, {
    env: 'CORE_METRICS_QUERY_MAX_PROGRAM_SIZE',
    range: { min: 10, max: 1_000_000, why: 'a compiled pattern is held in memory' },
    doc: 'RE2 instructions of one pattern, and of all patterns of one query',
  }),
  'metrics.query.max_time_ms': int(500, {
    env: 'CORE_METRICS_QUERY_MAX_TIME_MS',
    range: { min: 1, max: 60_000, why: 'a minute: the client waits that long for its 503' },
    doc: 'time budget of one metrics query, ms; 503 when spent',
  }),
  'metrics.history.enable': bool(true, {
    env: 'CORE_METRICS_HISTORY_ENABLE',
    doc: 'keep downsampled history on disk (with `metrics.enable`), see [history.md](history.md)',
  }),
  'metrics.history.dir': string('', {
    env: 'CORE_METRICS_HISTORY_DIR',
    doc: 'directory of the history files',
  }),
  'metrics.history.minute_retention_days': int(7, {
    env: 'CORE_METRICS_HISTORY_MINUTE_RETENTION_DAYS',
    range: { min: 1, max: 90, why: 'the minute tier is for recent detail; the hour tier keeps the rest' },
    doc: '1-minute points kept (1 … 90 days)',
  }),
  'metrics.history.hour_retention_days': int(400, {
    env: 'CORE_METRICS_HISTORY_HOUR_RETENTION_DAYS',
    range: { min: 1, max: 3660, why: 'ten years' },
    doc: '1-hour points kept (1 … 3660 days)',
  }),
  'metrics.history.max_size_mbytes': int(1024, {
    env: 'CORE_METRICS_HISTORY_MAX_SIZE_MBYTES',
    range: { min: 0, max: 1_048_576, why: '1 TiB; 0 means no cap' },
    doc: 'cap on the history files, MiB; the oldest sealed file goes first; 0 = none',
  }),
  'storage.disk.dir': string('./data', {
    env: 'CORE_STORAGE_DISK_DIR',
    fileOnly: MOVES_FILES,
    v16: true,
    doc: 'root of the disk filesystem (mounted at `/`)',
  }),
  'storage.disk.max_size_mbytes': int(0, {
    env: ['CORE_STORAGE_DISK_MAX_SIZE_MBYTES', 'CORE_STORAGE_DISK_MAXSIZEMBYTES'],
    range: { min: 0, max: 1_073_741_824, why: '1 PiB; 0 means no limit' },
    v16: true,
    doc: 'limit for writes through the server; 0 = unlimited',
  }),
  'storage.disk.cache.enable': v16Only('bool', false),
  'storage.disk.cache.max_size_mbytes': v16Only('int', 0, {
    range: { min: 0, max: 1_048_576, why: '1 TiB of cache in memory' },
  }),
  'storage.disk.cache.ttl_seconds': v16Only('int', 300, {
    range: { min: 0, max: 31_536_000, why: 'a year' },
  }),
  'storage.disk.cache.max_file_size_mbytes': v16Only('int', 1, {
    range: { min: 0, max: 1_048_576, why: '1 TiB' },
  }),
  'storage.disk.cache.types.allow': v16Only('strings', [], { variable: 'storage.disk.cache.type.allow' }),
  'storage.disk.cache.types.block': v16Only('strings', ['.m3u8', '.mpd'], {
    variable: 'storage.disk.cache.type.block',
  }),
  'storage.memory.auth.enable': bool(true, {
    env: 'CORE_STORAGE_MEMORY_AUTH_ENABLE',
    v16: true,
    doc: 'basic auth for writes to `/memfs/`',
  }),
  'storage.memory.auth.username': string('admin', {
    env: 'CORE_STORAGE_MEMORY_AUTH_USERNAME',
    v16: true,
    doc: 'memfs write user',
  }),
  // Answered: the Restreamer UI builds the HLS push address it shows from it, and it opens nothing
  // a token does not (PUT /api/v3/fs/mem writes memfs too).
  'storage.memory.auth.password': string('', {
    env: 'CORE_STORAGE_MEMORY_AUTH_PASSWORD',
    secret: true,
    v16: true,
    doc: 'memfs write password',
  }),
  'storage.memory.max_size_mbytes': int(0, {
    env: ['CORE_STORAGE_MEMORY_MAX_SIZE_MBYTES', 'CORE_STORAGE_MEMORY_MAXSIZEMBYTES'],
    range: { min: 0, max: 1_048_576, why: "1 TiB, more than any machine's memory; 0 means no limit" },
    v16: true,
    doc: 'memfs limit; 0 = unlimited',
  }),
  'storage.memory.purge': bool(false, {
    env: 'CORE_STORAGE_MEMORY_PURGE',
    v16: true,
    doc: 'delete the oldest files when memfs is full instead of 507',
  }),
  'storage.cors.origins': list(['*'], {
    env: 'CORE_STORAGE_CORS_ORIGINS',
    v16: true,
    doc: '`Access-Control-Allow-Origin`; with auth off, none for the API; add `"null"` for player pages',
  }),
  'storage.mimetypes_file': v16Only('string', './mime.types'),
  // Holds access keys and passwords: never printed; the config API withholds the secrets nested in
  // its entries (config-api/s3-secrets.ts).
  'storage.s3': s3Storages({
    env: 'CORE_STORAGE_S3',
    secret: true,
    fileOnly: MOUNTS_BUCKETS,
    v16: true,
    doc: 'S3 buckets as filesystems ([storage.md](storage.md#s3-filesystems)); env: URLs joined by `|`',
  }),
  'ffmpeg.binary': string('ffmpeg', {
    env: 'CORE_FFMPEG_BINARY',
    fileOnly: RUNS_PROGRAM,
    v16: true,
    doc: 'encoder executable (looked up in `PATH`); sandboxed: run by its real path, its directory shown',
  }),
  'ffmpeg.max_processes': int(0, {
    env: 'CORE_FFMPEG_MAXPROCESSES',
    range: { min: 0, max: 10_000, why: 'each is an ffmpeg process of its own; 0 means no limit' },
    v16: true,
    doc: 'running processes at most; 0 = unlimited',
  }),
  'ffmpeg.access.input.allow': patterns([], {
    env: 'CORE_FFMPEG_ACCESS_INPUT_ALLOW',
    fileOnly: LIFTS_POLICY,
    v16: true,
    doc: 'RE2 expressions every input address must match (docs/security.md#what-encoders-may-open)',
  }),
  'ffmpeg.access.input.block': patterns([], {
    env: 'CORE_FFMPEG_ACCESS_INPUT_BLOCK',
    fileOnly: LIFTS_POLICY,
    v16: true,
    doc: 'RE2 expressions no input address may match',
  }),
  'ffmpeg.access.input.paths': list([], {
    env: 'CORE_FFMPEG_ACCESS_INPUT_PATHS',
    fileOnly: LIFTS_POLICY,
    doc: 'absolute files or directories outside the disk directory encoders may read',
  }),
  'ffmpeg.access.output.allow': patterns([], {
    env: 'CORE_FFMPEG_ACCESS_OUTPUT_ALLOW',
    fileOnly: LIFTS_POLICY,
    v16: true,
    doc: 'RE2 expressions every output address must match',
  }),
  'ffmpeg.access.output.block': patterns([], {
    env: 'CORE_FFMPEG_ACCESS_OUTPUT_BLOCK',
    fileOnly: LIFTS_POLICY,
    v16: true,
    doc: 'RE2 expressions no output address may match',
  }),
  'ffmpeg.access.output.paths': list([], {
    env: 'CORE_FFMPEG_ACCESS_OUTPUT_PATHS',
    fileOnly: LIFTS_POLICY,
    doc: 'absolute files or directories outside the disk directory encoders may write',
  }),
  'ffmpeg.access.devices': list([], {
    env: 'CORE_FFMPEG_ACCESS_DEVICES',
    fileOnly: LIFTS_POLICY,
    doc: 'device formats (`v4l2`, `alsa`, …) encoders may open',
  }),
  'ffmpeg.sandbox': oneOf(SANDBOX_MODES, 'auto', {
    env: 'CORE_FFMPEG_SANDBOX',
    fileOnly: 'it decides whether encoders run confined',
    doc: 'run encoders in bubblewrap: `auto` where it works, `on` (refuse to start without it), `off` (docs/security.md)',
  }),
  'ffmpeg.log.max_lines': int(50, {
    env: 'CORE_FFMPEG_LOG_MAX_LINES',
    range: { min: 0, max: 10_000, why: 'kept in memory for every process and each of its kept runs' },
    v16: true,
    doc: 'log lines kept per run',
  }),
  'ffmpeg.log.max_history': int(3, {
    env: 'CORE_FFMPEG_LOG_MAX_HISTORY',
    range: { min: 0, max: 100, why: "each run's log is kept in memory" },
    v16: true,
    doc: 'earlier runs kept in the report',
  }),
  'rtmp.enable': bool(false, {
    env: 'CORE_RTMP_ENABLE',
    v16: true,
    doc: 'run the RTMP server ([ingest.md](ingest.md))',
  }),
  'rtmp.enable_tls': bool(false, {
    env: 'CORE_RTMP_ENABLE_TLS',
    v16: true,
    doc: "also serve RTMPS on `rtmp.address_tls` with HTTPS's certificate (needs `rtmp.enable`; own files or `tls.auto`)",
  }),
  'rtmp.address': string(':1935', {
    env: 'CORE_RTMP_ADDRESS',
    v16: true,
    doc: 'RTMP listen address; `:port`: every interface with `rtmp.token` set, else `127.0.0.1` (warned)',
  }),
  'rtmp.address_tls': string(':1936', {
    env: 'CORE_RTMP_ADDRESS_TLS',
    v16: true,
    doc: 'RTMPS listen address; must differ from `rtmp.address`',
  }),
  'rtmp.app': string('/', {
    env: 'CORE_RTMP_APP',
    v16: true,
    doc: 'publish paths must lie under it, e.g. `/live`; `/` = anywhere',
  }),
  'rtmp.token': string('', {
    env: 'CORE_RTMP_TOKEN',
    secret: true,
    v16: true,
    doc: 'required from publishers and players when set (`?token=` or last path element); never printed',
  }),
  'srt.enable': bool(false, {
    env: 'CORE_SRT_ENABLE',
    v16: true,
    doc: 'run the SRT server ([ingest.md](ingest.md)); refused where the SRT addon is not built',
  }),
  'srt.address': string(':6000', {
    env: 'CORE_SRT_ADDRESS',
    v16: true,
    doc: 'SRT (UDP) listen address; `:port`: every interface with `srt.token` set, else `127.0.0.1`',
  }),
  'srt.passphrase': string('', {
    env: 'CORE_SRT_PASSPHRASE',
    secret: true,
    v16: true,
    doc: 'encryption passphrase every caller must use (10–79 characters, no `&`, `#`, white space); never printed',
  }),
  'srt.token': string('', {
    env: 'CORE_SRT_TOKEN',
    secret: true,
    v16: true,
    doc: 'required in the stream id (`,token:<token>`) when set (no `&`, `#`, white space); never printed',
  }),
  'srt.log.enable': bool(false, {
    env: 'CORE_SRT_LOG_ENABLE',
    v16: true,
    doc: "accepted for compatibility; libsrt's log is not collected",
  }),
  'srt.log.topics': list([], {
    env: 'CORE_SRT_LOG_TOPICS',
    v16: true,
    doc: 'accepted for compatibility (comma-separated in the env var)',
  }),
  'tls.address': string(':8181', {
    env: 'CORE_TLS_ADDRESS',
    v16: true,
    doc: 'HTTPS listen address; `:port` as for `address`; must differ from it',
  }),
  'tls.enable': bool(false, {
    env: 'CORE_TLS_ENABLE',
    v16: true,
    doc: 'serve HTTPS on `tls.address` beside the plain listener ([tls.md](tls.md))',
  }),
  'tls.auto': bool(false, {
    env: 'CORE_TLS_AUTO',
    v16: true,
    doc: 'obtain and renew the certificate for every `host.name` over ACME (HTTP-01 on `address`); needs `tls.enable`',
  }),
  'tls.email': string('cert@datarhei.com', {
    env: 'CORE_TLS_EMAIL',
    v16: true,
    doc: 'contact address of the ACME account',
  }),
  'tls.acme.directory_url': string('https://acme-v02.api.letsencrypt.org/directory', {
    env: 'CORE_TLS_ACME_DIRECTORY_URL',
    fileOnly: CHOOSES_CA,
    doc: "the ACME server's directory (RFC 8555 §7.1.1); default Let's Encrypt production",
  }),
  'tls.acme.ca_file': string('', {
    env: 'CORE_TLS_ACME_CA_FILE',
    fileOnly: CHOOSES_CA,
    doc: 'PEM roots to trust when talking to the ACME server (`""`: the system\'s)',
  }),
  'tls.cert_file': string('', {
    env: ['CORE_TLS_CERT_FILE', 'CORE_TLS_CERTFILE'],
    fileOnly: MOVES_FILES,
    v16: true,
    doc: 'own PEM certificate (chain) for HTTPS and RTMPS when `tls.auto` is off; re-read when it changes',
  }),
  'tls.key_file': string('', {
    env: ['CORE_TLS_KEY_FILE', 'CORE_TLS_KEYFILE'],
    fileOnly: MOVES_FILES,
    v16: true,
    doc: 'its PEM private key',
  }),
  'router.blocked_prefixes': list(['/api'], {
    env: 'CORE_ROUTER_BLOCKED_PREFIXES',
    fileOnly: UNBLOCKS_ROUTES,
    v16: true,
    doc: 'prefixes no entry of `router.routes` may start with (a plain string prefix test, as the reference)',
  }),
  'router.routes': map(
    {},
    {
      env: 'CORE_ROUTER_ROUTES',
      fileOnly: MOVES_FILES,
      v16: true,
      doc: '`"/path": "/other"` redirects (301); `"/path/*": "<dir>"` serves a directory under `/path/`',
    },
  ),
  'router.ui_path': string('', {
    env: 'CORE_ROUTER_UI_PATH',
    fileOnly: MOVES_FILES,
    v16: true,
    doc: 'a directory served at `/ui/` (a Restreamer UI build); empty: none',
  }),
  'sessions.enable': bool(true, { env: 'CORE_SESSIONS_ENABLE', v16: true, doc: 'count sessions' }),
  'sessions.ip_ignorelist': list(['127.0.0.1/32', '::1/128'], {
    env: 'CORE_SESSIONS_IP_IGNORELIST',
    v16: true,
    doc: 'clients not counted',
  }),
  'sessions.session_timeout_sec': int(30, {
    env: 'CORE_SESSIONS_SESSION_TIMEOUT_SEC',
    range: { min: 1, max: 86_400, why: 'a day' },
    v16: true,
    doc: 'idle time after which a session closes',
  }),
  'sessions.persist': bool(false, {
    env: 'CORE_SESSIONS_PERSIST',
    v16: true,
    doc: 'keep the session history across restarts',
  }),
  'sessions.persist_interval_sec': int(300, {
    env: 'CORE_SESSIONS_PERSIST_INTERVAL_SEC',
    range: { min: 1, max: 86_400, why: 'a day' },
    v16: true,
    doc: 'how often the history is written',
  }),
  'sessions.max_bitrate_mbit': int(0, {
    env: 'CORE_SESSIONS_MAXBITRATE_MBIT',
    range: { min: 0, max: 1_000_000, why: '1 Tbit/s; 0 means no limit' },
    v16: true,
    doc: 'egress limit for new viewers; 0 = unlimited',
  }),
  'sessions.max_sessions': int(0, {
    env: ['CORE_SESSIONS_MAX_SESSIONS', 'CORE_SESSIONS_MAXSESSIONS'],
    range: { min: 0, max: 1_000_000, why: 'each session is kept in memory; 0 means no limit' },
    v16: true,
    doc: 'concurrent viewers; 0 = unlimited',
  }),
  'events.webhooks': webhooks({
    env: 'CORE_EVENTS_WEBHOOKS',
    // Each item holds its signing secret.
    secret: true,
    fileOnly: 'it decides where the server sends its events, with the secrets that sign them',
    doc: 'receivers of events: `{url, events, secret}` each ([events.md](events.md#webhooks))',
  }),
  'events.allow_loopback_webhooks': bool(false, {
    env: 'CORE_EVENTS_ALLOW_LOOPBACK_WEBHOOKS',
    fileOnly: 'it lets the server send requests to services on its own machine',
    doc: 'let webhooks reach loopback addresses (receivers on this machine, tests)',
  }),
  'events.replay_events': int(1000, {
    env: 'CORE_EVENTS_REPLAY_EVENTS',
    range: { min: 1, max: 100_000, why: 'each kept event is held in memory' },
    doc: 'latest events kept for clients that reconnect',
  }),
  'events.max_buffered_kbytes': int(1024, {
    env: 'CORE_EVENTS_MAX_BUFFERED_KBYTES',
    range: { min: 16, max: 65_536, why: 'held in memory per stream client that stops reading' },
    doc: 'unread output a stream client may leave before it is dropped, KiB',
  }),
  'events.webhook_queue_events': int(1000, {
    env: 'CORE_EVENTS_WEBHOOK_QUEUE_EVENTS',
    range: { min: 1, max: 100_000, why: 'held in memory per webhook whose receiver is down' },
    doc: 'events waiting per webhook; past it the oldest are dropped (and counted)',
  }),
  'cluster.enable': bool(false, {
    env: 'CORE_CLUSTER_ENABLE',
    fileOnly: JOINS_CLUSTER,
    doc: 'join a cluster of nodes coordinated through etcd; off: a single node, no etcd',
  }),
  'cluster.etcd.endpoints': list([], {
    env: 'CORE_CLUSTER_ETCD_ENDPOINTS',
    fileOnly: JOINS_CLUSTER,
    doc: 'client URLs of the etcd members (`http://host:2379`)',
  }),
  'cluster.etcd.username': string('', {
    env: 'CORE_CLUSTER_ETCD_USERNAME',
    fileOnly: JOINS_CLUSTER,
    doc: 'etcd user when etcd has authentication on',
  }),
  'cluster.etcd.password': string('', {
    env: 'CORE_CLUSTER_ETCD_PASSWORD',
    secret: true,
    fileOnly: JOINS_CLUSTER,
    doc: 'password of the etcd user',
  }),
  'cluster.etcd.ca_file': string('', {
    env: 'CORE_CLUSTER_ETCD_CA_FILE',
    fileOnly: JOINS_CLUSTER,
    doc: "PEM of the CA that signed etcd's server certificates (https endpoints); '' = the system's CAs",
  }),
  'cluster.etcd.cert_file': string('', {
    env: 'CORE_CLUSTER_ETCD_CERT_FILE',
    fileOnly: JOINS_CLUSTER,
    doc: "PEM client certificate shown to etcd (etcd's `--client-cert-auth`); needs `key_file`",
  }),
  'cluster.etcd.key_file': string('', {
    env: 'CORE_CLUSTER_ETCD_KEY_FILE',
    fileOnly: JOINS_CLUSTER,
    doc: 'PEM private key of `cert_file`',
  }),
  'cluster.media': oneOf(CLUSTER_MEDIA_MODES, 'redirect', {
    env: 'CORE_CLUSTER_MEDIA',
    fileOnly:
      'it decides whether the server requests files of the addresses etcd lists and serves their answers',
    doc: 'a file another node has: `redirect` (307 to it) or `proxy` (fetched and passed on)',
  }),
  'cluster.node_id': string('', {
    env: 'CORE_CLUSTER_NODE_ID',
    fileOnly: JOINS_CLUSTER,
    doc: "this node's id in the cluster; '' = the instance `id`",
  }),
  'cluster.advertise_address': string('', {
    env: 'CORE_CLUSTER_ADVERTISE_ADDRESS',
    fileOnly: JOINS_CLUSTER,
    doc: "base URL at which other nodes and clients reach this node's API; '' = the listen address",
  }),
  'cluster.lease_ttl_sec': int(8, {
    env: 'CORE_CLUSTER_LEASE_TTL_SEC',
    range: { min: 2, max: 60, why: 'the time a dead node keeps its processes' },
    doc: "seconds a node's registration outlives its last renewal; its processes move after it",
  }),
  'cluster.reference_placement': oneOf(REFERENCE_PLACEMENTS, 'load', {
    env: 'CORE_CLUSTER_REFERENCE_PLACEMENT',
    doc: 'processes with the same `reference`: `load` placed by load alone, `spread` on different nodes, `together` on one node, where there is room',
  }),
  // Sections of the v16 layout that streamcore does not implement at all.
  update_check: v16Only('bool', false),
  'log.topics': v16Only('strings', []),
  'log.max_lines': v16Only('int', 1000, {
    range: { min: 0, max: 100_000, why: 'the reference keeps that many log lines in memory' },
  }),
  'playout.enable': v16Only('bool', false),
  'playout.min_port': v16Only('int', 0, { range: PORT }),
  'playout.max_port': v16Only('int', 0, { range: PORT }),
  'debug.profiling': v16Only('bool', false),
  'debug.force_gc': v16Only('int', 0, {
    range: { min: 0, max: 86_400, why: 'seconds between forced collections: a day' },
  }),
  'debug.memory_limit_mbytes': v16Only('int', 0, { range: { min: 0, max: 1_048_576, why: '1 TiB' } }),
  'service.enable': v16Only('bool', false),
  'service.token': v16Only('string', '', { secret: true }),
  'service.url': v16Only('string', 'https://service.datarhei.com'),
} satisfies Record<string, KeyDeclaration>;

/** One of streamcore's keys as the loader reads it. */
export interface ConfigKey extends DeclaredKey<unknown> {
  readonly path: string;
}

/** Streamcore's own keys (not the v16 layout's unimplemented ones), in declaration order. */
export const KEYS: readonly ConfigKey[] = Object.entries(
  DECLARED_KEYS as Record<string, KeyDeclaration>,
).flatMap(([path, declaration]) => (isDeclaredKey(declaration) ? [{ path, ...declaration }] : []));
