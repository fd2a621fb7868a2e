/**
 * Metric queries (docs/metrics.md#post-apiv3metrics-the-query) and the shapes the charts draw: series aligned on one time axis,
 * counters turned into rates, and counters turned into totals per calendar day or month.
 */
import type { ApiClient } from './api.js';

export interface SeriesAnswer {
  name: string;
  labels: Record<string, string>;
  /** `[unix seconds, value]`, oldest first. */
  values: [number, number][];
}

export interface MetricsAnswer {
  timerange_sec: number;
  interval_sec: number;
  metrics: SeriesAnswer[];
}

export interface QueryItem {
  name: string;
  labels?: Record<string, string>;
}

/** Latest values (no `timerange_sec`). */
export function queryLatest(api: ApiClient, items: QueryItem[]): Promise<MetricsAnswer> {
  return api.request<MetricsAnswer>('POST', '/api/v3/metrics', { metrics: items });
}

/** A time series over the last `rangeSec` seconds, one point every `intervalSec`. */
export function querySeries(
  api: ApiClient,
  items: QueryItem[],
  rangeSec: number,
  intervalSec: number,
): Promise<MetricsAnswer> {
  return api.request<MetricsAnswer>('POST', '/api/v3/metrics', {
    timerange_sec: rangeSec,
    interval_sec: intervalSec,
    metrics: items,
  });
}

/** The series of `name` whose labels include every given label value. */
export function pick(
  answer: MetricsAnswer,
  name: string,
  labels: Record<string, string> = {},
): SeriesAnswer[] {
  return answer.metrics.filter(
    (series) =>
      series.name === name && Object.entries(labels).every(([key, value]) => series.labels[key] === value),
  );
}

/** The newest value of the first matching series, or undefined. */
export function latestOf(
  answer: MetricsAnswer,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const series = pick(answer, name, labels)[0];
  return series?.values[series.values.length - 1]?.[1];
}

/** Columns for a chart: one shared time axis (seconds) and one value column per series (null = gap). */
export interface AlignedData {
  times: number[];
  columns: (number | null)[][];
}

/**
 * Aligns several series on the union of their timestamps. Series of one query answer usually share
 * their timestamps exactly (docs/metrics.md#post-apiv3metrics-the-query puts every point at t_k), so that case copies the values
 * without building the union.
 */
export function align(seriesList: readonly (readonly [number, number][])[]): AlignedData {
  const first = seriesList.find((values) => values.length > 0) ?? [];
  if (seriesList.every((values) => values.length === 0 || sameTimes(values, first))) {
    return {
      times: first.map(([time]) => time),
      columns: seriesList.map((values) =>
        values.length === 0
          ? new Array<number | null>(first.length).fill(null)
          : values.map(([, value]) => value),
      ),
    };
  }
  const timeSet = new Set<number>();
  for (const values of seriesList) for (const [time] of values) timeSet.add(time);
  const times = [...timeSet].sort((a, b) => a - b);
  const index = new Map(times.map((time, i) => [time, i]));
  const columns = seriesList.map((values) => {
    const column: (number | null)[] = new Array<number | null>(times.length).fill(null);
    for (const [time, value] of values) column[index.get(time)!] = value;
    return column;
  });
  return { times, columns };
}

function sameTimes(a: readonly [number, number][], b: readonly [number, number][]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i]![0] !== b[i]![0]) return false;
  return true;
}

/**
 * A cumulative counter as a rate per second between consecutive points. A drop (the server or
 * the interface restarted) restarts the count, so that step is the new value itself.
 */
export function rateOf(values: readonly [number, number][], factor = 1): [number, number][] {
  const rates: [number, number][] = [];
  for (let i = 1; i < values.length; i++) {
    const [t0, v0] = values[i - 1]!;
    const [t1, v1] = values[i]!;
    if (t1 <= t0) continue;
    const delta = v1 >= v0 ? v1 - v0 : v1;
    rates.push([t1, (delta / (t1 - t0)) * factor]);
  }
  return rates;
}

/** One bucket of a counter's growth: a calendar day or month in the browser's zone. */
export interface PeriodTotal {
  /** `2026-11-23` or `2026-11`. */
  label: string;
  total: number;
}

/**
 * How much a cumulative counter grew per calendar day or month (browser time zone): the growth
 * between consecutive points is booked to the period of the later point; a drop counts as growth
 * from zero (restart).
 */
export function totalsPer(period: 'day' | 'month', values: readonly [number, number][]): PeriodTotal[] {
  const totals = new Map<string, number>();
  for (let i = 1; i < values.length; i++) {
    const v0 = values[i - 1]![1];
    const [t1, v1] = values[i]!;
    const delta = v1 >= v0 ? v1 - v0 : v1;
    const key = periodLabel(period, t1);
    totals.set(key, (totals.get(key) ?? 0) + delta);
  }
  return [...totals].map(([label, total]) => ({ label, total }));
}

function periodLabel(period: 'day' | 'month', timeSec: number): string {
  const date = new Date(timeSec * 1000);
  const month = String(date.getMonth() + 1).padStart(2, '0');
  if (period === 'month') return `${date.getFullYear()}-${month}`;
  return `${date.getFullYear()}-${month}-${String(date.getDate()).padStart(2, '0')}`;
}
