import { stat } from 'node:fs/promises';
import {
  getPath,
  isPlainObject,
  readConfigFile,
  resolveConfig,
  setPath,
  type Config,
} from '../config/index.js';
import { ApiError } from '../http/index.js';
import { writeFileAtomic } from '../persistence/atomic-write.js';
import type { ConfigAnswer } from './contract.js';
import type { DeferredKey } from './live-apply.js';
import { OWN_FILE_ONLY_FIELDS, V16_FIELDS } from './v16-fields.js';
import { listenProblems } from './listen-check.js';
import { openServerProblems } from './open-server.js';
import { restoreS3Secrets, withholdS3Secrets } from './s3-secrets.js';
import { mergeV16Layout, toV16Layout } from './v16-layout.js';

/** Where the configuration comes from: the file and the env it is resolved with. */
export interface ConfigSource {
  /** The config file's absolute path. */
  file: string;
  env: NodeJS.ProcessEnv;
  /** Relative paths in the file are resolved against it. */
  cwd: string;
}

/**
 * Puts a reloaded configuration into effect in the running server; answers the keys that could
 * not be applied while running (they take effect at the next start), or rejects with the 400 that
 * says why nothing was applied.
 */
export type ApplyConfig = (next: Config) => Promise<DeferredKey[]>;

export interface ConfigStoreOptions {
  source: ConfigSource;
  /** The file's content as the loader left it, and the config the server runs with. */
  fileJson: Record<string, unknown>;
  running: Config;
  overrides: readonly string[];
  apply: ApplyConfig;
  /** Wall clock, milliseconds. */
  now: () => number;
}

/**
 * The configuration as `/api/v3/config` shows and changes it. `PUT` stores a new file content
 * (validated whole, written atomically, mode 0600) without touching the running server;
 * `reload` reads the file and env again and puts them into effect. One change at a time.
 */
