import { CATALOG, compareLabelValues, type MetricStore } from '../store/index.js';
import { describeSeries, pointsBetween, type MetricHistory } from '../history/index.js';
import type { QueryDeadline } from './deadline.js';
import { labelsJson, METRICS_IN_NAME_ORDER, SERIES_PER_DEADLINE_CHECK } from './answer-text.js';
import { formatNumber } from './format-number.js';
import { planPoints, tierStepOf, type HistoryRange } from './point-plan.js';
import type { SeriesSelection } from './select.js';

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
 * The series objects of a time-series answer whose range goes past the raw window, the plain way
 * (the reference the fragments are tested against, see evaluate.ts): every matching series the
 * store holds or the tier has points for in the range, in name then label order; per point `t_k`
 * the raw snapshot's value when `t_k` is inside the raw window, else the tier's point of the step
 * that holds `t_k`. A series without any point is left out.
 */
export async function evaluateHistoryObjects(
  store: MetricStore,
  history: MetricHistory,
  range: HistoryRange,
  selection: SeriesSelection,
  deadline?: QueryDeadline,
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
  deadline?.check();
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
  let seen = 0;
  for (const row of ordered) {
    if (++seen % SERIES_PER_DEADLINE_CHECK === 0) deadline?.check();
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
