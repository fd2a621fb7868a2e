import {
  FALLBACK_DEFAULTS,
  type CleanupRule,
  type InputFallback,
  type ProcessConfig,
  type ProcessInput,
} from '../../src/process/config/index.js';
import { shortUuid } from '../../src/process/config/short-id.js';

/*
 * The process config reader as it was written by hand before the contract's schema checked
 * bodies (src/process/config/contract.ts), kept unchanged as the reference of the differential
 * test (config-reader-differential.test.ts): both must accept and refuse the same bodies, with the
 * same details and the same config. Delete both once the schema path has earned that trust.
 */

/**
 * Reads a request body into a config, filling defaults (docs/processes.md#process-config). Type problems are collected
 * as `<field path>: <what was expected>`; a config is returned only when there are none. Unknown
 * fields are ignored and `null` counts as "not given", as in the reference API.
 */
export function readProcessConfigByHand(body: unknown): { config?: ProcessConfig; problems: string[] } {
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

function isObject(value: unknown): value is Record<string, unknown> {
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

  ioList(source: Record<string, unknown>, key: 'input' | 'output', withCleanup: boolean): ProcessInput[] {
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
      // An input or output without id gets a fresh one (docs/processes.md#process-config), unique within its list.
      while (id === '' || (item.id !== id && used.has(id))) id = shortUuid();
      used.add(id);
      const io: ProcessInput = {
        id,
        address: this.string(item, 'address', `${path}.address`) ?? '',
        options: this.strings(item, 'options', `${path}.options`),
        cleanup: withCleanup ? this.cleanupList(item, `${path}.cleanup`) : [],
      };
      const fallback = withCleanup ? undefined : this.fallback(item, `${path}.fallback`);
      return fallback === undefined ? io : { ...io, fallback };
    });
  }

  /** An input's `fallback` (issue 30); none when absent or its address is empty. */
  private fallback(source: Record<string, unknown>, path: string): InputFallback | undefined {
    if (source.fallback === undefined || source.fallback === null) return undefined;
    const item = this.object(source, 'fallback', path);
    const fallback: InputFallback = {
      address: this.string(item, 'address', `${path}.address`) ?? '',
      options: this.strings(item, 'options', `${path}.options`),
      timeout_seconds:
        this.number(item, 'timeout_seconds', `${path}.timeout_seconds`) ?? FALLBACK_DEFAULTS.timeout_seconds,
      return_after_seconds:
        this.number(item, 'return_after_seconds', `${path}.return_after_seconds`) ??
        FALLBACK_DEFAULTS.return_after_seconds,
      switch_back_interval_seconds:
        this.number(item, 'switch_back_interval_seconds', `${path}.switch_back_interval_seconds`) ??
        FALLBACK_DEFAULTS.switch_back_interval_seconds,
    };
    return fallback.address === '' ? undefined : fallback;
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
