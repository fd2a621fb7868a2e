import { describeSeries, pointsBetween, type MetricHistory } from '../../../src/monitor/history/index.js';
import { answerHead, labelsJson, METRICS_IN_NAME_ORDER } from '../../../src/monitor/query/answer-text.js';
import { formatNumber } from '../../../src/monitor/query/format-number.js';
import type { MetricsQuery } from '../../../src/monitor/query/parse.js';
import {
  historyRangeOf,
  planPoints,
  pointCountOf,
  stepOf,
  tierStepOf,
  toUnixSeconds,
  type HistoryRange,
  type PointPlan,
  type Retention,
} from '../../../src/monitor/query/point-plan.js';
import { selectionOf, type SeriesSelection } from '../../../src/monitor/query/select.js';
import { CATALOG, compareLabelValues, type MetricStore } from '../../../src/monitor/store/index.js';

/*
 * The plain evaluation of a metrics query, as the server had it beside the fragment assembler
 * until one engine answered every query (src/monitor/query/assemble-answer.ts): every point of
 * every matching series formatted for each answer, nothing kept between answers. Kept here as the
 * reference of the differential tests (query-differential, query-history-differential,
 * answer-memory): the server's answers must be these bytes.
 */

/**
 * The JSON answer of a query against what the store holds now
 * (docs/metrics.md#post-apiv3metrics-the-query). Latest-value mode when `timerangeSec` is not
 * given, time series (sample and hold) otherwise; a range past the raw window reads `history` too.
 */
export async function evaluatePlainly(
  store: MetricStore,
  retention: Retention,
  query: MetricsQuery,
  history?: MetricHistory,
): Promise<string> {
  const selection = selectionOf(query);
  if (store.snapshotCount === 0) return `${answerHead(retention)}]}`;
  const historyRange = historyRangeOf(query, retention, store, history);
  if (historyRange !== undefined) {
    const objects = await evaluateHistoryObjects(store, history!, historyRange, selection);
    return `${answerHead(historyRange)}${objects.join(',')}]}`;
  }
  const head = answerHead(retention);
  const points =
    query.timerangeSec === undefined
      ? latestPoint(store)
      : planPoints(store, stepOf(query, retention), pointCountOf(query, retention, store));
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

/** The one point of latest-value mode: the newest snapshot, with its time. */
function latestPoint(store: MetricStore): PointPlan {
  const seq = store.newestSeq;
  return {
    intervalSec: 0,
    timesSec: Float64Array.of(toUnixSeconds(store.timeMs(seq))),
    seqs: Float64Array.of(seq),
  };
}

/**
 * `[t,v]` pairs of one series; a point before the window, or whose snapshot has no sample of this
 * series (the series did not exist then), is left out. Empty string when no point remains.
 */
function formatValues(store: MetricStore, id: number, points: PointPlan): string {
  let text = '';
  for (let k = 0; k < points.seqs.length; k++) {
    const seq = points.seqs[k]!;
    if (seq < 0) continue;
    const value = store.value(id, seq);
    if (Number.isNaN(value)) continue;
    text += `${text === '' ? '' : ','}[${points.timesSec[k]!},${formatNumber(value)}]`;
  }
  return text;
}

/** One series of a history-served answer: its raw row (if the store still holds it) and its tier points. */
interface Row {
  metricIndex: number;
  labelValues: readonly string[];
  /** -1: the store no longer (or never) held it. */
  storeId: number;
  /** Tier step start → value. */
  tierValues: Map<number, number>;
}

/**
 * The series objects of a time-series answer whose range goes past the raw window: every matching series the
 * store holds or the tier has points for in the range, in name then label order; per point `t_k`
 * the raw snapshot's value when `t_k` is inside the raw window, else the tier's point of the step
 * that holds `t_k`. A series without any point is left out.
 */
async function evaluateHistoryObjects(
  store: MetricStore,
  history: MetricHistory,
  range: HistoryRange,
  selection: SeriesSelection,
): Promise<string[]> {
  const { tier } = range;
  const plan = planPoints(store, range.intervalSec, range.count);
  const fromSec = tierStepOf(tier, plan.timesSec[0]!);
  const toSec = plan.timesSec[plan.timesSec.length - 1]!;
  const rows = new Map<string, Row>();
  for (const metricIndex of METRICS_IN_NAME_ORDER) {
    if (!selection.wantsMetric(metricIndex)) continue;
    for (const id of store.seriesOf(metricIndex)) {
      const labelValues = store.labelsOf(id);
      if (!selection.matches(metricIndex, labelValues)) continue;
      const key = describeSeries(metricIndex, labelValues).key;
      rows.set(key, { metricIndex, labelValues, storeId: id, tierValues: new Map() });
    }
  }
  const read = await history.read(
    tier,
    (s) => selection.matches(s.metricIndex, s.labelValues),
    fromSec,
    toSec,
  );
  for (const { series, pieces } of read.values()) {
    let row = rows.get(series.key);
    if (row === undefined) {
      row = {
        metricIndex: series.metricIndex,
        labelValues: series.labelValues,
        storeId: -1,
        tierValues: new Map(),
      };
      rows.set(series.key, row);
    }
    const { timesSec, values } = pointsBetween(pieces, fromSec, toSec);
    for (let i = 0; i < timesSec.length; i++) row.tierValues.set(timesSec[i]!, values[i]!);
  }
  const ordered = [...rows.values()].sort(
    (a, b) =>
      METRICS_IN_NAME_ORDER.indexOf(a.metricIndex) - METRICS_IN_NAME_ORDER.indexOf(b.metricIndex) ||
      compareLabelValues(a.labelValues, b.labelValues),
  );
  const objects: string[] = [];
  for (const row of ordered) {
    let text = '';
    for (let k = 0; k < plan.timesSec.length; k++) {
      const timeSec = plan.timesSec[k]!;
      const seq = plan.seqs[k]!;
      let value: number;
      if (seq >= 0) value = row.storeId >= 0 ? store.value(row.storeId, seq) : Number.NaN;
      else value = row.tierValues.get(tierStepOf(tier, timeSec)) ?? Number.NaN;
      if (!Number.isFinite(value)) continue;
      text += `${text === '' ? '' : ','}[${timeSec},${formatNumber(value)}]`;
    }
    if (text === '') continue;
    const descriptor = CATALOG[row.metricIndex]!;
    objects.push(
      `{"name":${JSON.stringify(descriptor.name)},"labels":${labelsJson(descriptor.labels, row.labelValues)},"values":[${text}]}`,
    );
  }
  return objects;
}
