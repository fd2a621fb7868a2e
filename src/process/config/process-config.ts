import { RequestCheck } from '../../http/index.js';
import {
  FALLBACK_DEFAULTS,
  ProcessConfigBody,
  type InputFallback,
  type ProcessConfig,
  type ProcessInput,
  type ProcessIO,
} from './contract.js';
import { shortUuid } from './short-id.js';

const bodyCheck = new RequestCheck(ProcessConfigBody);

/**
 * Reads a request body into a config, filling defaults (docs/processes.md#process-config). The body is checked against
 * the contract's schema (`ProcessConfigBody`); its problems come as `<field path>: <what was
 * expected>`, and a config is returned only when there are none. Unknown fields are ignored and
 * `null` counts as "not given", as in the reference API.
 */
export function readProcessConfig(body: unknown): { config?: ProcessConfig; problems: string[] } {
  if (body === undefined) return { problems: ['body: a JSON object with the process config is required'] };
  const read = bodyCheck.read(body);
  if (read.value === undefined) return { problems: read.problems };
  return { config: withDefaults(read.value), problems: [] };
}

/** The config a checked body asks for, every field not given filled with its default. */
function withDefaults(body: ProcessConfigBody): ProcessConfig {
  const limits = body.limits ?? {};
  return {
    id: body.id ?? shortUuid(),
    type: (body.type ?? 'ffmpeg') as 'ffmpeg',
    reference: body.reference ?? '',
    input: withFallbacks(
      withIds(body.input ?? [], () => []),
      (body.input ?? []).map((input) => input.fallback),
    ),
    output: withIds(body.output ?? [], (output) =>
      (output.cleanup ?? []).map((rule) => ({
        pattern: rule.pattern ?? '',
        max_files: rule.max_files ?? 0,
        max_file_age_seconds: rule.max_file_age_seconds ?? 0,
        purge_on_delete: rule.purge_on_delete ?? false,
      })),
    ),
    options: [...(body.options ?? [])],
    reconnect: body.reconnect ?? false,
    reconnect_delay_seconds: body.reconnect_delay_seconds ?? 0,
    autostart: body.autostart ?? true,
    stale_timeout_seconds: body.stale_timeout_seconds ?? 0,
    limits: {
      cpu_usage: limits.cpu_usage ?? 0,
      memory_mbytes: limits.memory_mbytes ?? 0,
      waitfor_seconds: limits.waitfor_seconds ?? 0,
    },
  };
}

type IoBody = NonNullable<ProcessConfigBody['output']>[number];

/** The inputs or outputs with their ids: an absent one, or one taken in the list, gets a fresh id. */
function withIds<Io extends IoBody>(list: Io[], cleanup: (io: Io) => ProcessIO['cleanup']): ProcessIO[] {
  const used = new Set(list.map((io) => io.id));
  return list.map((io) => {
    let id = io.id ?? '';
    // An input or output without id gets a fresh one (docs/processes.md#process-config), unique within its list.
    while (id === '' || (io.id !== id && used.has(id))) id = shortUuid();
    used.add(id);
    return { id, address: io.address ?? '', options: [...(io.options ?? [])], cleanup: cleanup(io) };
  });
}

type FallbackBody = NonNullable<NonNullable<ProcessConfigBody['input']>[number]['fallback']>;

/** The inputs with their fallbacks, defaults filled; one with an empty address is none. */
function withFallbacks(inputs: ProcessIO[], fallbacks: (FallbackBody | null | undefined)[]): ProcessInput[] {
  return inputs.map((input, index) => {
    const fallback = fallbacks[index];
    if (fallback === undefined || fallback === null || (fallback.address ?? '') === '') return input;
    const filled: InputFallback = {
      address: fallback.address ?? '',
      options: [...(fallback.options ?? [])],
      timeout_seconds: fallback.timeout_seconds ?? FALLBACK_DEFAULTS.timeout_seconds,
      return_after_seconds: fallback.return_after_seconds ?? FALLBACK_DEFAULTS.return_after_seconds,
      switch_back_interval_seconds:
        fallback.switch_back_interval_seconds ?? FALLBACK_DEFAULTS.switch_back_interval_seconds,
    };
    return { ...input, fallback: filled };
  });
}

/**
 * The body of an update merged over the current config (`mergeOver`), where an input sent
 * without a `fallback` (or with `null`) keeps the fallback of the current input with its id:
 * clients that do not know the field (v16 ones) send their inputs back without it.
 */
export function mergeUpdate(current: ProcessConfig, body: Record<string, unknown>): Record<string, unknown> {
  const merged = mergeOver(configToPlain(current), body);
  if (!Array.isArray(body.input)) return merged;
  const kept = new Map(
    current.input.flatMap((input) => (input.fallback ? [[input.id, input.fallback]] : [])),
  );
  if (kept.size === 0) return merged;
  merged.input = body.input.map((input: unknown) => {
    if (!isObject(input) || (input.fallback !== undefined && input.fallback !== null)) return input;
    const fallback = typeof input.id === 'string' ? kept.get(input.id) : undefined;
    return fallback === undefined ? input : { ...input, fallback };
  });
  return merged;
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
