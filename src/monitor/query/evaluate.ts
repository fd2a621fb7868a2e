import { CATALOG, type MetricStore } from '../store/index.js';
import type { MetricHistory } from '../history/index.js';
import { answerHead, labelsJson, METRICS_IN_NAME_ORDER, SERIES_PER_DEADLINE_CHECK } from './answer-text.js';
import type { QueryDeadline } from './deadline.js';
import { evaluateHistoryObjects } from './evaluate-history.js';
import { formatNumber } from './format-number.js';
import type { MetricsQuery } from './parse.js';
import {
  historyRangeOf,
  planPoints,
  pointCountOf,
  stepOf,
  toUnixSeconds,
  type PointPlan,
  type Retention,
} from './point-plan.js';
import type { SeriesSelection } from './select.js';

/**
 * The JSON answer of a query against what the store holds now (docs/metrics.md#post-apiv3metrics-the-query), as text: the plain
 * evaluation, which formats every point of every matching series for this one answer. The server
 * answers from encoded fragments instead (assemble-answer.ts) and comes here only when those
 * decline; the tests compare both byte for byte. Latest-value mode when `timerangeSec` is not given,
 * time series (sample and hold) otherwise; a range past the raw window reads `history` too
 * (evaluate-history.ts).
 */
export async function evaluateQuery(
  store: MetricStore,
  retention: Retention,
  query: MetricsQuery,
  selection: SeriesSelection,
  deadline?: QueryDeadline,
  history?: MetricHistory,
): Promise<string> {
  if (store.snapshotCount === 0) return `${answerHead(retention)}]}`;
  const historyRange = historyRangeOf(query, retention, store, history);
  if (historyRange !== undefined) {
    const objects = await evaluateHistoryObjects(store, history!, historyRange, selection, deadline);
    return `${answerHead(historyRange)}${objects.join(',')}]}`;
  }
  const head = answerHead(retention);
  const points =
    query.timerangeSec === undefined
      ? latestPoint(store)
      : planPoints(store, stepOf(query, retention), pointCountOf(query, retention, store));
  const parts: string[] = [];
  let seen = 0;
  for (const metricIndex of METRICS_IN_NAME_ORDER) {
    if (!selection.wantsMetric(metricIndex)) continue;
    const descriptor = CATALOG[metricIndex]!;
    for (const id of store.seriesOf(metricIndex)) {
      if (++seen % SERIES_PER_DEADLINE_CHECK === 0) deadline?.check();
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
