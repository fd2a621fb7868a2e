import { Type, type Static, type TSchema } from 'typebox';
import { BEARER, errors, GUARDED, JSON_BODY, SAVED, type RouteDoc } from '../../http/index.js';
import { ProcessConfig, ProcessConfigBody } from '../config/index.js';
import { COMMANDS } from '../service/index.js';

/**
 * The process API's answers (docs/processes.md#routes-and-answers), declared once: the views (views.ts, api-shapes.ts) are
 * typed from these schemas, the fast encoders (state-json.ts, process-json-fragments.ts, list-answers.ts)
 * are tested against them, and the routes below are described by them. The config and the body a
 * client sends are declared with the config itself (process/config/contract.ts).
 */

const Stream = Type.Object(
  {
    id: Type.String(),
    address: Type.String(),
    index: Type.Integer(),
    stream: Type.Integer(),
    format: Type.String(),
    type: Type.String(),
    codec: Type.String(),
    coder: Type.String(),
    frame: Type.Number(),
    keyframe: Type.Integer({ description: 'Key frames (encoded video; 0 where ffmpeg does not tell)' }),
    framerate: Type.Object(
      { min: Type.Number(), max: Type.Number(), avg: Type.Number() },
      { description: 'Lowest and highest fps of the run, and frames per second since its first report' },
    ),
    fps: Type.Number(),
    packet: Type.Number(),
    pps: Type.Number(),
    size_kb: Type.Number(),
    bitrate_kbit: Type.Number(),
    extradata_size_bytes: Type.Integer({ description: 'Always 0: a stock ffmpeg does not report it' }),
    q: Type.Optional(Type.Number({ description: 'outputs and video inputs' })),
    pix_fmt: Type.Optional(Type.String()),
    width: Type.Optional(Type.Integer()),
    height: Type.Optional(Type.Integer()),
    sampling_hz: Type.Optional(Type.Integer()),
    layout: Type.Optional(Type.String()),
    channels: Type.Optional(Type.Integer()),
  },
  { additionalProperties: true },
);
export type StreamView = Static<typeof Stream>;

const Progress = Type.Object(
  {
    inputs: Type.Array(Stream),
    outputs: Type.Array(Stream),
    frame: Type.Number(),
    packet: Type.Number(),
    fps: Type.Number(),
    q: Type.Number(),
    size_kb: Type.Number(),
    time: Type.Number(),
    bitrate_kbit: Type.Number(),
    speed: Type.Number(),
    drop: Type.Number(),
    dup: Type.Number(),
  },
  { additionalProperties: true },
);
export type ProgressView = Static<typeof Progress>;

const STATES = ['finished', 'starting', 'running', 'finishing', 'failed', 'killed'] as const;

export const ProcessState = Type.Object(
  {
    order: Type.Union([Type.Literal('start'), Type.Literal('stop')]),
    exec: Type.Enum(STATES),
    runtime_seconds: Type.Integer(),
    reconnect_seconds: Type.Integer({ description: '-1 when no reconnect is pending' }),
    last_logline: Type.String(),
    progress: Progress,
    memory_bytes: Type.Integer(),
    cpu_usage: Type.Number(),
    command: Type.Array(Type.String()),
    pid: Type.Integer({ description: 'process id of the running encoder, 0 when none' }),
    input_live: Type.Optional(
      Type.Record(Type.String(), Type.Union([Type.Literal('primary'), Type.Literal('fallback')]), {
        description:
          'per input with a fallback, which source feeds it now (docs/processes.md#fallback-sources); absent without fallbacks',
      }),
    ),
  },
  { $id: 'ProcessState', title: 'ProcessState', additionalProperties: true },
);
export type StateView = Static<typeof ProcessState>;

const LogLines = Type.Array(Type.Tuple([Type.String({ description: 'unix seconds' }), Type.String()]));

export const ProcessReport = Type.Object(
  {
    created_at: Type.Integer(),
    prelude: Type.Array(Type.String()),
    log: LogLines,
    history: Type.Array(
      Type.Object(
        {
          created_at: Type.Integer(),
          prelude: Type.Array(Type.String()),
          log: LogLines,
          exited_at: Type.Integer(),
          exit_state: Type.String(),
        },
        { additionalProperties: true },
      ),
    ),
  },
  { $id: 'ProcessReport', title: 'ProcessReport', additionalProperties: true },
);
export type ReportView = Static<typeof ProcessReport>;

export const ProcessMetadata = Type.Record(Type.String(), Type.Unknown(), { title: 'Metadata' });

