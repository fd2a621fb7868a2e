import type { MetricHistory, Tier } from '../history/index.js';
import type { MetricStore } from '../store/index.js';
import { QueryError, type MetricsQuery } from './parse.js';

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
const MAX_POINTS_PER_SERIES = 10_000;

/**
 * The points of a time-series answer for one step `intervalSec` (docs/metrics.md#post-apiv3metrics-the-query): `t_k = end − (N − 1 −
 * k)·I` for `k = 0 … N−1`, each with the snapshot it reads (sample and hold), oldest first.
 *
 * For a fixed step and snapshot the times do not depend on how many points a query asks for: the
 * `n` points of a query are the last `n` of the plan. That is what lets one plan (and one encoded
 * text per series, see series-fragments.ts) serve every time range of the same step.
 */
export interface PointPlan {
  intervalSec: number;
  /** Unix seconds of each point. */
  timesSec: Float64Array;
  /** The snapshot each point reads; -1 = before the oldest retained snapshot (the point is left out). */
  seqs: Float64Array;
}

/** The step of a time-series query: `interval_sec`, or the collection interval when not given. */
export function stepOf(query: MetricsQuery, retention: Retention): number {
  return query.intervalSec ?? retention.intervalSec;
}

/**
 * Most points a query with this step can have: `max(1, floor(range / I))`, capped like every query.
 * A plan of this length serves every time range of the step.
 */
export function maxPointsOf(intervalSec: number, retention: Retention, store: MetricStore): number {
  return Math.min(Math.max(1, Math.floor(retention.rangeSec / intervalSec)), maxPointsAllowed(store));
}

/**
 * `n = max(1, floor(min(T, range) / I))` points per series for a time-series query; `QueryError`
 * when that is more than a query may ask for.
 */
export function pointCountOf(query: MetricsQuery, retention: Retention, store: MetricStore): number {
  const rangeSec = Math.min(query.timerangeSec ?? retention.rangeSec, retention.rangeSec);
  const intervalSec = stepOf(query, retention);
  const count = Math.max(1, Math.floor(rangeSec / intervalSec));
  const maxPoints = maxPointsAllowed(store);
  if (count > maxPoints) {
    throw new QueryError([
      `interval_sec: ${intervalSec} s over ${rangeSec} s gives ${count} points per series, at most ${maxPoints} are allowed`,
    ]);
  }
  return count;
}

/**
 * A time-series query whose range goes past the raw window, answered with the history's help
 * (docs/history.md#queries-which-tier-answers-which-range): the points inside the raw window read the raw snapshots as always,
 * the points before it read the finest tier whose retention covers the range (sample and hold:
 * the tier's point of the step that holds `t_k`; none there, the point is left out).
 */
export interface HistoryRange {
  tier: Tier;
  /** The range answered: `timerange_sec`, at most the longest retention (what the answer echoes). */
  rangeSec: number;
  /** `interval_sec`, or the tier's step widened until the range has at most the allowed points. */
  intervalSec: number;
  /** Points of this query: `max(1, floor(min(T, longest retention) / I))`. */
  count: number;
  /** Points of the longest range this tier answers at this step: the query's points are the last `count` of those. */
  maxCount: number;
}

/**
 * The history's part of a time-series query: undefined when there is no history or the range fits
 * the raw window (answered from the snapshots alone, as before). `QueryError` when the range at
 * `interval_sec` has more points than a query may ask for.
 */
export function historyRangeOf(
  query: MetricsQuery,
  retention: Retention,
  store: MetricStore,
  history: MetricHistory | undefined,
): HistoryRange | undefined {
  const timerangeSec = query.timerangeSec;
  if (history === undefined || timerangeSec === undefined || timerangeSec <= retention.rangeSec)
    return undefined;
  const longestSec = history.longestRetentionSec;
  if (longestSec <= retention.rangeSec) return undefined;
  const rangeSec = Math.min(timerangeSec, longestSec);
  const tier = history.tierFor(rangeSec)!;
  const maxPoints = maxPointsAllowed(store);
  const stepSec = tier.options.stepSec;
  const intervalSec = query.intervalSec ?? stepSec * Math.max(1, Math.ceil(rangeSec / (stepSec * maxPoints)));
  const count = Math.max(1, Math.floor(rangeSec / intervalSec));
  if (count > maxPoints) {
    throw new QueryError([
      `interval_sec: ${intervalSec} s over ${rangeSec} s gives ${count} points per series, at most ${maxPoints} are allowed`,
    ]);
  }
  const maxCount = Math.min(Math.max(1, Math.floor(tier.options.retentionSec / intervalSec)), maxPoints);
  return { tier, rangeSec, intervalSec, count, maxCount };
}

/** The start of the tier step that holds `timeSec`: the point a history-served `t_k` reads. */
export function tierStepOf(tier: Tier, timeSec: number): number {
  const stepSec = tier.options.stepSec;
  return timeSec - (((timeSec % stepSec) + stepSec) % stepSec);
}

function maxPointsAllowed(store: MetricStore): number {
  return Math.max(MAX_POINTS_PER_SERIES, store.capacity);
}

/**
 * The last `count` points ending at the newest snapshot. The store must hold a snapshot.
 */
export function planPoints(store: MetricStore, intervalSec: number, count: number): PointPlan {
  const end = toUnixSeconds(store.timeMs(store.newestSeq));
  const plan: PointPlan = { intervalSec, timesSec: new Float64Array(count), seqs: new Float64Array(count) };
  for (let k = 0; k < count; k++) {
    const time = end - (count - 1 - k) * intervalSec;
    plan.timesSec[k] = time;
    plan.seqs[k] = newestSnapshotAtOrBefore(store, time);
  }
  return plan;
}

/** Binary search over the retained snapshots (their times only grow); -1 when all are later. */
function newestSnapshotAtOrBefore(store: MetricStore, timeSec: number): number {
  let low = store.oldestSeq;
  let high = store.newestSeq;
  if (toUnixSeconds(store.timeMs(low)) > timeSec) return -1;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (toUnixSeconds(store.timeMs(middle)) <= timeSec) low = middle;
    else high = middle - 1;
  }
  return low;
}

/** Snapshot time as the integer Unix seconds the API reports. */
export function toUnixSeconds(timeMs: number): number {
  return Math.floor(timeMs / 1000);
}
