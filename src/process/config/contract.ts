import { Type, type Static } from 'typebox';
import { Given } from '../../http/index.js';

/**
 * The process config's wire shapes (docs/processes.md#process-config), declared once: the config as stored and answered,
 * and the body a client sends. The TypeScript types of process/ are derived from them, the request
 * check validates bodies against them (process-config.ts), and the API description shows them
 * (process/api/contract.ts). Declared here, not in process/api, because every room of process/
 * reads the config and process/config imports no other room.
 */

const NON_NEGATIVE_INTEGER = { minimum: 0, maximum: Number.MAX_SAFE_INTEGER } as const;

/** A cleanup rule of an output (docs/processes.md#states-orders-and-supervision). */
const CleanupRule = Type.Object({
  pattern: Type.String({ description: '<fs>:<glob>, fs one of mem, memfs, disk, diskfs' }),
  max_files: Type.Integer({
    ...NON_NEGATIVE_INTEGER,
    description: 'keep at most this many newest files; 0 = no bound',
  }),
  max_file_age_seconds: Type.Integer({
    ...NON_NEGATIVE_INTEGER,
    description: 'delete matching files older than this; 0 = no bound',
  }),
  purge_on_delete: Type.Boolean({ description: 'delete every matching file when the process goes away' }),
});
export type CleanupRule = Static<typeof CleanupRule>;

const ProcessIO = Type.Object({
  id: Type.String(),
  address: Type.String(),
  options: Type.Array(Type.String()),
  cleanup: Type.Array(CleanupRule, { description: 'only meaningful for outputs; always [] for inputs' }),
});
export type ProcessIO = Static<typeof ProcessIO>;

/** How long, in seconds (the bounds are named by the semantic checks, validate-config.ts). */
const SECONDS = (description: string) => Type.Number({ minimum: 0, description });

/** A source that stands in while an input's own is lost (docs/processes.md#fallback-sources). */
const InputFallback = Type.Object({
  address: Type.String({
    description:
      'an image (shown with silence), a media file (looped) or a live source; the access rules apply',
  }),
  options: Type.Array(Type.String(), { description: 'ffmpeg options for reading the fallback' }),
  timeout_seconds: SECONDS(
    'without data from the input this long (0.2 to 3600), the fallback takes over; default 1',
  ),
  return_after_seconds: SECONDS(
    'the input must deliver this long without a gap (at most 86400) before it takes over again; default 2',
  ),
  switch_back_interval_seconds: SECONDS(
    'two switch-backs to the input are at least this far apart (a flapping input; at most 86400); default 10',
  ),
});
export type InputFallback = Static<typeof InputFallback>;

/** The defaults of a fallback's timings (docs/processes.md#fallback-sources). */
export const FALLBACK_DEFAULTS = {
  timeout_seconds: 1,
  return_after_seconds: 2,
  switch_back_interval_seconds: 10,
} as const;

const ProcessInput = Type.Object({
  ...ProcessIO.properties,
  fallback: Type.Optional(InputFallback),
});
export type ProcessInput = Static<typeof ProcessInput>;

const ProcessLimits = Type.Object({
  cpu_usage: Type.Number({ minimum: 0, description: 'percent of the whole machine; 0 = no limit' }),
  memory_mbytes: Type.Integer({
    ...NON_NEGATIVE_INTEGER,
    description: 'MiB of resident memory; 0 = no limit',
  }),
  waitfor_seconds: Type.Integer({
    ...NON_NEGATIVE_INTEGER,
    description: 'how long a limit may be exceeded before the process is stopped',
  }),
});
export type ProcessLimits = Static<typeof ProcessLimits>;

/** The config as stored and answered, every default filled. */
export const ProcessConfig = Type.Object(
  {
    id: Type.String(),
    type: Type.Literal('ffmpeg'),
    reference: Type.String(),
    input: Type.Array(ProcessInput),
    output: Type.Array(ProcessIO),
    options: Type.Array(Type.String()),
    reconnect: Type.Boolean(),
    reconnect_delay_seconds: Type.Integer(NON_NEGATIVE_INTEGER),
    autostart: Type.Boolean(),
    stale_timeout_seconds: Type.Integer(NON_NEGATIVE_INTEGER),
    limits: ProcessLimits,
  },
  { $id: 'ProcessConfig', title: 'ProcessConfig' },
);
export type ProcessConfig = Static<typeof ProcessConfig>;

const CleanupRuleBody = Type.Object({
  pattern: Given(CleanupRule.properties.pattern),
  max_files: Given(CleanupRule.properties.max_files),
  max_file_age_seconds: Given(CleanupRule.properties.max_file_age_seconds),
  purge_on_delete: Given(CleanupRule.properties.purge_on_delete),
});

const IOBody = Type.Object({
  id: Given(Type.String({ description: 'a fresh one when absent or taken' })),
  address: Given(ProcessIO.properties.address),
  options: Given(ProcessIO.properties.options),
});

/**
 * An input as sent; a `cleanup` of an input is ignored, whatever it holds. A `fallback` not given
 * in an update keeps the one the input of the same id has (clients that do not know the field
 * send the input without it); one with an empty address removes it.
 */
const InputBody = Type.Object({
  ...IOBody.properties,
  fallback: Given(
    Type.Object({
      address: Given(InputFallback.properties.address),
      options: Given(InputFallback.properties.options),
      timeout_seconds: Given(InputFallback.properties.timeout_seconds),
      return_after_seconds: Given(InputFallback.properties.return_after_seconds),
      switch_back_interval_seconds: Given(InputFallback.properties.switch_back_interval_seconds),
    }),
  ),
});

const OutputBody = Type.Object({
  ...IOBody.properties,
  cleanup: Given(Type.Array(CleanupRuleBody)),
});

/**
 * What a client sends (POST, and PUT where it is merged over the current config): any part of the
 * config; the rest gets its default. Unknown fields are accepted and ignored; `type` is any string
 * here (an unsupported one is named by the semantic checks, validate-config.ts).
 */
export const ProcessConfigBody = Type.Object(
  {
    id: Given(Type.String({ description: 'a short random id when absent' })),
    type: Given(Type.String({ description: 'only "ffmpeg" is supported' })),
    reference: Given(ProcessConfig.properties.reference),
    input: Given(Type.Array(InputBody)),
    output: Given(Type.Array(OutputBody)),
    options: Given(ProcessConfig.properties.options),
    reconnect: Given(ProcessConfig.properties.reconnect),
    reconnect_delay_seconds: Given(ProcessConfig.properties.reconnect_delay_seconds),
    autostart: Given(Type.Boolean({ description: 'default true' })),
    stale_timeout_seconds: Given(ProcessConfig.properties.stale_timeout_seconds),
    limits: Given(
      Type.Object({
        cpu_usage: Given(ProcessLimits.properties.cpu_usage),
        memory_mbytes: Given(ProcessLimits.properties.memory_mbytes),
        waitfor_seconds: Given(ProcessLimits.properties.waitfor_seconds),
      }),
    ),
  },
  { title: 'ProcessConfigBody' },
);
export type ProcessConfigBody = Static<typeof ProcessConfigBody>;
