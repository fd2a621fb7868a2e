import { Type, type Static } from 'typebox';
import { BEARER, errors, GUARDED, JSON_BODY, type RouteDoc } from '../http/index.js';
import { ProcessConfigBody } from '../process/index.js';

/** One stream a probe found (datarhei Core v16 `api.ProbeIO`). */
const ProbeStream = Type.Object({
  url: Type.String(),
  format: Type.String(),
  index: Type.Integer({ description: 'index of the input' }),
  stream: Type.Integer({ description: 'index of the stream within the input' }),
  language: Type.String({ description: 'ISO 639-2 code; und when ffmpeg names none' }),
  type: Type.String(),
  codec: Type.String(),
  coder: Type.String({ description: "always empty: the reference's text parser does not fill it either" }),
  bitrate_kbps: Type.Number(),
  duration_sec: Type.Number({ description: "the input's duration, 0 when unknown (live sources)" }),
  fps: Type.Number(),
  pix_fmt: Type.String(),
  width: Type.Integer(),
  height: Type.Integer(),
  sampling_hz: Type.Integer(),
  layout: Type.String(),
  channels: Type.Integer(),
});
export type ProbeStream = Static<typeof ProbeStream>;

/** The probe's answer: the streams of the process's inputs and ffmpeg's log, credentials hidden. */
const Probe = Type.Object({ streams: Type.Array(ProbeStream), log: Type.Array(Type.String()) });
export type ProbeAnswer = Static<typeof Probe>;

const IdParams = Type.Object({ id: Type.String() });
export type ProbeParams = Static<typeof IdParams>;

/** The probe route, described for the API document. */
export const PROBE_DOCS: Record<string, RouteDoc> = {
  'GET /api/v3/process/:id/probe': {
    summary: "Probe a process's inputs with ffmpeg: their streams and the log",
    tags: ['process'],
    security: BEARER,
    params: IdParams,
    // 503: every probe slot and every place in the queue is taken.
    responses: { 200: Probe, ...errors(...GUARDED, 429, 404, 503) },
  },
  'POST /api/v3/process/probe': {
    summary: 'Probe the inputs of a process config without creating the process (checked as a create)',
    tags: ['process'],
    security: BEARER,
    body: ProcessConfigBody,
    responses: { 200: Probe, ...errors(...GUARDED, ...JSON_BODY, 429, 503) },
  },
};
