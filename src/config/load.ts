import { randomBytes, randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { writeFileAtomic } from '../persistence/atomic-write.js';
import { removeStaleTemporaries } from '../persistence/leftovers.js';
import { parseTenantsEnv, validateTenant } from './auth0-tenants.js';
import { parseWebhooksEnv, validateWebhooks } from './webhooks.js';
import { parseMapEnv } from './map-env.js';
import { parseS3StoragesEnv, readS3Storage } from './s3-storages.js';
import { rangeProblem } from './int-range.js';
import { KEYS, type ConfigKey } from './keys.js';
import { generateName } from './names.js';
import { defaultConfig, type Config } from './schema.js';
import { validateConfig } from './validate.js';
import { getPath, isPlainObject, setPath } from './json-path.js';

export interface LoadedConfig {
  /** The effective configuration: defaults, then the file, then env vars; paths made absolute. */
  config: Config;
  /** The config file's absolute path. */
  file: string;
  /** The file's content as stored (generated values filled in), without the env applied. */
  fileJson: Record<string, unknown>;
  /** The key paths an env var set. */
  overrides: string[];
  /**
   * Set when this start created the config file with generated API credentials and they are the
   * effective ones: the caller prints them once (docs/configuration.md#safe-first-start-differs-from-the-reference).
   */
  firstStartLogin?: { username: string; password: string };
}

/** Raised when the configuration cannot be used; `problems` has one line per bad key. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.join('\n')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Loads the configuration (docs/configuration.md#validation). Creates the file when it does not exist, and persists
 * generated values (id, name, secrets) that the file lacks, so tokens survive a restart.
 */
export async function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
): Promise<LoadedConfig> {
  const file = resolve(cwd, env.CORE_CONFIGFILE ?? './config/config.json');
  await removeStaleTemporaries(file);
  const problems: string[] = [];
  const read = await readConfigFile(file, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  const fileJson = read.json;

  // A new file gets authentication on with a generated password: the reference's open default
  // lets anyone on the network run encoders (docs/configuration.md#safe-first-start-differs-from-the-reference). Env vars still win.
  const firstLogin = read.created ? enableFirstStartAuth(fileJson) : undefined;
  const generatedMissing = fillGenerated(fileJson) || read.created;
  if (generatedMissing) {
    await writeFileAtomic(file, `${JSON.stringify(fileJson, null, 2)}\n`).catch((error: unknown) => {
      throw new ConfigError([
        `config file ${file}: cannot be written (${(error as Error).message}); set CORE_CONFIGFILE to a writable place`,
      ]);
    });
  }

  const resolved = resolveConfig(fileJson, env, cwd);
  if (resolved.problems.length > 0) throw new ConfigError(resolved.problems);
  const { config, overrides } = resolved;
  const auth = config.api.auth;
  const printLogin =
    firstLogin !== undefined &&
    auth.enable &&
    auth.username === firstLogin.username &&
    auth.password === firstLogin.password;
  const loaded = { config, file, fileJson, overrides };
  return printLogin ? { ...loaded, firstStartLogin: firstLogin } : loaded;
}

/** What one reading of the file and the env gives: the effective config, or the problems. */
export interface ResolvedConfig {
  /** Defaults, then the file, then env vars; paths made absolute against `cwd`. */
  config: Config;
  /** The key paths an env var set (they win over the file). */
  overrides: string[];
  /** One line per bad key; `config` is not to be used when there is any. */
  problems: string[];
}

/**
 * Resolves a config file's content (already parsed) with the env into the effective config
 * (docs/configuration.md#validation). Pure: the loader and `PUT /api/v3/config` check a config the same way.
 */
export function resolveConfig(
  fileJson: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
  cwd: string,
): ResolvedConfig {
  const problems: string[] = [];
  const config = defaultConfig();
  /** Key path → the env var its value came from, so range problems name it too (docs/configuration.md#validation). */
  const fromEnv = new Map<string, string>();
  for (const configKey of KEYS) {
    const fromFile = getPath(fileJson, configKey.path);
    if (fromFile !== undefined) {
      const checked = checkFileValue(configKey, fromFile);
      if ('problem' in checked) problems.push(`${configKey.path}: ${checked.problem}`);
      else setPath(config, configKey.path, checked.value);
    }
    const envName = configKey.env.find((name) => env[name] !== undefined);
    if (envName !== undefined) {
      const checked = parseEnvValue(configKey, env[envName] ?? '');
      if ('problem' in checked) problems.push(`${configKey.path} (env ${envName}): ${checked.problem}`);
      else {
        setPath(config, configKey.path, checked.value);
        fromEnv.set(configKey.path, envName);
      }
    }
  }
  problems.push(...validateConfig(config).map((problem) => nameEnvSource(problem, fromEnv)));
  config.db.dir = resolve(cwd, config.db.dir);
  config.metrics.history.dir =
    config.metrics.history.dir === ''
      ? resolve(config.db.dir, 'metrics')
      : resolve(cwd, config.metrics.history.dir);
  config.storage.disk.dir = resolve(cwd, config.storage.disk.dir);
  if (config.router.ui_path !== '') config.router.ui_path = resolve(cwd, config.router.ui_path);
  // A `/path/*` route names a directory; the others name a URL path to redirect to.
  for (const [route, target] of Object.entries(config.router.routes)) {
    if (route.endsWith('/*') && target !== '') config.router.routes[route] = resolve(cwd, target);
  }
  return { config, overrides: [...fromEnv.keys()], problems };
}

/** Reads and parses the config file; a missing file gives the defaults and `created: true`. */
export async function readConfigFile(
  file: string,
  problems: string[],
): Promise<{ json: Record<string, unknown>; created: boolean }> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      return { json: defaultFileContent(), created: true };
    }
    problems.push(`config file ${file}: ${(error as Error).message}`);
    return { json: {}, created: false };
  }
  try {
    const json: unknown = JSON.parse(text);
    if (typeof json !== 'object' || json === null || Array.isArray(json)) {
      problems.push(`config file ${file}: must hold a JSON object`);
      return { json: {}, created: false };
    }
    return { json: json as Record<string, unknown>, created: false };
  } catch (error) {
    problems.push(`config file ${file}: invalid JSON (${(error as Error).message})`);
    return { json: {}, created: false };
  }
}

