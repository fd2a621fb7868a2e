import type { FastifyInstance } from 'fastify';
import type { SpawnFn } from '../process/index.js';
import type { ProbeAnswer, ProbeParams } from './contract.js';
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

/**
 * `GET /api/v3/process/:id/probe`: runs ffmpeg on the process's inputs and answers the streams it
 * found and its log. An input that cannot be opened gives no streams and the log saying why (200,
 * as the reference); an unknown process is a 404.
 */
export function registerProbeRoutes(v3: FastifyInstance, source: ProbeSource, options: ProbeOptions): void {
  const slots = new ProbeSlots(options.running ?? 2, options.queued ?? 8);
  const timeoutMs = options.timeoutMs ?? 20_000;
  v3.get<{ Params: ProbeParams }>('/process/:id/probe', async (request): Promise<ProbeAnswer> => {
    const args = source.probeArgs(request.params.id);
    const run = await slots.run(() =>
      runProbe(options.spawn, options.binary, args, { timeoutMs, maxLines: 1000 }),
    );
    const log = run.lines.map((line) => source.mask(line));
    return {
      streams: parseProbe(run.lines).map((stream) => ({ ...stream, url: source.mask(stream.url) })),
      log,
    };
  });
}
