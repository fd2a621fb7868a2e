import { shortUuid } from './short-id.js';

/** A cleanup rule of an output (SPEC §7.3). */
export interface CleanupRule {
  /** `<fs>:<glob>`, `fs` one of `mem`, `memfs`, `disk`, `diskfs`. */
  pattern: string;
  /** Keep at most this many newest matching files; 0 = no bound. */
  max_files: number;
  /** Delete matching files older than this, seconds; 0 = no bound. */
  max_file_age_seconds: number;
  /** Delete every matching file when the process is deleted or replaced. */
  purge_on_delete: boolean;
}

export interface ProcessIO {
  id: string;
  address: string;
  options: string[];
  /** Only meaningful for outputs; always `[]` for inputs. */
  cleanup: CleanupRule[];
}

export interface ProcessLimits {
  /** Percent of the whole machine; 0 = no limit. */
  cpu_usage: number;
  /** MiB of resident memory; 0 = no limit. */
  memory_mbytes: number;
  /** How long a limit may be exceeded before the process is stopped, seconds. */
  waitfor_seconds: number;
}

/** The process config as the API takes and shows it (SPEC §7.1), with every default filled. */
export interface ProcessConfig {
  id: string;
  type: 'ffmpeg';
  reference: string;
  input: ProcessIO[];
  output: ProcessIO[];
  options: string[];
  reconnect: boolean;
  reconnect_delay_seconds: number;
  autostart: boolean;
  stale_timeout_seconds: number;
  limits: ProcessLimits;
}

/**
 * Reads a request body into a config, filling defaults (SPEC §7.1). Type problems are collected
 * as `<field path>: <what was expected>`; a config is returned only when there are none. Unknown
 * fields are ignored and `null` counts as "not given", as in the reference API.
 */
export function readProcessConfig(body: unknown): { config?: ProcessConfig; problems: string[] } {
  const problems: string[] = [];
  if (body === undefined) return { problems: ['body: a JSON object with the process config is required'] };
  if (!isObject(body)) return { problems: ['body: must be a JSON object'] };
  const read = new FieldReader(problems);
  const limits = read.object(body, 'limits', 'limits');
  const config: ProcessConfig = {
    id: read.string(body, 'id', 'id') ?? shortUuid(),
    type: (read.string(body, 'type', 'type') ?? 'ffmpeg') as 'ffmpeg',
    reference: read.string(body, 'reference', 'reference') ?? '',
    input: read.ioList(body, 'input', false),
    output: read.ioList(body, 'output', true),
    options: read.strings(body, 'options', 'options'),
    reconnect: read.boolean(body, 'reconnect', 'reconnect') ?? false,
    reconnect_delay_seconds: read.count(body, 'reconnect_delay_seconds', 'reconnect_delay_seconds') ?? 0,
    autostart: read.boolean(body, 'autostart', 'autostart') ?? true,
    stale_timeout_seconds: read.count(body, 'stale_timeout_seconds', 'stale_timeout_seconds') ?? 0,
    limits: {
      cpu_usage: read.number(limits, 'cpu_usage', 'limits.cpu_usage') ?? 0,
      memory_mbytes: read.count(limits, 'memory_mbytes', 'limits.memory_mbytes') ?? 0,
      waitfor_seconds: read.count(limits, 'waitfor_seconds', 'limits.waitfor_seconds') ?? 0,
    },
  };
  return problems.length === 0 ? { config, problems } : { problems };
}

/** The API form of a config as a plain object, for merging an update body over it. */
export function configToPlain(config: ProcessConfig): Record<string, unknown> {
  return JSON.parse(JSON.stringify(config)) as Record<string, unknown>;
}

/** Merges `patch` over `base`: objects recursively, everything else (arrays too) replaced. */
export function mergeOver(
  base: Record<string, unknown>,
  patch: Record<string, unknown>,
): Record<string, unknown> {
  const result: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(patch)) {
    const current = result[key];
    result[key] = isObject(current) && isObject(value) ? mergeOver(current, value) : value;
  }
  return result;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

class FieldReader {
  constructor(private readonly problems: string[]) {}

  string(source: Record<string, unknown>, key: string, path: string): string | undefined {
    const value = source[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value === 'string') return value;
    this.problems.push(`${path}: must be a string`);
    return undefined;
  }

  boolean(source: Record<string, unknown>, key: string, path: string): boolean | undefined {
    const value = source[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value === 'boolean') return value;
    this.problems.push(`${path}: must be a boolean`);
    return undefined;
  }

  /** A non-negative number (fractions allowed). */
  number(source: Record<string, unknown>, key: string, path: string): number | undefined {
    const value = source[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return value;
    this.problems.push(`${path}: must be a non-negative number`);
    return undefined;
  }

  /** A non-negative integer. */
  count(source: Record<string, unknown>, key: string, path: string): number | undefined {
    const value = source[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
    this.problems.push(`${path}: must be a non-negative integer`);
    return undefined;
  }

  object(source: Record<string, unknown>, key: string, path: string): Record<string, unknown> {
    const value = source[key];
    if (value === undefined || value === null) return {};
    if (isObject(value)) return value;
    this.problems.push(`${path}: must be an object`);
    return {};
  }

  strings(source: Record<string, unknown>, key: string, path: string): string[] {
    const value = source[key];
    if (value === undefined || value === null) return [];
    if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return [...value];
    this.problems.push(`${path}: must be an array of strings`);
    return [];
  }

  ioList(source: Record<string, unknown>, key: 'input' | 'output', withCleanup: boolean): ProcessIO[] {
    const value = source[key];
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value)) {
      this.problems.push(`${key}: must be an array of objects`);
      return [];
    }
    const used = new Set(value.map((item) => (isObject(item) ? item.id : undefined)));
    return value.map((item, index) => {
      const path = `${key}[${index}]`;
      if (!isObject(item)) {
        this.problems.push(`${path}: must be an object`);
        return { id: '', address: '', options: [], cleanup: [] };
      }
      let id = this.string(item, 'id', `${path}.id`) ?? '';
      // An input or output without id gets a fresh one (SPEC §7.1), unique within its list.
      while (id === '' || (item.id !== id && used.has(id))) id = shortUuid();
      used.add(id);
      return {
        id,
        address: this.string(item, 'address', `${path}.address`) ?? '',
        options: this.strings(item, 'options', `${path}.options`),
        cleanup: withCleanup ? this.cleanupList(item, `${path}.cleanup`) : [],
      };
    });
  }

  private cleanupList(source: Record<string, unknown>, path: string): CleanupRule[] {
    const value = source.cleanup;
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value)) {
      this.problems.push(`${path}: must be an array of objects`);
      return [];
    }
    return value.map((item, index) => {
      const itemPath = `${path}[${index}]`;
      const rule = isObject(item) ? item : {};
      if (!isObject(item)) this.problems.push(`${itemPath}: must be an object`);
      return {
        pattern: this.string(rule, 'pattern', `${itemPath}.pattern`) ?? '',
        max_files: this.count(rule, 'max_files', `${itemPath}.max_files`) ?? 0,
        max_file_age_seconds:
          this.count(rule, 'max_file_age_seconds', `${itemPath}.max_file_age_seconds`) ?? 0,
        purge_on_delete: this.boolean(rule, 'purge_on_delete', `${itemPath}.purge_on_delete`) ?? false,
      };
    });
  }
}
