import { CATALOG } from '../catalog.js';
import type { MetricStore } from '../store.js';
import { formatNumber } from './format-number.js';
import { QueryError, type MetricsQuery } from './parse.js';
import type { SeriesSelection } from './select.js';

/** The retention the answer reports, seconds (config `metrics.range_sec` / `interval_sec`). */
export interface Retention {
  rangeSec: number;
  intervalSec: number;
}

/**
 * Most points per series a time-series query may ask for, unless the store holds more snapshots.
 * Sample and hold repeats a value for every point, so without a bound a small `interval_sec` over
 * a long retention could make one answer arbitrarily large.
 */
export const MAX_POINTS_PER_SERIES = 10_000;

/** Catalog indices in name order: the order of the answer (SPEC §5.2). */
const METRICS_IN_NAME_ORDER: readonly number[] = CATALOG.map((_, index) => index).sort((a, b) =>
  CATALOG[a]!.name < CATALOG[b]!.name ? -1 : 1,
);

/**
 * The JSON answer of a query against what the store holds now (SPEC §5.2), as text.
 * Latest-value mode when `timerangeSec` is not given, time series (sample and hold) otherwise.
 */
export function evaluateQuery(
  store: MetricStore,
  retention: Retention,
  query: MetricsQuery,
  selection: SeriesSelection,
): string {
  const head = `{"timerange_sec":${retention.rangeSec},"interval_sec":${retention.intervalSec},"metrics":[`;
  if (store.snapshotCount === 0) return `${head}]}`;
  const points =
    query.timerangeSec === undefined ? latestPoint(store) : timeSeriesPoints(store, retention, query);
  const parts: string[] = [];
  for (const metricIndex of METRICS_IN_NAME_ORDER) {
    if (!selection.wantsMetric(metricIndex)) continue;
    const descriptor = CATALOG[metricIndex]!;
    for (const id of store.seriesOf(metricIndex)) {
      const labelValues = store.labelsOf(id);
      if (!selection.matches(metricIndex, labelValues)) continue;
      const values = formatValues(store, id, points);
      if (values === '') continue;
      parts.push(
        `{"name":${JSON.stringify(descriptor.name)},"labels":${labelsJson(descriptor.labels, labelValues)},"values":[${values}]}`,
      );
    }
  }
  return `${head}${parts.join(',')}]}`;
}

/** The points of an answer: the timestamp each one reports (s) and the snapshot it reads. */
interface Points {
  timesSec: number[];
  seqs: number[];
}

function latestPoint(store: MetricStore): Points {
  const seq = store.newestSeq;
  return { timesSec: [toUnixSeconds(store.timeMs(seq))], seqs: [seq] };
}

/**
 * Points `t_k = end − (n − 1 − k)·I`, `n = max(1, floor(min(T, range) / I))`; each reads the newest
 * snapshot at or before `t_k` (sample and hold). Points before the oldest snapshot are left out.
 */
function timeSeriesPoints(store: MetricStore, retention: Retention, query: MetricsQuery): Points {
  const rangeSec = Math.min(query.timerangeSec ?? retention.rangeSec, retention.rangeSec);
  const intervalSec = query.intervalSec ?? retention.intervalSec;
  const count = Math.max(1, Math.floor(rangeSec / intervalSec));
  const maxPoints = Math.max(MAX_POINTS_PER_SERIES, store.capacity);
  if (count > maxPoints) {
    throw new QueryError([
      `interval_sec: ${intervalSec} s over ${rangeSec} s gives ${count} points per series, at most ${maxPoints} are allowed`,
    ]);
  }
  const end = toUnixSeconds(store.timeMs(store.newestSeq));
  const points: Points = { timesSec: [], seqs: [] };
  for (let k = 0; k < count; k++) {
    const time = end - (count - 1 - k) * intervalSec;
    const seq = newestSnapshotAtOrBefore(store, time);
    if (seq === undefined) continue;
    points.timesSec.push(time);
    points.seqs.push(seq);
  }
  return points;
}

/** Binary search over the retained snapshots (their times only grow). */
function newestSnapshotAtOrBefore(store: MetricStore, timeSec: number): number | undefined {
  let low = store.oldestSeq;
  let high = store.newestSeq;
  if (toUnixSeconds(store.timeMs(low)) > timeSec) return undefined;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (toUnixSeconds(store.timeMs(middle)) <= timeSec) low = middle;
    else high = middle - 1;
  }
  return low;
}

/**
 * `[t,v]` pairs of one series; a point whose snapshot has no sample of this series (the series
 * did not exist then) is left out. Empty string when no point remains.
 */
function formatValues(store: MetricStore, id: number, points: Points): string {
  let text = '';
  for (let k = 0; k < points.seqs.length; k++) {
    const value = store.value(id, points.seqs[k]!);
    if (Number.isNaN(value)) continue;
    text += `${text === '' ? '' : ','}[${points.timesSec[k]!},${formatNumber(value)}]`;
  }
  return text;
}

function labelsJson(names: readonly string[], values: readonly string[]): string {
  let text = '{';
  for (let i = 0; i < names.length; i++) {
    text += `${i === 0 ? '' : ','}${JSON.stringify(names[i])}:${JSON.stringify(values[i] ?? '')}`;
  }
  return `${text}}`;
}

/** Snapshot time as the integer Unix seconds the API reports. */
export function toUnixSeconds(timeMs: number): number {
  return Math.floor(timeMs / 1000);
}
