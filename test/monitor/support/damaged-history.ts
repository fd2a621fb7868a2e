import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { MetricHistory } from '../../../src/monitor/history/index.js';
import { pointsBetween, type Tier } from '../../../src/monitor/history/index.js';
import { scanLog } from '../../../src/monitor/history/log-frame.js';
import { FRAME_HEADER_BYTES } from '../../../src/monitor/history/record-frame.js';
import { readSegmentIndex } from '../../../src/monitor/history/segment-file.js';
import { OFFSET, STEPS_LENGTH, VALUES_LENGTH } from '../../../src/monitor/history/segment-index.js';
import { SeriesTables } from '../../../src/monitor/history/series-table.js';
import { readWindowLog } from '../../../src/monitor/history/window-log.js';
import { METRIC_INDEX, MetricStore, SampleBatch } from '../../../src/monitor/store/index.js';
import { openHistory } from './history.js';

/**
 * A history directory with known points, for the damage tests (history-damage.test.ts,
 * history-fuzz.test.ts): `cpu_idle` (a gauge) and `net_rx{eth0}` (a counter) sampled twice a
 * minute for `HISTORY_MINUTES` minutes from `HISTORY_T0`: the minute tier has three sealed 6-hour
 * windows and an open one (its write-ahead log), the hour tier its open window's log.
 */
export const HISTORY_T0 = Date.UTC(2026, 0, 5);
export const HISTORY_MINUTES = 20 * 60 + 7;
/** The gauge's value in minute `m` from `HISTORY_T0` (both of its samples). */
export const cpuIdleAt = (minute: number): number => minute % 97;
export const TIER_WINDOW_SEC = { minute: 6 * 3600, hour: 10 * 86_400 } as const;
export type TierName = keyof typeof TIER_WINDOW_SEC;

/** Writes the history described above into `dir` (which must not hold one). */
export async function writeKnownHistory(dir: string): Promise<void> {
  const history = await openHistory(dir);
  feedMinutes(history, new MetricStore(16), 0, HISTORY_MINUTES);
  await history.close();
}

/** Feeds the samples of minutes [from, to) (counted from `HISTORY_T0`) to `history`. */
export function feedMinutes(history: MetricHistory, store: MetricStore, from: number, to: number): void {
  const cpu = store.intern(METRIC_INDEX.get('cpu_idle')!, []);
  const rx = store.intern(METRIC_INDEX.get('net_rx')!, ['eth0']);
  for (let minute = from; minute < to; minute++) {
    for (const second of [0, 30]) {
      const batch = new SampleBatch();
      // Both samples of a minute alike: its mean is an integer the API prints exactly.
      batch.add(cpu, cpuIdleAt(minute));
      batch.add(rx, 1000 * minute + second);
      const timeMs = HISTORY_T0 + (minute * 60 + second) * 1000;
      store.commit(timeMs, batch);
      history.ingest(timeMs, batch, store);
    }
  }
}

/** Every point of a tier: series key → step start (s) → value. */
export async function pointsOfTier(
  history: MetricHistory,
  tier: Tier,
): Promise<Map<string, Map<number, number>>> {
  const points = new Map<string, Map<number, number>>();
  for (const [key, { pieces }] of await history.read(tier, () => true, 0, Number.MAX_SAFE_INTEGER)) {
    const { timesSec, values } = pointsBetween(pieces, 0, Number.MAX_SAFE_INTEGER);
    const byTime = new Map<number, number>();
    for (let i = 0; i < timesSec.length; i++) byTime.set(timesSec[i]!, values[i]!);
    points.set(key, byTime);
  }
  return points;
}

/**
 * Where a window's points are on disk, as byte spans `[start, end)`: a log's records by step, or a
 * sealed file's index record and, by series key, the sections a query reads (steps, first column).
 */
export interface WindowFile {
  tier: TierName;
  name: string;
  bytes: number;
  /** Log records: step start → its framed bytes. */
  records?: Map<number, [number, number]>;
  /** Sealed file: its index record (framed). */
  index?: [number, number];
  /** Sealed file: series key → the sections a query reads. */
  sections?: Map<string, [number, number]>;
}

/** The window files of a history directory, by `<tier>/<name>`. */
export function windowFiles(dir: string): Map<string, WindowFile> {
  const files = new Map<string, WindowFile>();
  for (const tier of ['minute', 'hour'] as const) {
    for (const name of readdirSync(join(dir, tier))) {
      const path = join(dir, tier, name);
      const file: WindowFile = { tier, name, bytes: statSync(path).size };
      if (name.endsWith('.wal')) {
        const window = {
          startSec: Number.parseInt(name, 10),
          stepSec: tier === 'minute' ? 60 : 3600,
          windowSec: TIER_WINDOW_SEC[tier],
        };
        const { steps } = readWindowLog(path, window);
        const { records } = scanLog(readFileSync(path));
        file.records = new Map(steps.map((step, i) => [step.stepSec, [records[i]!.start, records[i]!.end]]));
      } else {
        const index = readSegmentIndex(path, new SeriesTables());
        file.index = [0, FRAME_HEADER_BYTES + readFileSync(path).readUInt32LE(0)];
        file.sections = new Map();
        index.series.forEach((series, position) => {
          const start = index.field(position, OFFSET);
          const end = start + index.field(position, STEPS_LENGTH) + index.field(position, VALUES_LENGTH);
          file.sections!.set(series!.key, [start, end]);
        });
      }
      files.set(`${tier}/${name}`, file);
    }
  }
  return files;
}

/**
 * `POST /api/v3/metrics` for cpu_idle over two days at 60 s on the server at `url`: its points
 * by the minute that holds them (step start, s) → value.
 */
export async function cpuIdleMinutesOverHttp(url: string): Promise<Map<number, number>> {
  const response = await fetch(`${url}/api/v3/metrics`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ timerange_sec: 2 * 86_400, interval_sec: 60, metrics: [{ name: 'cpu_idle' }] }),
  });
  if (response.status !== 200) throw new Error(`status ${response.status}: ${await response.text()}`);
  const answer = (await response.json()) as { metrics: { name: string; values: [number, number][] }[] };
  const minutes = new Map<number, number>();
  for (const [timeSec, value] of answer.metrics.find((series) => series.name === 'cpu_idle')?.values ?? [])
    minutes.set(timeSec - (timeSec % 60), value);
  return minutes;
}