/** Turns API authentication on in a new file, for `admin` with a generated password. */
function enableFirstStartAuth(fileJson: Record<string, unknown>): { username: string; password: string } {
  const login = { username: 'admin', password: randomBytes(18).toString('base64url') };
  setPath(fileJson, 'api.auth.enable', true);
  setPath(fileJson, 'api.auth.username', login.username);
  setPath(fileJson, 'api.auth.password', login.password);
  return login;
}

/** The content of a new config file: every default, so users see every key they can set. */
function defaultFileContent(): Record<string, unknown> {
  return JSON.parse(JSON.stringify(defaultConfig())) as Record<string, unknown>;
}

/** Fills generated values the file lacks. Returns whether it changed anything. */
function fillGenerated(fileJson: Record<string, unknown>): boolean {
  const generators: Record<string, () => string> = {
    id: () => randomUUID(),
    name: () => generateName(),
    'api.auth.jwt.secret': () => randomBytes(32).toString('base64url'),
    'storage.memory.auth.password': () => randomBytes(18).toString('base64url'),
  };
  let changed = Object.keys(fileJson).length === 0;
  for (const [path, generate] of Object.entries(generators)) {
    const current = getPath(fileJson, path);
    if (current === undefined || current === '') {
      setPath(fileJson, path, generate());
      changed = true;
    }
  }
  return changed;
}

type Checked = { value: unknown } | { problem: string };