/** A process with the parts a `filter` asked for; the parts refer to the shared schemas by `$ref`. */
export const ProcessView = Type.Object(
  {
    id: Type.String(),
    type: Type.Literal('ffmpeg'),
    reference: Type.String(),
    created_at: Type.Integer(),
    updated_at: Type.Integer(),
    config: Type.Optional(Type.Ref('ProcessConfig')),
    state: Type.Optional(Type.Ref('ProcessState')),
    report: Type.Optional(Type.Ref('ProcessReport')),
    metadata: Type.Optional(ProcessMetadata),
  },
  { title: 'Process', additionalProperties: true },
);
/** A process view, its parts' `$ref`s resolved to the schemas they name. */
export type ProcessViewDto = Static<
  typeof ProcessView,
  {
    ProcessConfig: typeof ProcessConfig;
    ProcessState: typeof ProcessState;
    ProcessReport: typeof ProcessReport;
  }
>;

const Ok = Type.Literal('OK');
const Id = Type.Object({ id: Type.String() });
const IdKey = Type.Object({ id: Type.String(), key: Type.String() });
const Filter = Type.Optional(Type.String({ description: 'comma list of config, state, report, metadata' }));

/** Shared schemas the others refer to by `$ref`; registered with the server (install.ts). */
export const PROCESS_SCHEMAS: TSchema[] = [ProcessConfig, ProcessState, ProcessReport];

function guarded(summary: string, doc: Omit<RouteDoc, 'summary' | 'tags' | 'security'>): RouteDoc {
  return { summary, tags: ['process'], security: BEARER, ...doc };
}

export const PROCESS_DOCS: Record<string, RouteDoc> = {
  'POST /api/v3/process': guarded('Create a process (started when autostart)', {
    body: ProcessConfigBody,
    responses: { 200: Type.Ref('ProcessConfig'), ...errors(...GUARDED, ...JSON_BODY, ...SAVED) },
  }),
  'GET /api/v3/process': guarded('List processes, sorted by id, with the asked-for parts', {
    querystring: Type.Object({
      filter: Filter,
      id: Type.Optional(Type.String({ description: 'comma list of ids' })),
      reference: Type.Optional(Type.String()),
      idpattern: Type.Optional(Type.String({ description: 'glob' })),
      refpattern: Type.Optional(Type.String({ description: 'glob' })),
    }),
    responses: { 200: Type.Array(ProcessView), ...errors(...GUARDED, 400) },
  }),
  'GET /api/v3/process/:id': guarded('One process with the asked-for parts', {
    params: Id,
    querystring: Type.Object({ filter: Filter }),
    responses: { 200: ProcessView, ...errors(...GUARDED, 400, 404) },
  }),
  'PUT /api/v3/process/:id': guarded(
    'Replace a process: the body is merged over its config; restarted if ordered to run',
    {
      params: Id,
      body: ProcessConfigBody,
      responses: { 200: Type.Ref('ProcessConfig'), ...errors(...GUARDED, ...JSON_BODY, 404, ...SAVED) },
    },
  ),
  'DELETE /api/v3/process/:id': guarded('Stop and delete a process; purges its purge_on_delete files', {
    params: Id,
    responses: { 200: Ok, ...errors(...GUARDED, 404, ...SAVED) },
  }),
  'GET /api/v3/process/:id/config': guarded("A process's config", {
    params: Id,
    responses: { 200: Type.Ref('ProcessConfig'), ...errors(...GUARDED, 404) },
  }),
  'GET /api/v3/process/:id/state': guarded("A process's state and progress", {
    params: Id,
    responses: { 200: Type.Ref('ProcessState'), ...errors(...GUARDED, 404) },
  }),
  'GET /api/v3/process/:id/report': guarded(
    "A process's log: this run's prelude and lines, and earlier runs",
    {
      params: Id,
      responses: { 200: Type.Ref('ProcessReport'), ...errors(...GUARDED, 404) },
    },
  ),
  'PUT /api/v3/process/:id/command': guarded('Start, stop, restart or reload a process', {
    params: Id,
    body: Type.Object({
      command: Type.Enum(COMMANDS),
    }),
    responses: { 200: Ok, ...errors(...GUARDED, ...JSON_BODY, 404, ...SAVED) },
  }),
  'GET /api/v3/process/:id/metadata': guarded("All of a process's metadata", {
    params: Id,
    responses: { 200: ProcessMetadata, ...errors(...GUARDED, 404) },
  }),
  'GET /api/v3/process/:id/metadata/:key': guarded('One metadata value of a process', {
    params: IdKey,
    responses: { 200: Type.Unknown({ description: 'any JSON value' }), ...errors(...GUARDED, 404) },
  }),
  'PUT /api/v3/process/:id/metadata/:key': guarded(
    'Store one metadata value of a process (null deletes it)',
    {
      params: IdKey,
      body: Type.Unknown({ description: 'any JSON value' }),
      responses: {
        200: Type.Unknown({ description: 'the stored value' }),
        ...errors(...GUARDED, ...JSON_BODY, 404, ...SAVED),
      },
    },
  ),
};
