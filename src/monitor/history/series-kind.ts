import { CATALOG } from '../store/index.js';
import type { ColumnPrediction } from './column-codec.js';

/**
 * Gauges keep two values per point, the mean and the max over the step (a chart draws the mean
 * and may shade up to the max); counters keep one, the value at the end of the step (a rate or a
 * total over any range is a difference of two such values). The API answers the mean for a gauge
 * and the end value for a counter.
 */
export type SeriesKind = 'gauge' | 'counter';

/** Metrics whose every series only grows (since boot, since the server started, since a process started). */
const COUNTER_METRICS: ReadonlySet<string> = new Set([
  'net_rx',
  'net_tx',
  'session_rxbytes',
  'session_txbytes',
  'session_total',
  'ffmpeg_process',
  'restream_process_states',
  'uptime_uptime',
]);

/**
 * `name` label values that only grow in `restream_process` and `restream_io` (docs/processes.md#metrics-of-processes): running
 * totals, and `uptime`, seconds since the last state change (its end value is what a chart
 * needs, and it grows at a steady rate, which the counter encoding stores in one bit).
 */
const COUNTER_VALUE_NAMES: Readonly<Record<string, ReadonlySet<string>>> = {
  restream_process: new Set(['frame', 'packet', 'size', 'time', 'drop', 'dup', 'uptime']),
  restream_io: new Set(['frame', 'packet', 'size']),
};

/** The kind of a series: by its metric, and for the per-process value metrics by its `name` label. */
export function seriesKind(metricIndex: number, labelValues: readonly string[]): SeriesKind {
  const descriptor = CATALOG[metricIndex];
  if (descriptor === undefined) return 'gauge';
  if (COUNTER_METRICS.has(descriptor.name)) return 'counter';
  const names = COUNTER_VALUE_NAMES[descriptor.name];
  if (names === undefined) return 'gauge';
  const nameIndex = (descriptor.labels as readonly string[]).indexOf('name');
  return names.has(labelValues[nameIndex] ?? '') ? 'counter' : 'gauge';
}

/** Column layout per kind: gauges [mean, max] predicted flat; counters [end value] predicted at a steady rate. */
export const KIND_COLUMNS: Readonly<Record<SeriesKind, readonly ColumnPrediction[]>> = {
  gauge: ['hold', 'hold'],
  counter: ['rate'],
};

/** One series as the history knows it: identity and kind. Shared by the tiers. */
export interface SeriesInfo {
  /** Unambiguous identity: metric name, then each label value length-prefixed. */
  readonly key: string;
  readonly metricIndex: number;
  readonly labelValues: readonly string[];
  readonly kind: SeriesKind;
}

export function describeSeries(metricIndex: number, labelValues: readonly string[]): SeriesInfo {
  const name = CATALOG[metricIndex]?.name ?? `#${metricIndex}`;
  let key = name;
  for (const value of labelValues) key += `|${value.length}:${value}`;
  return { key, metricIndex, labelValues: labelValues.slice(), kind: seriesKind(metricIndex, labelValues) };
}
