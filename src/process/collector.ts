import type { Collector, Emit } from '../monitor/index.js';
import type { ProcessService } from './service/index.js';
import type { LiveInputs } from './fallback/index.js';
import { STATES } from './supervise/index.js';

/**
 * The `ffmpeg` collector (docs/processes.md#metrics-of-processes): `ffmpeg_process{state}`, how many times any process
 * entered each state since the server started; all six series from the start.
 */
export function createFfmpegCollector(service: ProcessService): Collector {
  return {
    name: 'ffmpeg',
    collect(emit: Emit) {
      for (const state of STATES) emit('ffmpeg_process', [state], service.stateEntries[state]);
    },
  };
}

/**
 * The `restream` collector (docs/processes.md#metrics-of-processes): current states, per-process state counts and values,
 * and per-stream IO values. Addresses are masked (no credentials in labels).
 */
export function createRestreamCollector(service: ProcessService): Collector {
  return {
    name: 'restream',
    collect(emit: Emit) {
      const now = service.now();
      const current = Object.fromEntries(STATES.map((state) => [state, 0])) as Record<string, number>;
      for (const entry of service.sortedEntries()) {
        const id = entry.config.id;
        const supervisor = entry.supervisor;
        const state = supervisor.state;
        current[state] = (current[state] ?? 0) + 1;
        for (const counted of STATES)
          emit('restream_process_states', [id, counted], supervisor.stateCounts[counted]);
        const progress = supervisor.progress(now);
        const resources = supervisor.resources;
        const limits = entry.config.limits;
        const values: [string, number][] = [
          ['frame', progress.frame],
          ['fps', progress.fps],
          ['speed', progress.speed],
          ['q', progress.q],
          ['size', progress.sizeBytes],
          ['time', progress.timeSeconds],
          ['drop', progress.drop],
          ['dup', progress.dup],
          ['packet', progress.packet],
          ['bitrate', progress.bitrate],
          ['cpu', resources.cpuPercent],
          ['memory', resources.rssBytes],
          ['uptime', supervisor.stateSeconds(now)],
          ['cpu_limit', limits.cpu_usage],
          ['memory_limit', limits.memory_mbytes * 1024 * 1024],
        ];
        if (!entry.liveInputs.empty) values.push(...fallbackValues(entry.liveInputs));
        const order = supervisor.order;
        for (const [name, value] of values) emit('restream_process', [id, state, order, name], value);
        for (const [type, streams] of [
          ['input', progress.inputs],
          ['output', progress.outputs],
        ] as const) {
          for (const stream of streams) {
            const labels = [
              id,
              type,
              stream.id,
              stream.address,
              String(stream.index),
              String(stream.stream),
              stream.type,
            ];
            const io: [string, number][] = [
              ['frame', stream.frame],
              ['fps', stream.fps],
              ['packet', stream.packet],
              ['pps', stream.pps],
              ['size', stream.sizeBytes],
              ['bitrate', stream.bitrate],
            ];
            if (type === 'output') io.push(['q', stream.q]);
            for (const [name, value] of io) emit('restream_io', [...labels, name], value);
          }
        }
      }
      for (const state of STATES) emit('restream_state', [state], current[state] ?? 0);
    },
  };
}

/**
 * A process with fallbacks (docs/processes.md#fallback-sources): how many of its inputs are on
 * their fallback now, and how many times an input switched over to its fallback and back to its
 * primary since the process was created or last changed.
 */
function fallbackValues(live: LiveInputs): [string, number][] {
  let onFallback = 0;
  let over = 0;
  let back = 0;
  for (const input of live.series()) {
    onFallback += input.fallbackLive;
    over += input.switches.fallback;
    back += input.switches.primary;
  }
  return [
    ['fallback_live', onFallback],
    ['fallback_switches', over],
    ['fallback_returns', back],
  ];
}
