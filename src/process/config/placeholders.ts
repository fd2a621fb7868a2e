import type { ProcessConfig, ProcessInput, ProcessIO } from './contract.js';
import type { RunScope } from './run-scope.js';

/**
 * A placeholder whose value depends on parameters (`{rtmp,name=abc}`) and on whether it stands in
 * an input or an output (`{srt}` chooses its mode by that), as the reference's template functions.
 * `run` is the encoder run the value is for, when it is for one (the command line of a start or
 * a probe); without it the value is what the API shows.
 */
export type PlaceholderTemplate = (
  params: Readonly<Record<string, string>>,
  section: 'input' | 'output' | 'global',
  run?: RunScope,
) => string;

/** Values of the server-wide placeholders. */
export interface PlaceholderValues {
  /** Absolute disk storage directory (`{diskfs}`, `{fs:disk}`). */
  diskfs: string;
  /**
   * Base URL of the memory filesystem (`{memfs}`, `{fs:mem}`), without credentials: reading
   * needs none, and the memfs password must not reach an encoder's command line, which every
   * local user can read (`/proc/<pid>/cmdline`).
   */
  memfs: string;
  /**
   * `{memfs}` in outputs: the base URL with one encoder run's own write credential (its memfs
   * grant), set only when that run's command line is made; `memfs` when absent.
   */
  memfsWrite?: string;
  /**
   * `{fs:<name>}` of each S3 filesystem: the base URL of its mountpoint on this server, without
   * credentials (docs/storage.md#s3-filesystems).
   */
  s3?: Readonly<Record<string, string>>;
  /** `{fs:<name>}` in outputs, with the run's write credential, set like `memfsWrite`. */
  s3Write?: Readonly<Record<string, string>>;
  /** Placeholders with parameters, by name (`rtmp`, `srt`), from the ingest servers. */
  templates?: Readonly<Record<string, PlaceholderTemplate>>;
  /** The encoder run the config is resolved for, set only when its command line is made. */
  run?: RunScope;
}

/**
 * `{name}`, `{name^c}`, `{name,params}`. The part after `fs:` takes what S3 filesystem names may
 * hold (`[A-Za-z0-9_-]+`); the reference's pattern takes lower-case letters only there.
 */
const PLACEHOLDER = /\{([a-z]+(?::[A-Za-z0-9_-]+)?)(?:\^(.))?(?:,([^{}]*))?\}/g;

/**
 * Replaces `{name}` with `values[name]`, and `{name,key=value,…}` with the template `name` given
 * those parameters; unknown names stay as they are. Parameter values are URL-unescaped and may
 * use `$processid`, `$reference`, `$inputid`, `$outputid` (the reference's variables). `{name^c}`
 * escapes every `c` in the value with a backslash (and backslashes themselves), for values that
 * end up inside an ffmpeg option that uses `c` as a separator, as in the reference server.
 */
export function replacePlaceholders(
  text: string,
  values: Record<string, string>,
  templates: Readonly<Record<string, PlaceholderTemplate>> = {},
  section: 'input' | 'output' | 'global' = 'global',
  run?: RunScope,
): string {
  if (!text.includes('{')) return text;
  return text.replace(
    PLACEHOLDER,
    (match, name: string, escape: string | undefined, params: string | undefined) => {
      const template = Object.hasOwn(templates, name) ? templates[name] : undefined;
      const value =
        template !== undefined
          ? template(parseParams(params ?? '', values), section, run)
          : Object.hasOwn(values, name)
            ? values[name]
            : undefined;
      if (value === undefined) return match;
      if (escape === undefined) return value;
      const escaped = escape === '\\' ? value : value.replaceAll('\\', '\\\\');
      return escaped.replaceAll(escape, `\\${escape}`);
    },
  );
}

/** `key=value,key=value` with URL-unescaped parts; a part that does not unescape is left out. */
function parseParams(text: string, values: Record<string, string>): Record<string, string> {
  const params: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const part of text.split(',')) {
    if (part === '') continue;
    const equals = part.indexOf('=');
    try {
      const key = decodeURIComponent((equals < 0 ? part : part.slice(0, equals)).replaceAll('+', ' '));
      let value = equals < 0 ? '' : decodeURIComponent(part.slice(equals + 1).replaceAll('+', ' '));
      for (const variable of ['processid', 'reference', 'inputid', 'outputid']) {
        const replacement = values[variable];
        if (replacement !== undefined) value = value.replaceAll(`$${variable}`, replacement);
      }
      params[key] = value;
    } catch {
      continue;
    }
  }
  return params;
}

/**
 * The config with every placeholder resolved (docs/processes.md#process-config): in ids, addresses, options and
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
    ...s3Placeholders(server.s3),
  };
  const templates = server.templates ?? {};
  const run = server.run;
  const write = server.memfsWrite ?? server.memfs;
  const writes = { memfs: write, 'fs:mem': write, ...s3Placeholders(server.s3Write ?? server.s3) };
  const resolveIO = (io: ProcessIO, kind: 'inputid' | 'outputid'): ProcessIO => {
    const id = replacePlaceholders(io.id, base);
    const values = kind === 'outputid' ? { ...base, ...writes, [kind]: id } : { ...base, [kind]: id };
    const section = kind === 'inputid' ? 'input' : 'output';
    return {
      id,
      address: replacePlaceholders(io.address, values, templates, section, run),
      options: io.options.map((option) => replacePlaceholders(option, values, templates, section, run)),
      cleanup: io.cleanup.map((rule) => ({ ...rule, pattern: replacePlaceholders(rule.pattern, values) })),
    };
  };
  // A fallback is read like its input: the same placeholders, `$inputid` its input's id.
  const resolveInput = (input: ProcessInput): ProcessInput => {
    const resolved: ProcessInput = resolveIO(input, 'inputid');
    const fallback = input.fallback;
    if (fallback === undefined) return resolved;
    const values = { ...base, inputid: resolved.id };
    resolved.fallback = {
      ...fallback,
      address: replacePlaceholders(fallback.address, values, templates, 'input', run),
      options: fallback.options.map((option) => replacePlaceholders(option, values, templates, 'input', run)),
    };
    return resolved;
  };
  return {
    ...config,
    input: config.input.map(resolveInput),
    output: config.output.map((io) => resolveIO(io, 'outputid')),
    options: config.options.map((option) => replacePlaceholders(option, base)),
    limits: { ...config.limits },
  };
}

/** `fs:<name>` → URL for each S3 filesystem. */
function s3Placeholders(urls: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [name, url] of Object.entries(urls ?? {})) values[`fs:${name}`] = url;
  return values;
}

/** `{memfs}`: the memory filesystem over loopback, without credentials (see `PlaceholderValues`). */
export function memfsUrl(baseUrl: string): string {
  return `${baseUrl}/memfs`;
}
