/**
 * The series bench/history.ts writes into the history engines: the 15 values of running encoder
 * processes (docs/processes.md#metrics-of-processes), which make up most series of a server (host, filesystem and session
 * metrics are a few dozen), stepped deterministically so that runs are comparable.
 */
import { pino } from 'pino';
import { MetricHistory } from '../src/monitor/history/index.js';
import { describeSeries, type SeriesInfo } from '../src/monitor/history/series-kind.js';
import type { LoggedPoint } from '../src/monitor/history/window-log.js';
import { METRIC_INDEX, MetricStore } from '../src/monitor/store/store.js';

/** A deterministic pseudo-random source (the runs must be comparable). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

export interface Workload {
  series: SeriesInfo[];
  /** The points of the next step, one per series. */
  step(): LoggedPoint[];
}

/** The 15 values of a running encoder process (docs/processes.md#metrics-of-processes), the bulk of a server's series. */
const PROCESS_VALUES = [
  'frame',
  'packet',
  'time',
  'uptime',
  'size',
  'drop',
  'dup',
  'cpu_limit',
  'memory_limit',
  'fps',
  'speed',
  'q',
  'cpu',
  'bitrate',
  'memory',
] as const;

/**
 * Series `i` is value `PROCESS_VALUES[i % 15]` of process `i / 15`, stepped once per `stepSec`:
 * steady counters (frames at 25 fps, packets, media time, uptime), a byte counter with ±10 % jitter,
 * constants (drops, dups, limits), noisy decimals (fps, speed, q, cpu %: mean and max of the step),
 * a noisy bitrate and a memory gauge in a random walk.
 */
export function workload(count: number, stepSec = 60): Workload {
  const metric = METRIC_INDEX.get('restream_process')!;
  const series = Array.from({ length: count }, (_, i) =>
    describeSeries(metric, [`p${Math.floor(i / 15)}`, 'running', 'start', PROCESS_VALUES[i % 15]!]),
  );
  const next = random(42);
  const state: number[] = series.map((_, i) => (PROCESS_VALUES[i % 15] === 'memory' ? 250e6 : 0));
  const r3 = (value: number): number => Math.round(value * 1000) / 1000;
  return {
    series,
    step() {
      return series.map((info, i) => {
        const noise = next() - 0.5;
        let values: number[];
        switch (PROCESS_VALUES[i % 15]!) {
          case 'frame':
          case 'packet':
            values = [(state[i]! += 25 * stepSec)];
            break;
          case 'time':
          case 'uptime':
            values = [(state[i]! += stepSec)];
            break;
          case 'size':
            values = [(state[i]! += Math.round(250_000 * stepSec * (1 + noise * 0.2)))];
            break;
          case 'drop':
          case 'dup':
            values = [0];
            break;
          case 'cpu_limit':
            values = [100, 100];
            break;
          case 'memory_limit':
            values = [2_147_483_648, 2_147_483_648];
            break;
          case 'fps':
            values = [r3(25 + noise * 0.05), 25.1];
            break;
          case 'speed':
            values = [r3(1 + noise * 0.02), r3(1.02 + next() * 0.01)];
            break;
          case 'q':
            values = [r3(28 + noise * 2), 31];
            break;
          case 'cpu':
            values = [r3(12 + noise * 3), r3(16 + next() * 4)];
            break;
          case 'bitrate':
            values = [Math.round(2_000_000 * (1 + noise * 0.2)), Math.round(2_400_000 * (1 + next() * 0.1))];
            break;
          case 'memory':
            state[i]! += Math.round(noise * 2e6);
            values = [state[i]!, state[i]! + Math.round(next() * 1e5)];
        }
        return { series: info, values };
      });
    },
  };
}

/** A loaded history in `dir` with the server's default retentions and no size cap, silent. */
export async function defaultHistory(dir: string): Promise<MetricHistory> {
  const history = new MetricHistory({
    dir,
    minuteRetentionDays: 7,
    hourRetentionDays: 400,
    maxSizeBytes: 0,
    logger: pino({ level: 'silent' }),
  });
  await history.load();
  return history;
}

/** A store holding `count` `restream_process` series, 15 per process, and their ids. */
export function processSeriesStore(count: number): { store: MetricStore; ids: number[] } {
  const store = new MetricStore(150);
  const metric = METRIC_INDEX.get('restream_process')!;
  const ids = Array.from({ length: count }, (_, i) =>
    store.intern(metric, [`p${Math.floor(i / 15)}`, 'running', 'start', `v${i % 15}`]),
  );
  return { store, ids };
}