export class ConfigStore {
  private fileJson: Record<string, unknown>;
  /** The file + env as they stand (what a reload would put into effect). */
  private effective: Config;
  private overrides: ReadonlySet<string>;
  private createdAtMs: number;
  private loadedAtMs: number;
  private updatedAtMs: number;
  private chain: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly options: ConfigStoreOptions,
    createdAtMs: number,
  ) {
    this.fileJson = options.fileJson;
    this.effective = options.running;
    this.overrides = new Set(options.overrides);
    this.createdAtMs = createdAtMs;
    this.loadedAtMs = options.now();
    this.updatedAtMs = this.loadedAtMs;
  }

  static async create(options: ConfigStoreOptions): Promise<ConfigStore> {
    const createdAtMs = await fileCreatedAtMs(options.fileJson, options.source.file, options.now);
    return new ConfigStore(options, createdAtMs);
  }

  /** When the running configuration was put into effect (start or reload), ms since the epoch. */
  get loadedAt(): number {
    return this.loadedAtMs;
  }

  answer(): ConfigAnswer {
    const createdAt = iso(this.createdAtMs);
    return {
      created_at: createdAt,
      loaded_at: iso(this.loadedAtMs),
      updated_at: iso(this.updatedAtMs),
      config: withheldLayout(toV16Layout(this.fileJson, this.effective, this.overrides, createdAt)),
      overrides: V16_FIELDS.filter((field) => this.overrides.has(field.path)).map(
        (field) => field.variable ?? field.path,
      ),
    };
  }

  /** A problem for each key the body changes that only the config file may change (`fileOnly`). */
  private fileOnlyChanges(body: unknown, known: readonly string[]): string[] {
    if (!isPlainObject(body)) return [];
    const shown = toV16Layout(this.fileJson, this.effective, this.overrides, '');
    return [...V16_FIELDS, ...OWN_FILE_ONLY_FIELDS]
      .filter((field) => {
        // A field already named (a wrong type) gets one detail, not two.
        if (field.fileOnly === undefined || known.some((problem) => problem.startsWith(`${field.path}: `))) {
          return false;
        }
        const sent = getPath(body, field.path);
        return sent !== undefined && JSON.stringify(sent) !== JSON.stringify(getPath(shown, field.path));
      })
      .map(
        (field) => `${field.path}: can only be changed in the config file on the server, ${field.fileOnly}`,
      );
  }

  /** Validates a v16 layout merged over the stored one and stores it; 400 naming every bad field. */
  put(body: unknown): Promise<void> {
    return this.serialize(async () => {
      const sent = restoreS3Secrets(body, this.effective);
      const merged = mergeV16Layout(sent, this.fileJson);
      merged.problems.push(...this.fileOnlyChanges(sent, merged.problems));
      merged.problems.push(...this.envKeyChanges(merged.fileJson));
      this.keepEnvValuesOutOfFile(merged.fileJson);
      const { source } = this.options;
      const resolved = resolveConfig(merged.fileJson, source.env, source.cwd);
      const problems = [...merged.problems, ...resolved.problems];
      if (problems.length === 0) problems.push(...(await this.startProblems(resolved.config)));
      if (problems.length > 0) throw new ApiError('BAD_REQUEST', problems, { message: 'Invalid config' });
      const nowMs = this.options.now();
      const next = { ...merged.fileJson, created_at: iso(nowMs) };
      await writeFileAtomic(source.file, `${JSON.stringify(next, null, 2)}\n`);
      this.fileJson = next;
      this.effective = resolved.config;
      this.overrides = new Set(resolved.overrides);
      this.createdAtMs = nowMs;
      this.updatedAtMs = nowMs;
    });
  }

  /**
   * What a valid configuration would do wrong at the next start: serve the API unprotected to the
   * network, or fail to open a listener (docs/security.md, "What the config API cannot do").
   */
  private async startProblems(next: Config): Promise<string[]> {
    const open = openServerProblems(this.effective, next);
    if (open.length > 0) return open;
    return listenProblems(this.options.running, next);
  }

  /**
   * Reads the file and env again and puts them into effect. A file that no longer validates is
   * refused (400) and the running configuration stays. Answers the keys left for the next start.
   */
  reload(): Promise<DeferredKey[]> {
    return this.serialize(async () => {
      const { source } = this.options;
      const problems: string[] = [];
      const read = await readConfigFile(source.file, problems);
      const resolved = resolveConfig(read.json, source.env, source.cwd);
      problems.push(...resolved.problems);
      if (read.created) problems.push(`config file ${source.file}: does not exist`);
      if (problems.length > 0) throw new ApiError('BAD_REQUEST', problems, { message: 'Invalid config' });
      const nextStart = await this.options.apply(resolved.config);
      this.fileJson = read.json;
      this.effective = resolved.config;
      this.overrides = new Set(resolved.overrides);
      this.createdAtMs = await fileCreatedAtMs(read.json, source.file, this.options.now);
      this.loadedAtMs = this.options.now();
      this.updatedAtMs = Math.min(this.updatedAtMs, this.loadedAtMs);
      return nextStart;
    });
  }

  /**
   * A key an env var sets, sent with a value that is neither the env's (what the client was shown)
   * nor the file's own: it would not take effect while the env var is set, and it is validated only
   * with the env's value in its place, so a bad one would be written unseen and stop the next start
   * without the env var (the Restreamer UI's Settings turn `127.0.0.1:8080` into `:127.0.0.18080`).
   * Refused, naming the key (never the value: it may be a secret).
   */
  private envKeyChanges(next: Record<string, unknown>): string[] {
    const problems: string[] = [];
    for (const path of this.overrides) {
      const sent = JSON.stringify(getPath(next, path));
      if (sent === JSON.stringify(getPath(this.effective, path))) continue;
      if (sent === JSON.stringify(getPath(this.fileJson, path))) continue;
      problems.push(`${path}: set by an environment variable, which wins over the file; change it there`);
    }
    return problems;
  }

  /**
   * A client sends back what it was shown, env values included. Where such a value is the env's,
   * the file keeps its own: an env secret is not written to disk, and the file does not change
   * meaning when the env var goes away.
   */
  private keepEnvValuesOutOfFile(next: Record<string, unknown>): void {
    for (const path of this.overrides) {
      if (JSON.stringify(getPath(next, path)) === JSON.stringify(getPath(this.effective, path))) {
        setPath(next, path, getPath(this.fileJson, path));
      }
    }
  }

  private serialize<T>(work: () => Promise<T>): Promise<T> {
    const result = this.chain.then(work);
    this.chain = result.catch(() => undefined);
    return result;
  }
}

/** The file's `created_at` (written by PUT, as the reference does), else its modification time. */
async function fileCreatedAtMs(
  fileJson: Record<string, unknown>,
  file: string,
  now: () => number,
): Promise<number> {
  const written = typeof fileJson.created_at === 'string' ? Date.parse(fileJson.created_at) : NaN;
  if (Number.isFinite(written)) return written;
  try {
    return (await stat(file)).mtimeMs;
  } catch {
    return now();
  }
}

/** RFC 3339 in UTC, as the reference's times (the UI parses them with its RFC 3339 reader). */
function iso(ms: number): string {
  return new Date(Math.floor(ms)).toISOString();
}

/** The layout as answered: the S3 secrets blanked. */
function withheldLayout(layout: Record<string, unknown>): Record<string, unknown> {
  withholdS3Secrets(layout);
  return layout;
}
