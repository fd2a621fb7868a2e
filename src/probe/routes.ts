import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { ErrorSchema, GUARDED_ERRORS } from '../http/index.js';
import type { SpawnFn } from '../process/index.js';
import { parseProbe } from './parse-probe.js';
import { ProbeSlots } from './probe-slots.js';
import { runProbe } from './run-probe.js';

/** What the probe needs from the processes: the inputs of one, placeholders resolved. */
export interface ProbeSource {
  /** Global options, then each input's options, `-i` and address; 404 ApiError when unknown. */
  probeArgs(id: string): string[];
  /** Hides credentials in a line of the answered log. */
  mask(text: string): string;
}

export interface ProbeOptions {
  binary: string;
  spawn: SpawnFn;
  /** Bound on one probe, ms (the reference's is 20 s). */
  timeoutMs?: number;
  /** Probes at once, and probes that may wait for a slot. */
  running?: number;
  queued?: number;
}

const Stream = Type.Object({
  url: Type.String(),
  format: Type.String(),
  index: Type.Integer(),
  stream: Type.Integer(),
  language: Type.String(),
  type: Type.String(),
  codec: Type.String(),
  coder: Type.String(),
  bitrate_kbps: Type.Number(),
  duration_sec: Type.Number(),
  fps: Type.Number(),
  pix_fmt: Type.String(),
  width: Type.Integer(),
  height: Type.Integer(),
  sampling_hz: Type.Integer(),
  layout: Type.String(),
  channels: Type.Integer(),
});
export const ProbeSchema = Type.Object({ streams: Type.Array(Stream), log: Type.Array(Type.String()) });

/**
 * `GET /api/v3/process/:id/probe`: runs ffmpeg on the process's inputs and answers the streams it
 * found and its log. An input that cannot be opened gives no streams and the log saying why (200,
 * as the reference); an unknown process is a 404.
 */
export function registerProbeRoutes(v3: FastifyInstance, source: ProbeSource, options: ProbeOptions): void {
  const slots = new ProbeSlots(options.running ?? 2, options.queued ?? 8);
  const timeoutMs = options.timeoutMs ?? 20_000;
  v3.get<{ Params: { id: string } }>(
    '/process/:id/probe',
    {
      schema: {
        summary: "Probe a process's inputs with ffmpeg: their streams and the log",
        tags: ['process'],
        security: [{ bearerAuth: [] }],
        params: Type.Object({ id: Type.String() }),
        response: { 200: ProbeSchema, 404: ErrorSchema, 503: ErrorSchema, ...GUARDED_ERRORS },
      },
    },
    async (request) => {
      const args = source.probeArgs(request.params.id);
      const run = await slots.run(() =>
        runProbe(options.spawn, options.binary, args, { timeoutMs, maxLines: 1000 }),
      );
      const log = run.lines.map((line) => source.mask(line));
      return {
        streams: parseProbe(run.lines).map((stream) => ({ ...stream, url: source.mask(stream.url) })),
        log,
      };
    },
  );
}
