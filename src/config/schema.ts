/**
 * The shape of streamcore's configuration and its defaults (docs/configuration.md#keys), both
 * derived from the declarations in keys.ts: file keys are the dotted paths of this object.
 */
import type { DeclaredKey } from './declare-key.js';
import { setPath } from './json-path.js';

import { KEYS, type DECLARED_KEYS } from './keys.js';

export type { Auth0Tenant, S3Storage, Webhook } from './declare-key.js';
export { LOG_LEVELS, SANDBOX_MODES, type SandboxMode } from './keys.js';

/** Path → value type of streamcore's own keys (the v16 layout's unimplemented ones left out). */
type OwnValues<Table> = {
  [
    Path in keyof Table as Table[Path] extends DeclaredKey<unknown> ? Path : never
  ]: Table[Path] extends DeclaredKey<infer Value> ? Value : never;
};

type Head<Path> = Path extends `${infer First}.${string}` ? First : Path;

/** `{ 'a.b': X, 'a.c': Y }` → `{ a: { b: X; c: Y } }`. */
type Nest<Flat> = {
  [Name in Head<keyof Flat & string>]: Name extends keyof Flat
    ? Flat[Name]
    : Nest<{ [Path in keyof Flat as Path extends `${Name}.${infer Rest}` ? Rest : never]: Flat[Path] }>;
};

export type Config = Nest<OwnValues<typeof DECLARED_KEYS>>;

/** Built-in defaults (docs/configuration.md#keys), a fresh copy each call. Generated values (`id`, `name`, secrets) are filled by the loader. */
export function defaultConfig(): Config {
  const config = {};
  for (const key of KEYS) setPath(config, key.path, structuredClone(key.default));
  return config as Config;
}
