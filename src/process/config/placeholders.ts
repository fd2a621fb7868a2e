import type { Config } from '../../config/index.js';
import type { ProcessConfig, ProcessIO } from './process-config.js';

/** Values of the server-wide placeholders. */
export interface PlaceholderValues {
  /** Absolute disk storage directory (`{diskfs}`, `{fs:disk}`). */
  diskfs: string;
  /** Base URL of the memory filesystem, with credentials (`{memfs}`, `{fs:mem}`). */
  memfs: string;
}

const PLACEHOLDER = /\{([a-z]+(?::[a-z]+)?)(?:\^(.))?\}/g;

/**
 * Replaces `{name}` with `values[name]`; unknown names stay as they are. `{name^c}` escapes every
 * `c` in the value with a backslash (and backslashes themselves), for values that end up inside
 * an ffmpeg option that uses `c` as a separator, as in the reference server.
 */
export function replacePlaceholders(text: string, values: Record<string, string>): string {
  if (!text.includes('{')) return text;
  return text.replace(PLACEHOLDER, (match, name: string, escape: string | undefined) => {
    const value = values[name];
    if (value === undefined) return match;
    if (escape === undefined) return value;
    const escaped = escape === '\\' ? value : value.replaceAll('\\', '\\\\');
    return escaped.replaceAll(escape, `\\${escape}`);
  });
}

/**
 * The config with every placeholder resolved (SPEC §7.1): in ids, addresses, options and
 * cleanup patterns. The stored config keeps its placeholders; this copy is what runs.
 */
export function resolveConfig(config: ProcessConfig, server: PlaceholderValues): ProcessConfig {
  const base: Record<string, string> = {
    processid: config.id,
    reference: config.reference,
    diskfs: server.diskfs,
    'fs:disk': server.diskfs,
    memfs: server.memfs,
    'fs:mem': server.memfs,
  };
  const resolveIO = (io: ProcessIO, kind: 'inputid' | 'outputid'): ProcessIO => {
    const id = replacePlaceholders(io.id, base);
    const values = { ...base, [kind]: id };
    return {
      id,
      address: replacePlaceholders(io.address, values),
      options: io.options.map((option) => replacePlaceholders(option, values)),
      cleanup: io.cleanup.map((rule) => ({ ...rule, pattern: replacePlaceholders(rule.pattern, values) })),
    };
  };
  return {
    ...config,
    input: config.input.map((io) => resolveIO(io, 'inputid')),
    output: config.output.map((io) => resolveIO(io, 'outputid')),
    options: config.options.map((option) => replacePlaceholders(option, base)),
    limits: { ...config.limits },
  };
}

/** `{memfs}`: the memory filesystem over loopback, with the basic-auth credentials when enabled. */
export function memfsUrl(baseUrl: string, config: Config): string {
  const auth = config.storage.memory.auth;
  if (!auth.enable) return `${baseUrl}/memfs`;
  const credentials = `${encodeURIComponent(auth.username)}:${encodeURIComponent(auth.password)}`;
  return baseUrl.replace('://', `://${credentials}@`) + '/memfs';
}
