import type { FastifyInstance } from 'fastify';
import type { PreparedProbe, SpawnFn } from '../process/index.js';
import type { ProbeAnswer, ProbeParams } from './contract.js';
import { parseProbe } from './parse-probe.js';
import { ProbeSlots } from './probe-slots.js';
import { runProbe } from './run-probe.js';

/** What the probe needs from the processes: the inputs of one, placeholders resolved. */
export interface ProbeSource {
  /** The probe of a process; 404 ApiError when unknown. */
  probeArgs(id: string): PreparedProbe;
  /** The same for a process config that is not created (a body as `POST /api/v3/process` takes); 400 when invalid. */
  probeConfigArgs(body: unknown): PreparedProbe;
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
 * `GET /api/v3/process/:id/probe` and `POST /api/v3/process/probe`: runs ffmpeg on the inputs of a
 * process, or of a config sent in the body (checked as a create, not created), and answers the
 * streams it found and its log. An input that cannot be opened gives no streams and the log
 * saying why (200, as the reference); an unknown process is a 404, an invalid config a 400.
 */
export function registerProbeRoutes(v3: FastifyInstance, source: ProbeSource, options: ProbeOptions): void {
  const slots = new ProbeSlots(options.running ?? 2, options.queued ?? 8);
  const timeoutMs = options.timeoutMs ?? 20_000;
  const probe = async (prepared: PreparedProbe): Promise<ProbeAnswer> => {
    let lines: string[];
    try {
      const run = await slots.run(() =>
        runProbe(options.spawn, options.binary, prepared.args, { timeoutMs, maxLines: 1000 }),
      );
      lines = run.lines;
    } finally {
      prepared.release();
    }
    return {
      streams: parseProbe(lines).map((stream) => ({ ...stream, url: prepared.mask(stream.url) })),
      log: lines.map((line) => prepared.mask(line)),
    };
  };
  v3.get<{ Params: ProbeParams }>('/process/:id/probe', (request) =>
    probe(source.probeArgs(request.params.id)),
  );
  v3.post('/process/probe', (request) => probe(source.probeConfigArgs(request.body)));
}
