import { Type, type TSchema } from 'typebox';
import { BEARER, errors, GUARDED, JSON_BODY, SAVED, type RouteDoc } from '../../http/index.js';

const Cleanup = Type.Object({
  pattern: Type.String({ description: '<fs>:<glob>, fs one of mem, memfs, disk, diskfs' }),
  max_files: Type.Integer({ minimum: 0 }),
  max_file_age_seconds: Type.Integer({ minimum: 0 }),
  purge_on_delete: Type.Boolean(),
});

const IO = Type.Object({
  id: Type.String(),
  address: Type.String(),
  options: Type.Array(Type.String()),
  cleanup: Type.Optional(Type.Array(Cleanup)),
});

/** The stored config (every default filled). */
const Config = Type.Object(
  {
    id: Type.String(),
    type: Type.Literal('ffmpeg'),
    reference: Type.String(),
    input: Type.Array(IO),
    output: Type.Array(IO),
    options: Type.Array(Type.String()),
    reconnect: Type.Boolean(),
    reconnect_delay_seconds: Type.Integer({ minimum: 0 }),
    autostart: Type.Boolean(),
    stale_timeout_seconds: Type.Integer({ minimum: 0 }),
    limits: Type.Object({
      cpu_usage: Type.Number({ minimum: 0 }),
      memory_mbytes: Type.Integer({ minimum: 0 }),
      waitfor_seconds: Type.Integer({ minimum: 0 }),
    }),
  },
  { $id: 'ProcessConfig', title: 'ProcessConfig' },
);

/** What a client sends: any part of the config; the rest gets its default. */
const ConfigBody = Type.Object(
  {
    id: Type.Optional(Type.String()),
    type: Type.Optional(Type.Literal('ffmpeg')),
    reference: Type.Optional(Type.String()),
    input: Type.Optional(Type.Array(Type.Partial(IO))),
    output: Type.Optional(Type.Array(Type.Partial(IO))),
    options: Type.Optional(Type.Array(Type.String())),
    reconnect: Type.Optional(Type.Boolean()),
    reconnect_delay_seconds: Type.Optional(Type.Integer({ minimum: 0 })),
    autostart: Type.Optional(Type.Boolean()),
    stale_timeout_seconds: Type.Optional(Type.Integer({ minimum: 0 })),
    limits: Type.Optional(Type.Partial(Config.properties.limits)),
  },
  { title: 'ProcessConfigBody', additionalProperties: true },
);

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
  },
  { additionalProperties: true },
);

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

const STATES = ['finished', 'starting', 'running', 'finishing', 'failed', 'killed'];

const State = Type.Object(
  {
    order: Type.Union([Type.Literal('start'), Type.Literal('stop')]),
    exec: Type.Union(STATES.map((state) => Type.Literal(state))),
    runtime_seconds: Type.Integer(),
    reconnect_seconds: Type.Integer({ description: '-1 when no reconnect is pending' }),
    last_logline: Type.String(),
    progress: Progress,
    memory_bytes: Type.Integer(),
    cpu_usage: Type.Number(),
    command: Type.Array(Type.String()),
  },
  { $id: 'ProcessState', title: 'ProcessState', additionalProperties: true },
);

const LogLines = Type.Array(Type.Tuple([Type.String({ description: 'unix seconds' }), Type.String()]));

const Report = Type.Object(
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

const Metadata = Type.Record(Type.String(), Type.Unknown(), { title: 'Metadata' });

const Process = Type.Object(
  {
    id: Type.String(),
    type: Type.Literal('ffmpeg'),
    reference: Type.String(),
    created_at: Type.Integer(),
    updated_at: Type.Integer(),
    config: Type.Optional(Type.Ref('ProcessConfig')),
    state: Type.Optional(Type.Ref('ProcessState')),
    report: Type.Optional(Type.Ref('ProcessReport')),
    metadata: Type.Optional(Metadata),
  },
  { title: 'Process', additionalProperties: true },
);

const Ok = Type.Literal('OK');
const Id = Type.Object({ id: Type.String() });
const IdKey = Type.Object({ id: Type.String(), key: Type.String() });
const Filter = Type.Optional(Type.String({ description: 'comma list of config, state, report, metadata' }));

/** Shared schemas the others refer to by `$ref`; registered with the server (install.ts). */
export const PROCESS_SCHEMAS: TSchema[] = [Config, State, Report];

function guarded(summary: string, doc: Omit<RouteDoc, 'summary' | 'tags' | 'security'>): RouteDoc {
  return { summary, tags: ['process'], security: BEARER, ...doc };
}

export const PROCESS_DOCS: Record<string, RouteDoc> = {
  'POST /api/v3/process': guarded('Create a process (started when autostart)', {
    body: ConfigBody,
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
    responses: { 200: Type.Array(Process), ...errors(...GUARDED, 400) },
  }),
  'GET /api/v3/process/:id': guarded('One process with the asked-for parts', {
    params: Id,
    querystring: Type.Object({ filter: Filter }),
    responses: { 200: Process, ...errors(...GUARDED, 400, 404) },
  }),
  'PUT /api/v3/process/:id': guarded(
    'Replace a process: the body is merged over its config; restarted if ordered to run',
    {
      params: Id,
      body: ConfigBody,
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
      command: Type.Union([
        Type.Literal('start'),
        Type.Literal('stop'),
        Type.Literal('restart'),
        Type.Literal('reload'),
      ]),
    }),
    responses: { 200: Ok, ...errors(...GUARDED, ...JSON_BODY, 404, ...SAVED) },
  }),
  'GET /api/v3/process/:id/metadata': guarded("All of a process's metadata", {
    params: Id,
    responses: { 200: Metadata, ...errors(...GUARDED, 404) },
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
