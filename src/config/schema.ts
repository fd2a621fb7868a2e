/**
 * The shape of streamcore's configuration (docs/configuration.md#keys). File keys are the JSON paths of
 * this object; `KEYS` in keys.ts maps each of them to its env vars and its kind.
 */

/** One identity-provider tenant (docs/auth.md#identity-provider-tenants). */
export interface Auth0Tenant {
  domain: string;
  audience: string;
  clientid: string;
  /** Provider subjects (`sub`) allowed to log in. */
  users: string[];
  /** Expected `iss`; default `https://<domain>/`. */
  issuer?: string;
  /** Where the key set is fetched; default `https://<domain>/.well-known/jwks.json`. */
  jwks_url?: string;
}

/** One S3 filesystem (docs/storage.md#s3-filesystems), in the reference's shape (`config/value/s3.go`). */
export interface S3Storage {
  /** API name (`/api/v3/fs/<name>`, `{fs:<name>}`), `[A-Za-z0-9_-]+`. */
  name: string;
  /** URL path it is served at, e.g. `/s3`. */
  mountpoint: string;
  /** Basic auth for writes and deletes through the mountpoint. */
  auth: { enable: boolean; username: string; password: string };
  /** `host` or `host:port`, without scheme. */
  endpoint: string;
  access_key_id: string;
  secret_access_key: string;
  bucket: string;
  region: string;
  use_ssl: boolean;
}

/** Values of `ffmpeg.sandbox`. */
export const SANDBOX_MODES = ['auto', 'on', 'off'] as const;
export type SandboxMode = (typeof SANDBOX_MODES)[number];

export interface Config {
  id: string;
  name: string;
  /** `host:port` or `:port`. */
  address: string;
  db: { dir: string };
  /**
   * The public host names of this server (datarhei Core's `host.name`): clients such as the
   * Restreamer UI build the addresses they show viewers from the first one. Empty: the host the
   * client reached the server by.
   */
  host: { name: string[] };
  api: {
    /** CIDRs whose `X-Forwarded-For` is believed (docs/auth.md#login-methods, docs/sessions.md#the-contract). Empty: the socket address only. */
    trusted_proxies: string[];
    /** Bound on JSON API request bodies, KiB. */
    max_body_kbytes: number;
    /** How long a client may take, seconds; 0 turns a limit off where noted (docs/security.md). */
    timeouts: {
      /** From connect (or the end of the previous answer) until all headers arrived; at least 1. */
      header_sec: number;
      /** From connect until the whole request, body included, arrived; 0: no limit. */
      request_sec: number;
      /** A connection silent in both directions this long is closed (a stalled body too); 0: never. */
      idle_sec: number;
      /** An idle keep-alive connection is closed after this long; at least 1. */
      keepalive_sec: number;
    };
    /** What the API may be made to hold (docs/security.md "Limits"); over one: 400 or 507 naming it. */
    limits: {
      /** Defined processes (running or not), at least 1; `ffmpeg.max_processes` bounds running encoders. */
      max_processes: number;
      /** All metadata together (every process's and the server's), as JSON, bytes; at least 1. */
      max_metadata_bytes: number;
    };
    connections: {
      /** Open connections per client address (IPv6: per /64); more are answered 503 and closed. 0: no cap. */
      max_per_address: number;
      /** CIDRs the cap does not apply to (the server's own encoders connect from loopback). */
      exempt: string[];
    };
    auth: {
      enable: boolean;
      username: string;
      password: string;
      jwt: { secret: string; access_ttl_sec: number; refresh_ttl_sec: number };
      auth0: { enable: boolean; tenants: Auth0Tenant[] };
      /** Brute-force protection of POST /api/login (docs/auth.md#login-methods). */
      /**
       * Brute-force protection of POST /api/login (docs/auth.md#login-methods) and of memfs basic auth. `max_tracked`
       * bounds the addresses and the usernames remembered (each); locked ones are evicted last.
       */
      throttle: { max_failures: number; window_sec: number; delay_ms: number; max_tracked: number };
    };
  };
  metrics: {
    enable: boolean;
    enable_prometheus: boolean;
    range_sec: number;
    interval_sec: number;
    /** Optional scrape credential for GET /metrics (docs/metrics.md#prometheus-get-metrics); empty strings mean "not set". */
    prometheus: { bearer_token: string; username: string; password: string };
    /** Bounds on a metrics query (docs/metrics.md#post-apiv3metrics-the-query). */
    query: {
      max_items: number;
      max_pattern_length: number;
      /** Characters of all label patterns of one query. */
      max_total_pattern_length: number;
      /** RE2 program instructions of one pattern, and of all patterns of one query. */
      max_program_size: number;
      /** Time budget of one query, ms (503 when spent). */
      max_time_ms: number;
    };
    /** Downsampled history on disk (docs/history.md). */
    history: {
      enable: boolean;
      /** Where the tiers' files go; empty = `<db.dir>/metrics`. */
      dir: string;
      minute_retention_days: number;
      hour_retention_days: number;
      /** Cap on the files' total size, MiB; 0 = none. */
      max_size_mbytes: number;
    };
  };
  storage: {
    disk: { dir: string; max_size_mbytes: number };
    memory: {
      auth: { enable: boolean; username: string; password: string };
      max_size_mbytes: number;
      purge: boolean;
    };
    cors: { origins: string[] };
    s3: S3Storage[];
  };
  ffmpeg: {
    binary: string;
    max_processes: number;
    /**
     * What encoders may open (issue 10): the reference's allow/block expressions per direction,
     * plus places outside the disk directory and device formats, both empty by default.
     */
    access: {
      input: { allow: string[]; block: string[]; paths: string[] };
      output: { allow: string[]; block: string[]; paths: string[] };
      devices: string[];
    };
    /**
     * Confine every encoder with bubblewrap (docs/security.md): `auto` where `bwrap` works,
     * `on` or refuse to start, `off` never.
     */
    sandbox: SandboxMode;
    log: { max_lines: number; max_history: number };
  };
  /** The RTMP server (datarhei Core's `rtmp` section, docs/ingest.md). */
  rtmp: {
    enable: boolean;
    /** Also listen for RTMPS on `address_tls` with `tls.cert_file` / `tls.key_file`. */
    enable_tls: boolean;
    address: string;
    address_tls: string;
    /** Publish paths must lie under this app, e.g. `/live`; `/` = anywhere. */
    app: string;
    /** Required from publishers and players when not empty (`?token=` or the last path element). */
    token: string;
  };
  /** The SRT server (datarhei Core's `srt` section, docs/ingest.md). */
  srt: {
    enable: boolean;
    /** UDP listen address, `host:port` or `:port`. */
    address: string;
    /** Encryption passphrase every caller must use (10–79 characters); '' = unencrypted. */
    passphrase: string;
    /** Required in the stream id (`,token:<token>`) when not empty. */
    token: string;
    /** Accepted for compatibility; libsrt's log is not collected (GET /api/v3/srt's logs stay empty). */
    log: { enable: boolean; topics: string[] };
  };
  /** Certificate and key (PEM files) for RTMPS; the reference's HTTPS keys are not implemented. */
  tls: { cert_file: string; key_file: string };
  sessions: {
    enable: boolean;
    ip_ignorelist: string[];
    session_timeout_sec: number;
    persist: boolean;
    persist_interval_sec: number;
    max_bitrate_mbit: number;
    max_sessions: number;
  };
}

