/**
 * How a configuration key is declared (docs/configuration.md#declaring-a-key). keys.ts holds one
 * declaration per key; the `Config` type, the defaults, `KEYS` (what the loader reads) and the v16
 * layout's field list (config-api/v16-fields.ts) are derived from it, so a key is added in one place.
 */
import type { IntRange } from './int-range.js';

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

/** One receiver of events (docs/events.md#webhooks). */
export interface Webhook {
  /** Where each delivery is POSTed (http or https). */
  url: string;
  /** The kinds of events it gets (`process`, `media`, …); empty or `*`: all. */
  events: string[];
  /** Signs each delivery (HMAC-SHA256); a secret like the others: never logged or answered. */
  secret: string;
}

/**
 * `patterns`: a list like `list`, but env values split on white space only (expressions hold commas).
 * `map`: an object of strings; its env value is the reference's `key:value key:value`.
 * `s3`: S3 filesystems; its env value is the reference's URLs joined by `|` (config/s3-storages.ts).
 */
export type KeyKind = 'bool' | 'int' | 'string' | 'list' | 'patterns' | 'tenants' | 'map' | 'webhooks' | 's3';

/** `strings`: array of strings; `tenants`: identity-provider tenants; `objects`: array of objects; `map`: string → string. */
export type V16Kind = 'bool' | 'int' | 'string' | 'strings' | 'tenants' | 'objects' | 'map';

/** How one of streamcore's keys appears in the v16 layout (same dotted path in both). */
export interface V16Mapping {
  /** The reference's variable name where it differs from the path (what `overrides` lists). */
  readonly variable?: string;
  /**
   * A secret no client needs to read (docs/security.md, "What the config API cannot do"): answered
   * as `""`, and a `""` sent back (or none) keeps the stored value.
   */
  readonly withheld?: boolean;
}

/** What every key of streamcore's own declares, whatever its kind. */
interface KeyOptions {
  /** The env vars that override the file: the first is the canonical name, the rest accepted aliases. */
  readonly env: string | readonly string[];
  /** One line for a reader of keys.ts; docs/configuration.md has the user's description. */
  readonly doc: string;
  /** Never printed in messages, masked in the server's log. */
  readonly secret?: boolean;
  /**
   * Why the config API may not change this key (the file on the server still can): what it names
   * would give an API token the machine once the server restarts. Safe before compatible.
   */
  readonly fileOnly?: string;
  /** Set when the v16 layout has the key: `true` when it needs nothing more. */
  readonly v16?: true | V16Mapping;
}

/** One of streamcore's keys, `T` the type of its value in `Config`. */
export interface DeclaredKey<T> {
  readonly kind: KeyKind;
  readonly env: readonly string[];
  readonly default: T;
  readonly doc: string;
  readonly secret: boolean;
  /** Every `int` key has its bounds. */
  readonly range?: IntRange;
  /** The values a `oneOf` string may take. */
  readonly choices?: readonly string[];
  readonly fileOnly?: string;
  readonly v16?: V16Mapping;
}

/**
 * A key of the v16 layout that streamcore does not implement: stored as a client sent it and
 * answered unchanged, so a round trip loses nothing (docs/compatibility.md#config).
 */
export interface V16OnlyKey {
  readonly v16Kind: V16Kind;
  /** The value answered until a client stores one. */
  readonly stored: unknown;
  /** The reference's variable name where it differs from the path. */
  readonly variable?: string;
  /**
   * Why a value other than `stored` is refused: the value would promise something streamcore does
   * not do (a protection, a listener). Safe before compatible.
   */
  readonly refuse?: string;
  readonly secret?: boolean;
  /** Bounds of an `int`: a stored value is answered to clients, which may act on it. */
  readonly range?: IntRange;
}

export type KeyDeclaration = DeclaredKey<unknown> | V16OnlyKey;

export function isDeclaredKey(declaration: KeyDeclaration): declaration is DeclaredKey<unknown> {
  return 'default' in declaration;
}

function declare<T>(
  kind: KeyKind,
  value: T,
  options: KeyOptions,
  limits: { range?: IntRange; choices?: readonly string[] } = {},
): DeclaredKey<T> {
  const { env, doc, secret = false, fileOnly, v16 } = options;
  return {
    kind,
    env: typeof env === 'string' ? [env] : env,
    default: value,
    doc,
    secret,
    ...limits,
    ...(fileOnly === undefined ? {} : { fileOnly }),
    ...(v16 === undefined ? {} : { v16: v16 === true ? {} : v16 }),
  };
}

export const bool = (value: boolean, options: KeyOptions): DeclaredKey<boolean> =>
  declare('bool', value, options);

/** An integer must say its bounds, and why the ceiling is where it is. */
export const int = (value: number, options: KeyOptions & { range: IntRange }): DeclaredKey<number> =>
  declare('int', value, options, { range: options.range });

export const string = (value: string, options: KeyOptions): DeclaredKey<string> =>
  declare('string', value, options);

/** A string limited to `choices` (checked in validate.ts, which names them). */
export const oneOf = <C extends string>(
  choices: readonly C[],
  value: NoInfer<C>,
  options: KeyOptions,
): DeclaredKey<C> => declare('string', value, options, { choices });

/** A list of strings; an env value is split on commas and white space. */
export const list = (value: string[], options: KeyOptions): DeclaredKey<string[]> =>
  declare('list', value, options);

/** A list of expressions; an env value is split on white space only. */
export const patterns = (value: string[], options: KeyOptions): DeclaredKey<string[]> =>
  declare('patterns', value, options);

/** An object of strings; an env value is the reference's `key:value key:value`. */
export const map = (
  value: Record<string, string>,
  options: KeyOptions,
): DeclaredKey<Record<string, string>> => declare('map', value, options);

/** Receivers of events; an env value is their JSON list (docs/events.md#webhooks). */
export const webhooks = (options: KeyOptions): DeclaredKey<Webhook[]> => declare('webhooks', [], options);

export const tenants = (options: KeyOptions): DeclaredKey<Auth0Tenant[]> => declare('tenants', [], options);

/** S3 filesystems, none by default. */
export const s3Storages = (options: KeyOptions): DeclaredKey<S3Storage[]> => declare('s3', [], options);

/** A key of the v16 layout streamcore does not implement, answered as `stored` until a client sets it. */
export const v16Only = (
  v16Kind: V16Kind,
  stored: unknown,
  extra: Omit<V16OnlyKey, 'v16Kind' | 'stored'> = {},
): V16OnlyKey => ({ v16Kind, stored, ...extra });