function checkFileValue(configKey: ConfigKey, value: unknown): Checked {
  switch (configKey.kind) {
    case 'bool':
      return typeof value === 'boolean' ? { value } : { problem: 'must be true or false' };
    case 'int':
      return Number.isSafeInteger(value) && (value as number) >= 0
        ? checkRange(configKey, value as number)
        : { problem: 'must be a non-negative integer' };
    case 'string':
      return typeof value === 'string' ? { value } : { problem: 'must be a string' };
    case 'list':
    case 'patterns':
      return Array.isArray(value) && value.every((item) => typeof item === 'string')
        ? { value }
        : { problem: 'must be an array of strings' };
    case 'map':
      // A copy: the loader makes its directories absolute, the file's spelling stays.
      return isPlainObject(value) && Object.values(value).every((item) => typeof item === 'string')
        ? { value: { ...value } }
        : { problem: 'must be an object of strings' };
    case 'tenants': {
      if (!Array.isArray(value)) return { problem: 'must be an array of tenant objects' };
      const tenants = [];
      for (const [index, item] of value.entries()) {
        const tenant = validateTenant(item);
        if (typeof tenant === 'string') return { problem: `item ${index + 1}: ${tenant}` };
        tenants.push(tenant);
      }
      return { value: tenants };
    }
    case 'webhooks':
      return validateWebhooks(value);
    case 's3': {
      if (!Array.isArray(value)) return { problem: 'must be an array of S3 storage objects' };
      const storages = [];
      for (const [index, item] of value.entries()) {
        const storage = readS3Storage(item);
        if (typeof storage === 'string') return { problem: `item ${index}: ${storage}` };
        storages.push(storage);
      }
      return { value: storages };
    }
  }
}

/** The value, or the problem of one outside the key's bounds. */
function checkRange(configKey: ConfigKey, value: number): Checked {
  const problem = configKey.range === undefined ? undefined : rangeProblem(value, configKey.range);
  return problem === undefined ? { value } : { problem };
}

/** `metrics.interval_sec: …` → `metrics.interval_sec (env CORE_METRICS_INTERVAL_SECONDS): …` when set by env. */
function nameEnvSource(problem: string, fromEnv: ReadonlyMap<string, string>): string {
  const colon = problem.indexOf(':');
  // `storage.s3[1].name: …` names the key `storage.s3`.
  const envName = fromEnv.get(problem.slice(0, colon).replace(/\[.*$/, ''));
  return envName === undefined
    ? problem
    : `${problem.slice(0, colon)} (env ${envName})${problem.slice(colon)}`;
}

function parseEnvValue(configKey: ConfigKey, raw: string): Checked {
  switch (configKey.kind) {
    case 'bool': {
      const lower = raw.trim().toLowerCase();
      if (['true', '1', 'yes'].includes(lower)) return { value: true };
      if (['false', '0', 'no'].includes(lower)) return { value: false };
      return { problem: 'must be one of true/false/1/0/yes/no' };
    }
    case 'int': {
      const trimmed = raw.trim();
      if (!/^\d+$/.test(trimmed) || !Number.isSafeInteger(Number(trimmed))) {
        return { problem: 'must be a non-negative integer (decimal digits only)' };
      }
      return checkRange(configKey, Number(trimmed));
    }
    case 'string':
      return { value: raw };
    case 'list':
      return {
        value: raw
          .split(/[,\s]+/)
          .map((item) => item.trim())
          .filter((item) => item !== ''),
      };
    case 'patterns':
      return { value: raw.split(/\s+/).filter((item) => item !== '') };
    case 'map':
      return { value: parseMapEnv(raw) };
    case 'tenants': {
      const parsed = parseTenantsEnv(raw);
      return 'problem' in parsed ? parsed : { value: parsed.tenants };
    }
    case 'webhooks':
      return parseWebhooksEnv(raw);
    case 's3': {
      const parsed = parseS3StoragesEnv(raw);
      return 'problem' in parsed ? parsed : { value: parsed.storages };
    }
  }
}