/** Built-in defaults (docs/configuration.md#keys). Generated values (`id`, `name`, secrets) are filled by the loader. */
export function defaultConfig(): Config {
  return {
    id: '',
    name: '',
    address: ':8080',
    db: { dir: './config' },
    host: { name: [] },
    api: {
      trusted_proxies: [],
      max_body_kbytes: 64,
      timeouts: { header_sec: 10, request_sec: 300, idle_sec: 60, keepalive_sec: 5 },
      limits: { max_processes: 1000, max_metadata_bytes: 64 * 1024 * 1024 },
      connections: { max_per_address: 64, exempt: ['127.0.0.0/8', '::1/128'] },
      auth: {
        enable: false,
        username: '',
        password: '',
        jwt: { secret: '', access_ttl_sec: 600, refresh_ttl_sec: 86_400 },
        auth0: { enable: false, tenants: [] },
        throttle: { max_failures: 5, window_sec: 300, delay_ms: 1000, max_tracked: 10_000 },
      },
    },
    metrics: {
      enable: false,
      enable_prometheus: false,
      range_sec: 300,
      interval_sec: 2,
      prometheus: { bearer_token: '', username: '', password: '' },
      query: {
        max_items: 1000,
        max_pattern_length: 1000,
        max_total_pattern_length: 16_000,
        max_program_size: 20_000,
        max_time_ms: 500,
      },
      history: {
        enable: true,
        dir: '',
        minute_retention_days: 7,
        hour_retention_days: 400,
        max_size_mbytes: 1024,
      },
    },
    storage: {
      disk: { dir: './data', max_size_mbytes: 0 },
      memory: { auth: { enable: true, username: 'admin', password: '' }, max_size_mbytes: 0, purge: false },
      cors: { origins: ['*'] },
      s3: [],
    },
    ffmpeg: {
      binary: 'ffmpeg',
      max_processes: 0,
      access: {
        input: { allow: [], block: [], paths: [] },
        output: { allow: [], block: [], paths: [] },
        devices: [],
      },
      sandbox: 'auto',
      log: { max_lines: 50, max_history: 3 },
    },
    rtmp: {
      enable: false,
      enable_tls: false,
      address: ':1935',
      address_tls: ':1936',
      app: '/',
      token: '',
    },
    srt: {
      enable: false,
      address: ':6000',
      passphrase: '',
      token: '',
      log: { enable: false, topics: [] },
    },
    tls: { cert_file: '', key_file: '' },
    sessions: {
      enable: true,
      ip_ignorelist: ['127.0.0.1/32', '::1/128'],
      session_timeout_sec: 30,
      persist: false,
      persist_interval_sec: 300,
      max_bitrate_mbit: 0,
      max_sessions: 0,
    },
  };
}
